"""Sampling shared by preflight, inspect, the demo and evaluation.

Completions are drawn with the brief's chat template and the same sampling parameters the training run uses
(temperature, top_p, ``max_completion_length``), batched and seeded: with vLLM's offline engine when vLLM is
installed and a GPU is present (``generate_vllm``), else with transformers generation on CPU or GPU
(``generate``). Both return the same ``Sample`` list, prompt-major.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SamplingParams:
    temperature: float = 1.0
    top_p: float = 1.0
    max_completion_length: int = 256
    seed: int = 3407
    batch_size: int = 64

    def __post_init__(self):
        from grpo_rlvr.errors import ConfigError

        if not isinstance(self.batch_size, int) or self.batch_size < 1:
            raise ConfigError(f"--batch-size: {self.batch_size!r}; use a positive number of sequences")
        if self.max_completion_length < 1:
            raise ConfigError(f"max_completion_length: {self.max_completion_length}; must be ≥ 1")


@dataclass(frozen=True)
class Sample:
    prompt_index: int
    prompt: object          # str, or a list of chat messages
    completion: str
    truncated: bool         # hit max_completion_length without EOS
    num_tokens: int


def prompt_text(prompt) -> str:
    """The user-visible text of a prompt: the last user message for chat prompts, the string otherwise."""
    if isinstance(prompt, str):
        return prompt
    users = [m.get("content", "") for m in prompt if isinstance(m, dict) and m.get("role") == "user"]
    return users[-1] if users else ""


def encode_prompts(tokenizer, prompts: Sequence) -> list[list[int]]:
    """Token ids of each prompt, through the chat template for conversational prompts."""
    out = []
    for p in prompts:
        if isinstance(p, str):
            out.append(tokenizer(p, add_special_tokens=False)["input_ids"])
        else:
            ids = tokenizer.apply_chat_template(list(p), add_generation_prompt=True, tokenize=True)
            out.append(list(ids["input_ids"] if hasattr(ids, "keys") else ids))
    return out


def generate(model, tokenizer, prompts: Sequence, n: int, params: SamplingParams,
             progress: Callable[[int, int], None] | None = None) -> list[Sample]:
    """Draw ``n`` completions for each prompt. Samples are ordered prompt-major: prompt 0's n, then prompt 1's.

    Args:
        model: a causal LM (already on its device, eval mode is set here).
        tokenizer: its tokenizer; pad and eos ids must be set.
        prompts: strings or chat-message lists.
        n: completions per prompt.
        params: sampling parameters; ``temperature == 0`` means greedy.
        progress: called with (done, total) after each batch.
    """
    import torch

    model.eval()
    device = next(model.parameters()).device
    encoded = encode_prompts(tokenizer, prompts)
    jobs = [(i, ids) for i, ids in enumerate(encoded) for _ in range(n)]
    torch.manual_seed(params.seed)
    pad, eos = tokenizer.pad_token_id, tokenizer.eos_token_id
    samples: list[Sample] = []
    for start in range(0, len(jobs), params.batch_size):
        batch = jobs[start : start + params.batch_size]
        width = max(len(ids) for _, ids in batch)
        input_ids = torch.full((len(batch), width), pad, dtype=torch.long)
        attn = torch.zeros((len(batch), width), dtype=torch.long)
        for row, (_, ids) in enumerate(batch):  # left padding
            input_ids[row, width - len(ids):] = torch.tensor(ids)
            attn[row, width - len(ids):] = 1
        greedy = params.temperature <= 0
        with torch.no_grad():
            out = model.generate(
                input_ids=input_ids.to(device), attention_mask=attn.to(device),
                max_new_tokens=params.max_completion_length,
                do_sample=not greedy,
                temperature=None if greedy else params.temperature,
                top_p=None if greedy else params.top_p,
                top_k=None if greedy else 0,
                pad_token_id=pad, eos_token_id=eos,
            )
        for row, (pi, _) in enumerate(batch):
            gen = out[row, width:].tolist()
            stopped = eos in gen
            if stopped:
                gen = gen[: gen.index(eos) + 1]
            text = tokenizer.decode(gen, skip_special_tokens=True)
            samples.append(Sample(pi, prompts[pi], text, truncated=not stopped, num_tokens=len(gen)))
        if progress:
            progress(min(start + params.batch_size, len(jobs)), len(jobs))
    return samples


def vllm_available() -> bool:
    """vLLM is installed and a CUDA GPU is visible (vLLM's offline engine needs one)."""
    import importlib.util

    if importlib.util.find_spec("vllm") is None:
        return False
    import torch

    return torch.cuda.is_available()


def generate_vllm(model_path: str, tokenizer, prompts: Sequence, n: int, params: SamplingParams,
                  progress: Callable[[int, int], None] | None = None, llm=None) -> list[Sample]:
    """Draw ``n`` completions per prompt with vLLM's offline engine (same order and fields as ``generate``).

    Args:
        model_path: the model vLLM loads (ignored when ``llm`` is given).
        tokenizer: the brief's tokenizer; prompts are encoded with its chat template, as TRL does.
        llm: an existing ``vllm.LLM`` to reuse.
    """
    import vllm

    engine = llm or vllm.LLM(model=model_path, seed=params.seed, gpu_memory_utilization=0.5)
    sp = vllm.SamplingParams(n=n, temperature=params.temperature, top_p=params.top_p,
                             max_tokens=params.max_completion_length, seed=params.seed)
    encoded = encode_prompts(tokenizer, prompts)
    outputs = engine.generate([{"prompt_token_ids": ids} for ids in encoded], sampling_params=sp, use_tqdm=False)
    samples: list[Sample] = []
    for pi, out in enumerate(outputs):
        for c in out.outputs:
            samples.append(Sample(pi, prompts[pi], tokenizer.decode(list(c.token_ids), skip_special_tokens=True),
                                  truncated=c.finish_reason == "length", num_tokens=len(c.token_ids)))
    if progress:
        progress(len(samples), len(prompts) * n)
    return samples


def draw(brief, prompts: Sequence, n: int, params: SamplingParams, model=None, tokenizer=None,
         progress: Callable[[int, int], None] | None = None) -> tuple[list[Sample], str, object]:
    """Sample for preflight and inspect: the given model with transformers; else vLLM when available; else
    the brief's model with transformers. Returns the samples, the engine used and the tokenizer."""
    if model is None and vllm_available() and not brief.model.adapter_base:  # vLLM loads merged weights only
        from grpo_rlvr.runtime.model_loading import load_tokenizer

        tok = load_tokenizer(brief.model)
        return generate_vllm(brief.model.resolved, tok, prompts, n, params, progress), "vllm", tok
    if model is None and brief.model.adapter_base:
        log.info("sampling the adapter %s with transformers: vLLM needs merged weights (grpo-rlvr merge)",
                 brief.model.name_or_path)
    if model is None:
        from grpo_rlvr.runtime.model_loading import load_model_and_tokenizer

        model, tokenizer = load_model_and_tokenizer(brief)
    return generate(model, tokenizer, prompts, n, params, progress), "transformers", tokenizer
