"""Runs written by hand as a training writes them, for the report's tests that need no training: a real inspection
(scored by the real rewards, reviewed with two disagreements), a real rendered run folder and its lock, a start
record signed with this user's run key, the metrics TRL logs, its completions files, the watchdog's events, and the
live review audit in the format its writer uses (a clean one and a diverged one, with the stop it appends to
watch.jsonl). The e2e tests that train (tests/runtime/test_crash_record.py, tests/demo/) check the report of real
runs."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from artifacts import make_artifact, proven_start
from grpo_rlvr.inspection import load_artifact
from grpo_rlvr.inspection.artifact import make_verdict
from grpo_rlvr.run.render import render
from histories import HEALTHY, history, write_completions

# The live review audit as training writes it (format 1).
CLEAN_AUDIT = {
    "format": 1, "status": "clean",
    "settings": {"alpha": 0.001, "stop_on": "diverged", "batches": 1, "loosened": False, "origin": "recipe"},
    "reference": {"rollouts": 192, "prompts": 48, "inspection": "/runs/x/inspection", "draw": 1, "draws": 1},
    "checks": [{"step": 0, "batch": 1, "rollouts": 64, "prompts": 8, "time": 1733550000.0, "verdict": "clean",
                "tests": [{"metric": "malformed", "kind": "share", "reviewed": "25/192", "training": "9/64",
                           "p": 0.41, "alpha": 1e-4, "diverged": False, "method": "Fisher exact on effective counts",
                           "summary": "malformed 9/64 now, 25/192 reviewed; p = 0.41"}]}],
    "stopped": None,
}
DIVERGED_AUDIT = copy.deepcopy(CLEAN_AUDIT)
DIVERGED_AUDIT.update(status="diverged", stopped={
    "step": 0, "summary": "malformed 55/64 now, 25/192 reviewed; p = 3e-12",
    "what_to_do": "training writes what the review never saw: inspect again at this model and review"})
DIVERGED_AUDIT["settings"].update(loosened=True, origin="brief")
DIVERGED_AUDIT["checks"][0].update(verdict="diverged", tests=[{
    "metric": "malformed", "kind": "share", "reviewed": "25/192", "training": "55/64", "p": 3e-12, "alpha": 1e-4,
    "diverged": True, "method": "Fisher exact on effective counts",
    "summary": "malformed 55/64 now, 25/192 reviewed; p = 3e-12"}])
AUDIT_STOP = {"event": "stop", "id": "review_audit", "severity": "critical",
              "title": "Training's rollouts diverged from the reviewed ones", "evidence": ["malformed 55/64 now, "
              "25/192 reviewed; p = 3e-12"], "recommendation": "inspect again at this model and review it",
              "step": 0, "checkpoint": None, "time": 1733550001.0}

# What the model wrote in two of the reviewed samples, and what the person said about them.
DISAGREEMENTS = {0: ("exact_match", "the answer is right: the reward misreads '07'"),
                 1: ("", "both scores are wrong here")}


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _disagree(inspection: Path) -> None:
    art = load_artifact(inspection)
    for i, (reward, note) in DISAGREEMENTS.items():
        s = art.samples[i]
        s["completion"] = [{"role": "assistant", "content": "<answer>07</answer>\x1b[2J hidden?"}]
        s["verdict"] = make_verdict(art.manifest, s, "disagree", "ada", "human", 6.0, note=note,
                                    rewards=[reward] if reward else [])
    art.save_samples()


def _group(i: int, g: int) -> list[tuple[str, float, float]]:
    right = f"<answer>{g + i}</answer>"
    return [(right if k < 1 + i % 4 else f"<answer>{k}</answer>", 1.0 if k < 1 + i % 4 else 0.0, 0.5 - k / 8)
            for k in range(8)]


@pytest.fixture
def written_run(workspace) -> Path:
    """A finished, proven run of 20 logs with a reviewed inspection (two disagreements), the watchdog's findings
    (one cleared, one stop that did not happen: ``would_stop``), and completions at every logged step."""
    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    _disagree(workspace / "out" / "inspection")
    run = render(workspace / "brief.yaml").dir
    out = run / "output"
    out.mkdir()
    proven_start(run)
    records = history(20, **HEALTHY)
    write_jsonl(out / "metrics.jsonl", [*records, {"step": 100, "train_runtime": 42.0, "train_loss": 0.01}])
    write_completions(out, [r["step"] for r in records], _group)
    write_jsonl(out / "watch.jsonl", [
        {"event": "finding", "step": 10, "id": "truncation", "title": "Many completions are truncated",
         "severity": "warning", "evidence": ["clipped_ratio averaged 0.37"], "recommendation":
         "Raise max_completion_length", "variant": "dapo", "brief_change": {"grpo": {"max_completion_length": 48}}},
        {"event": "cleared", "step": 30, "id": "truncation", "severity": "warning",
         "title": "Many completions are truncated"},
        {"event": "cost", "step": 100, "checks": 20, "put_off": 0, "check_s": 0.1, "elapsed_s": 42.0,
         "share": 0.0024}])
    return run


@pytest.fixture
def crashed_run(workspace) -> Path:
    """A run that died at step 15 with a crash record as the rendered train.py writes it."""
    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    run = render(workspace / "brief.yaml").dir
    out = run / "output"
    out.mkdir()
    proven_start(run)
    write_jsonl(out / "metrics.jsonl", history(3, **HEALTHY))
    (out / "crash.json").write_text(json.dumps({
        "exception": "RewardError", "module": "grpo_rlvr.errors",
        "message": "user reward 'one_value' returned 1 values for 64 completions", "frames": [],
        "at": {"file": "/x/grpo_rlvr/rewards/user.py", "line": 120, "function": "checked", "owner": "project",
               "code": "raise RewardError(...)"},
        "fix": "the message names what is wrong and the fix: do that, then train again", "rank": 0,
        "time": 1733550000.0, "last_step": 15, "stderr_tail": "Traceback (most recent call last):\n  ..."}))
    return run
