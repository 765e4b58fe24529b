"""Sampling shared by preflight, inspect, the demo and evaluation.

Completions are drawn with the brief's chat template and the same sampling parameters the training run uses
(temperature, top_p, top_k, min_p, repetition_penalty and ``max_completion_length``, then ``generation_kwargs``
over them, as TRL 1.16 does; ``chat_template_kwargs`` passed to the chat template), seeded, with one of two engines that return the same ``Sample``
list, prompt-major: vLLM's offline engine (``generate_vllm``; sized, chosen and kept per process by
``vllm_engine``) or transformers generation (``generate``), on CPU or GPU. ``draw`` picks the engine the brief's
``sampling.engine`` asks for and reports which one sampled.
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
    top_k: int | None = 0                       # TRL's defaults for the keys below
    min_p: float | None = None
    repetition_penalty: float = 1.0
    generation_kwargs: dict | None = None       # over the values above, as TRL applies them
    chat_template_kwargs: dict | None = None

    def __post_init__(self):
        from grpo_rlvr.errors import ConfigError

        if not isinstance(self.batch_size, int) or self.batch_size < 1:
            raise ConfigError(f"--batch-size: {self.batch_size!r}; use a positive number of sequences")
        if self.max_completion_length < 1:
            raise ConfigError(f"max_completion_length: {self.max_completion_length}; must be ≥ 1")

    @classmethod
    def from_brief(cls, brief, seed: int, batch_size: int = 64) -> SamplingParams:
        """Sample as training will (the brief's temperature, top_p, top_k, min_p, repetition_penalty, completion
        length, ``generation_kwargs`` and ``chat_template_kwargs``), with ``seed``."""
        s, g = brief.sampling(), brief.grpo
        return cls(temperature=s["temperature"], top_p=s["top_p"], max_completion_length=s["max_completion_length"],
                   seed=seed, batch_size=batch_size, top_k=g.get("top_k", 0), min_p=g.get("min_p"),
                   repetition_penalty=g.get("repetition_penalty", 1.0),
                   generation_kwargs=dict(g.get("generation_kwargs") or {}) or None,
                   chat_template_kwargs=dict(g.get("chat_template_kwargs") or {}) or None)


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


def encode_prompts(tokenizer, prompts: Sequence, chat_template_kwargs: dict | None = None) -> list[list[int]]:
    """Token ids of each prompt, through the chat template (with ``chat_template_kwargs``, as TRL passes them) for
    conversational prompts."""
    out = []
    for p in prompts:
        if isinstance(p, str):
            out.append(tokenizer(p, add_special_tokens=False)["input_ids"])
        else:
            ids = tokenizer.apply_chat_template(list(p), add_generation_prompt=True, tokenize=True,
                                                **(chat_template_kwargs or {}))
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
    encoded = encode_prompts(tokenizer, prompts, params.chat_template_kwargs)
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
        settings = {"max_new_tokens": params.max_completion_length, "do_sample": not greedy,
                    "temperature": None if greedy else params.temperature, "top_p": None if greedy else params.top_p,
                    "top_k": None if greedy else params.top_k, "min_p": None if greedy else params.min_p,
                    "repetition_penalty": params.repetition_penalty, "pad_token_id": pad, "eos_token_id": eos}
        settings.update(params.generation_kwargs or {})   # TRL applies them over its own values
        with torch.no_grad():
            out = model.generate(input_ids=input_ids.to(device), attention_mask=attn.to(device), **settings)
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


@dataclass(frozen=True)
class Engine:
    """The engine that sampled, as the inspection manifest and ``--json`` record it."""

    name: str                 # "vllm" | "transformers"
    settings: dict            # vLLM: package, platform, max_model_len, memory; transformers: device, torch

    def to_dict(self) -> dict:
        return {"name": self.name, **self.settings}

    def format(self) -> str:
        if self.name == "vllm":
            return f"vLLM ({self.settings.get('package')}, {self.settings.get('platform')})"
        return f"transformers ({self.settings.get('device')})"


def generate_vllm(llm, tokenizer, prompts: Sequence, n: int, params: SamplingParams,
                  progress: Callable[[int, int], None] | None = None,
                  encoded: list[list[int]] | None = None) -> list[Sample]:
    """Draw ``n`` completions per prompt with a ``vllm.LLM`` (same order and fields as ``generate``).

    Args:
        llm: the engine (``vllm_engine.engine_for``).
        tokenizer: the brief's tokenizer; prompts are encoded with its chat template, as TRL does, and completions
            decoded with it.
        encoded: the prompts' token ids when already computed.
    """
    import vllm

    greedy = params.temperature <= 0
    settings = {"n": n, "temperature": 0.0 if greedy else params.temperature, "top_p": 1.0 if greedy else params.top_p,
                "top_k": 0 if greedy or params.top_k is None else params.top_k,
                "min_p": 0.0 if greedy or params.min_p is None else params.min_p,
                "repetition_penalty": params.repetition_penalty, "max_tokens": params.max_completion_length,
                "seed": params.seed}
    settings.update(params.generation_kwargs or {})   # as TRL's vLLM generation applies them
    sp = vllm.SamplingParams(**settings)
    encoded = encoded if encoded is not None else encode_prompts(tokenizer, prompts, params.chat_template_kwargs)
    outputs = llm.generate([{"prompt_token_ids": ids} for ids in encoded], sampling_params=sp, use_tqdm=False)
    samples: list[Sample] = []
    for pi, out in enumerate(outputs):
        for c in out.outputs:
            samples.append(Sample(pi, prompts[pi], tokenizer.decode(list(c.token_ids), skip_special_tokens=True),
                                  truncated=c.finish_reason == "length", num_tokens=len(c.token_ids)))
    if progress:
        progress(len(samples), len(prompts) * n)
    return samples


def draw(brief, prompts: Sequence, n: int, params: SamplingParams, model=None, tokenizer=None,
         progress: Callable[[int, int], None] | None = None) -> tuple[list[Sample], Engine, object]:
    """Sample for preflight and inspect with the engine ``sampling.engine`` asks for (``vllm_engine``): a given
    ``model`` with transformers; else vLLM's engine kept for this process; else the brief's model with
    transformers. An adapter folder is always sampled with transformers (base + adapter): vLLM loads merged
    weights only. Returns the samples, the engine that sampled and the tokenizer.

    Raises:
        MachineError: the brief asks for vLLM and it is not installed here.
    """
    from grpo_rlvr.rollout import vllm_engine

    adapter = model is None and bool(brief.model.adapter_base)
    if adapter:
        log.info("sampling the adapter %s with transformers: vLLM needs merged weights (grpo-rlvr merge)",
                 brief.model.name_or_path)
    if vllm_engine.choose_engine(brief.sampling_engine, model_given=model is not None or adapter) == "vllm":
        from grpo_rlvr.runtime.model_loading import load_tokenizer
        from grpo_rlvr.runtime.vllm_cpu import vllm_platform

        tok = tokenizer or load_tokenizer(brief.model)
        encoded = encode_prompts(tok, prompts, params.chat_template_kwargs)
        spec = vllm_engine.engine_spec(brief, max(map(len, encoded)), vllm_platform())
        llm = vllm_engine.engine_for(spec)
        samples = generate_vllm(llm, tok, prompts, n, params, progress, encoded=encoded)
        return samples, Engine("vllm", spec.describe()), tok
    if model is None:
        from grpo_rlvr.runtime.model_loading import load_model_and_tokenizer

        model, tokenizer = load_model_and_tokenizer(brief)
    samples = generate(model, tokenizer, prompts, n, params, progress)
    return samples, transformers_engine(model), tokenizer


def transformers_engine(model) -> Engine:
    import torch
    import transformers

    device = next(model.parameters()).device
    return Engine("transformers", {"package": f"transformers {transformers.__version__}", "device": str(device),
                                   "torch": torch.__version__})
