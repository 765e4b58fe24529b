"""Inspect on a real (tiny) model: sampling with the training sampler, the artifact on disk, the HTML report, and
how the samples a person reads are chosen (``inspection/selection.py``)."""

from __future__ import annotations

import json

import pytest

from grpo_rlvr.inspection import inspect_rewards, load_artifact
from grpo_rlvr.inspection.selection import outcome, select


def test_selection_spreads_over_outcomes_and_prompts():
    kinds = {"format": "format", "exact_match": "correctness"}
    assert outcome({"format": 0.0, "exact_match": 0.0}, kinds) == "malformed"
    assert outcome({"format": 1.0, "exact_match": 0.0}, kinds) == "wrong"
    assert outcome({"format": 1.0, "exact_match": 1.0}, kinds) == "correct"
    cands = [{"prompt_index": p, "outcome": o} for p in range(20) for o in ["malformed"] * 8 + ["correct"]]
    picked = select(cands, 40, seed=0)
    assert sum(c["outcome"] == "correct" for c in picked) == 20  # every rare outcome is shown
    assert len({c["prompt_index"] for c in picked}) == 20


def test_inspect_writes_the_artifact_and_report(workspace):
    res = inspect_rewards(workspace / "brief.yaml", samples=50)
    art = load_artifact(res.dir)
    assert len(art.samples) == 50 and art.manifest["sample_count"] == 50
    assert {r["name"] for r in art.manifest["rewards"]} == {"format", "exact_match"}
    assert all(len(r["fingerprint"]) == 64 for r in art.manifest["rewards"])
    assert art.manifest["sampling"]["max_completion_length"] == 24
    s = art.samples[0]
    assert set(s["scores"]) == {"format", "exact_match"} and s["scores"]["format"]["reason"]
    assert s["verdict"] is None
    html = (res.dir / "report.html").read_text()
    assert html.count("<tr class=") == 50 and "not reviewed" in html
    assert f"grpo-rlvr review {res.dir}</code>" in html  # the real folder, not the temporary one it was built in
    assert json.loads((res.dir / "manifest.json").read_text())["brief"]["fingerprint"]


def test_inspect_sample_bounds(workspace):
    from grpo_rlvr.errors import ConfigError

    with pytest.raises(ConfigError, match="outside 50–100"):
        inspect_rewards(workspace / "brief.yaml", samples=20)


def test_reviewed_work_can_leave_the_demo_oracles_verdicts_out(tmp_path):
    """The demo replaces an inspection its oracle reviewed, never one a person did (demo/pipeline.py)."""
    from grpo_rlvr.inspection.run import reviewed_work

    def verdict(kind):
        return {"verdict": "agree", "reviewer": "x", "reviewer_kind": kind}

    rows = [{"id": "a", "verdict": verdict("oracle")}, {"id": "b", "verdict": None}]
    (tmp_path / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert reviewed_work(tmp_path) == 1 and reviewed_work(tmp_path, count_oracle=False) == 0
    with (tmp_path / "samples.jsonl").open("a") as fh:
        fh.write(json.dumps({"id": "c", "verdict": verdict("human")}) + "\n{not json\n")
    assert reviewed_work(tmp_path) == 3 and reviewed_work(tmp_path, count_oracle=False) == 2
