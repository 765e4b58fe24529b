"""The demo's tiny model after an SFT warmup, for the tests that train or sample a model that succeeds sometimes.

The warmed models that several test modules use are session fixtures (tests/conftest.py), built once; a test
that needs its own warmup (another task, other completions) calls ``warmed_model``. A warmup is a training: a test
that builds one is marked ``e2e``."""

from __future__ import annotations

from grpo_rlvr.demo import arithmetic_task as task


def warmed_model(tmp_path_factory, kind: str, rows: list[dict], completions: list[str], **warmup):
    """The demo's base model after an SFT warmup on (rows, completions), saved like any HF model."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from grpo_rlvr.demo import tiny_model
    from grpo_rlvr.demo.pipeline import _build_base_model
    from grpo_rlvr.demo.warmup import sft_warmup

    base, _ = _build_base_model(seed=0, fresh=False)
    tok, model = AutoTokenizer.from_pretrained(base), AutoModelForCausalLM.from_pretrained(base)
    sft_warmup(model, tok, rows, completions, seed=0, **warmup)
    d = tmp_path_factory.mktemp(kind) / "model"
    tiny_model.save_pretrained(model, tok, d, {"kind": kind})
    return d


def answers(rows):
    return [task.target_completion(r["answer"]) for r in rows]
