"""A short supervised warmup so the tiny model succeeds *sometimes* before RL.

RL sharpens what a model can already do; it does not install a skill from nothing. The warmup is kept short on
purpose: too few steps leave the base success rate at zero (no GRPO signal), too many saturate the task
(nothing left to learn). Loss is on the completion tokens only.
"""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)


def sft_warmup(model, tokenizer, rows: list[dict], completions: list[str], *, steps: int, lr: float,
               batch_size: int, seed: int, label_smoothing: float = 0.0) -> list[float]:
    """Train ``model`` in place for ``steps`` AdamW steps on (prompt, completion) pairs; returns the losses.

    ``label_smoothing`` > 0 keeps the model's distribution wide: it learns which answer is right (the mode)
    while sampling at temperature 1 still often misses, the regime where RL's sharpening pays off.
    """
    import torch
    import torch.nn.functional as F

    g = torch.Generator().manual_seed(seed)
    prompt_ids = [tokenizer.apply_chat_template(r["prompt"], add_generation_prompt=True, tokenize=True)
                  for r in rows]
    prompt_ids = [p["input_ids"] if isinstance(p, dict) or hasattr(p, "keys") else p for p in prompt_ids]
    target_ids = [tokenizer(c, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
                  for c in completions]
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    model.train()
    losses = []
    for _ in range(steps):
        idx = torch.randint(len(rows), (batch_size,), generator=g).tolist()
        seqs = [prompt_ids[i] + target_ids[i] for i in idx]
        width = max(len(s) for s in seqs)
        input_ids = torch.full((batch_size, width), tokenizer.pad_token_id)
        labels = torch.full((batch_size, width), -100)
        attn = torch.zeros((batch_size, width), dtype=torch.long)
        for j, i in enumerate(idx):
            s = seqs[j]
            input_ids[j, : len(s)] = torch.tensor(s)
            attn[j, : len(s)] = 1
            start = len(prompt_ids[i])
            labels[j, start : len(s)] = torch.tensor(target_ids[i])
        logits = model(input_ids=input_ids, attention_mask=attn).logits[:, :-1]
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1), ignore_index=-100,
                               label_smoothing=label_smoothing)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.item())
    model.eval()
    return losses
