"""The demo's tiny model after an SFT warmup, for the tests that train or sample a model that succeeds sometimes.

The warmed models that several test modules use are session fixtures (tests/conftest.py), built once; a test
that needs its own warmup (another task, other completions) calls ``warmed_model``. A warmup is a training: a test
that builds one is marked ``e2e``."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

from grpo_rlvr.demo import arithmetic_task as task


def warmed_model(tmp_path_factory, kind: str, rows: list[dict], completions: list[str], dest: Path | None = None,
                 **warmup):
    """The demo's base model after an SFT warmup on (rows, completions), saved like any HF model (into ``dest``,
    or a fresh folder of the session)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from grpo_rlvr.demo import tiny_model
    from grpo_rlvr.demo.pipeline import _build_base_model
    from grpo_rlvr.demo.warmup import sft_warmup

    base, _ = _build_base_model(seed=0, fresh=False)
    tok, model = AutoTokenizer.from_pretrained(base), AutoModelForCausalLM.from_pretrained(base)
    sft_warmup(model, tok, rows, completions, seed=0, **warmup)
    d = dest or tmp_path_factory.mktemp(kind) / "model"
    tiny_model.save_pretrained(model, tok, d, {"kind": kind})
    return d


def answers(rows):
    return [task.target_completion(r["answer"]) for r in rows]


def built_once(tmp_path_factory, kind: str, build: Callable[[Path], object]) -> Path:
    """``build(folder)``, a folder named ``model``, once per test session, also when pytest-xdist runs the session
    in workers (scripts/test.sh): they share one folder under the session's temporary root, built by the first worker that asks for it under a
    file lock, read by the others once it is complete. Returns that folder (``.../shared-KIND/model``)."""
    from filelock import FileLock

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent   # each worker's basetemp is a folder of the session's root
    d, done = root / f"shared-{kind}", root / f"shared-{kind}.done"
    with FileLock(str(root / f"shared-{kind}.lock")):
        if not done.exists():
            shutil.rmtree(d, ignore_errors=True)   # what a worker that failed half-way left
            build(d / "model")
            done.touch()
    return d / "model"
