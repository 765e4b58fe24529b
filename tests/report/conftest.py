"""Runs written by hand as a training writes them, for the report's tests that need no training: a real inspection
(scored by the real rewards, reviewed with two disagreements), a real rendered run folder and its lock, a start
record signed with this user's run key, the metrics TRL logs, its completions files, the watchdog's events, and the
live review audit written by its own writer (clean, or diverged with the stop or would-stop it appends to
watch.jsonl). The e2e tests that train (tests/records/test_crash_record.py, tests/demo/) check the report of real
runs."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from artifacts import make_artifact, proven_start
from audit.test_compare import KINDS, WEIGHTS, rollouts
from grpo_rlvr.audit.live import AuditSettings, ReviewAudit, read_audit
from grpo_rlvr.audit.reference import build_reference
from grpo_rlvr.inspection import load_artifact
from grpo_rlvr.inspection.artifact import make_verdict
from grpo_rlvr.records.audit_rollouts import prompt_digest
from grpo_rlvr.run.render import render
from histories import HEALTHY, history, write_completions


def started_audit(output: Path, settings: AuditSettings | None = None) -> ReviewAudit:
    """The live review audit of a run in ``output`` as training starts it (its pending record written), against a
    reference of 32 reviewed prompt groups with few malformed completions."""
    ref = build_reference(rollouts(32, 0.05, 0.4, seed=1), [prompt_digest(f"{g}+1=") for g in range(200)], WEIGHTS,
                          KINDS, False, 8)
    audit = ReviewAudit(ref, settings or AuditSettings(), output, output.parent / "inspection",
                        {"number": 1, "of": 1}, io.StringIO())
    audit.start()
    return audit


def write_audit(output: Path, diverge: bool, settings: AuditSettings | None = None) -> dict:
    """The live review audit of one generation batch at step 0, written by its own writer (``audit.live``) into
    ``output``: ``review_audit.json`` and its events in ``watch.jsonl`` (an ``audit`` check; on a divergence a
    ``stop``, or a ``would_stop`` with ``stop_on: never``). A divergence: most of training's rollouts malformed where
    few reviewed ones were. Returns the record."""
    audit = started_audit(output, settings)
    audit.observe(0, rollouts(8, 0.85 if diverge else 0.05, 0.1 if diverge else 0.4, seed=2,
                              prompt=lambda g: f"{g + 40}+1="))
    return read_audit(output)


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
