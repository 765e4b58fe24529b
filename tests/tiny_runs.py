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


BAD_ROW = 36   # of 40 rows: never among the 32 prompts make_artifact's inspection samples


def run_with_a_bad_row(workspace: Path, reward_file: str, code: str, weight: float, grpo: dict):
    """Render a gated run of the demo's brief plus the user reward ``reward_file`` (``code``), on 40 demo rows of
    which row ``BAD_ROW`` (line 37) has an answer that is not a number, and train it to the end. Returns (run folder,
    TrainResult, what the launch printed)."""
    import yaml

    from artifacts import make_artifact
    from briefs import example_brief_text
    from grpo_rlvr.files import write_jsonl_atomic
    from grpo_rlvr.run.launch import train
    from grpo_rlvr.run.render import render

    rows = task.make_rows(40, seed=3)
    rows[BAD_ROW]["answer"] = "x7"
    write_jsonl_atomic(workspace / "data" / "train.jsonl", rows)
    (workspace / reward_file).write_text(code)
    data = yaml.safe_load(example_brief_text())
    data["rewards"].append({"name": reward_file, "kind": "shaping", "weight": weight})
    data["grpo"].update({"save_steps": 1000, **grpo})
    (workspace / "brief.yaml").write_text(yaml.safe_dump(data))
    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")   # rows 0-31: the bad row is not met
    run = render(workspace / "brief.yaml").dir
    log = workspace / "train.log"
    with log.open("w") as fh:
        res = train(run, stream=fh)
    return run, res, log.read_text()
