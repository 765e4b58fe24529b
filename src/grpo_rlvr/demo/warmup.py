"""A short supervised warmup so the tiny model succeeds *sometimes* before RL.

RL sharpens what a model can already do; it does not install a skill from nothing. The warmup is kept short on
purpose: too few steps leave the base success rate at zero (no GRPO signal), too many saturate the task
(nothing left to learn). Loss is on the completion tokens only.
"""

from __future__ import annotations

import logging
import time

from grpo_rlvr import work_trace

log = logging.getLogger(__name__)
PROGRESS_EVERY = 10   # warmup steps between progress reports

ANSWER_OPEN, ANSWER_CLOSE = "<answer>", "</answer>"


def _answer_span(tokenizer, completion: str) -> tuple[int, int]:
    """Token positions [start, end) of the text between ``<answer>`` and ``</answer>`` in ``completion``."""
    start = completion.find(ANSWER_OPEN)
    end = completion.find(ANSWER_CLOSE, start + 1)
    if start < 0 or end < 0:
        return 0, 0
    start += len(ANSWER_OPEN)
    count = lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])  # noqa: E731
    return count(completion[:start]), count(completion[:end])


def sft_warmup(model, tokenizer, rows: list[dict], completions: list[str], *, steps: int, lr: float,
               batch_size: int, seed: int, label_smoothing: float = 0.0, answer_smoothing: float = 0.0,
               progress=None) -> list[float]:
    """Train ``model`` in place for ``steps`` AdamW steps on (prompt, completion) pairs; returns the losses.

    ``label_smoothing`` > 0 keeps the model's distribution wide on every completion token. ``answer_smoothing``
    smooths only the answer's tokens (between ``<answer>`` and ``</answer>``) and trains the rest plainly: the
    model writes the format reliably and learns which answer is right (the mode), while sampling at temperature
    1 still often misses it, the regime where RL's sharpening pays off and the format reward leaves little to
    win. ``progress(step, steps, loss, seconds)`` is called every ``PROGRESS_EVERY`` steps and at the last.
    """
    prompt_ids = [tokenizer.apply_chat_template(r["prompt"], add_generation_prompt=True, tokenize=True)
                  for r in rows]
    prompt_ids = [p["input_ids"] if isinstance(p, dict) or hasattr(p, "keys") else p for p in prompt_ids]
    target_ids = [tokenizer(c, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
                  for c in completions]
    spans = [_answer_span(tokenizer, c) for c in completions] if answer_smoothing else None
    examples = []
    for i, (p, t) in enumerate(zip(prompt_ids, target_ids, strict=True)):
        smoothed = None if spans is None else (len(p) + spans[i][0], len(p) + spans[i][1])
        examples.append((p + t, [False] * len(p) + [True] * len(t), smoothed))
    return _train(model, tokenizer, examples, steps=steps, lr=lr, batch_size=batch_size, seed=seed,
                  label_smoothing=label_smoothing, answer_smoothing=answer_smoothing if spans else None,
                  progress=progress)


def sft_warmup_chats(model, tokenizer, conversations: list[list[dict]], *, steps: int, lr: float, batch_size: int,
                     seed: int, label_smoothing: float = 0.0, tools: list | None = None,
                     progress=None) -> list[float]:
    """``sft_warmup`` on whole conversations (a tool call, the tool's reply, the answer after it): the loss is on
    the assistant's own turns only, as the chat template marks them (``{% generation %}``), so the model learns to
    call and to answer from the reply, never to write the reply itself (which TRL masks out of GRPO's loss too)."""
    examples = []
    for conv in conversations:
        out = tokenizer.apply_chat_template(conv, tools=tools, tokenize=True, return_dict=True,
                                            return_assistant_tokens_mask=True)
        mask = [bool(m) for m in out["assistant_masks"]]
        if not any(mask):
            raise ValueError("the chat template marks no assistant tokens ({% generation %}): nothing to train on")
        examples.append((list(out["input_ids"]), mask, None))
    return _train(model, tokenizer, examples, steps=steps, lr=lr, batch_size=batch_size, seed=seed,
                  label_smoothing=label_smoothing, answer_smoothing=None, progress=progress)


def _train(model, tokenizer, examples: list[tuple[list[int], list[bool], tuple[int, int] | None]], *, steps: int,
           lr: float, batch_size: int, seed: int, label_smoothing: float, answer_smoothing: float | None,
           progress=None) -> list[float]:
    """The warmup's loop over ``examples`` (token ids, which of them train, the answer's span to smooth by
    ``answer_smoothing`` instead of ``label_smoothing``); batches drawn with ``seed``, padded on the right."""
    import torch
    import torch.nn.functional as F

    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    work_trace.event("training_start", kind="sft", steps=steps)
    model.train()
    losses, t0 = [], time.monotonic()
    for step in range(1, steps + 1):
        idx = torch.randint(len(examples), (batch_size,), generator=g).tolist()
        width = max(len(examples[i][0]) for i in idx)
        input_ids = torch.full((batch_size, width), tokenizer.pad_token_id)
        labels = torch.full((batch_size, width), -100)
        smoothing = torch.full((batch_size, width), label_smoothing)
        attn = torch.zeros((batch_size, width), dtype=torch.long)
        for j, i in enumerate(idx):
            ids, trained, span = examples[i]
            input_ids[j, : len(ids)] = torch.tensor(ids)
            attn[j, : len(ids)] = 1
            labels[j, : len(ids)] = torch.where(torch.tensor(trained), torch.tensor(ids), -100)
            if span is not None:
                smoothing[j, span[0] : span[1]] = answer_smoothing
        logits = model(input_ids=input_ids, attention_mask=attn).logits[:, :-1]
        if answer_smoothing is None:
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1),
                                   ignore_index=-100, label_smoothing=label_smoothing)
        else:  # cross-entropy against (1 - eps) one-hot + eps uniform, eps per token (as F.cross_entropy does)
            logp = F.log_softmax(logits, dim=-1)
            target, eps = labels[:, 1:], smoothing[:, 1:]
            keep = target != -100
            nll = -logp.gather(-1, target.clamp(min=0).unsqueeze(-1)).squeeze(-1)
            loss = (((1 - eps) * nll + eps * -logp.mean(-1))[keep]).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.item())
        if progress is not None and (step % PROGRESS_EVERY == 0 or step == steps):
            progress(step, steps, losses[-1], time.monotonic() - t0)
    model.eval()
    return losses
