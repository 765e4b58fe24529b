"""The run check comes back as a value (``RunCheck``), made in the real clean interpreter, and what it carries is
what train.py hands on: the stamps and reward fingerprints compared after loading, and the start the ledger's
proofs name. Nothing of a check stays behind in module state."""

from __future__ import annotations

import os
from pathlib import Path

from artifacts import make_artifact
from grpo_rlvr.records import provenance
from grpo_rlvr.records.checked_run import RunCheck
from grpo_rlvr.run import guard as run_guard
from grpo_rlvr.run.render import render


def test_a_passing_check_carries_what_it_verified_and_a_start_for_the_process_that_asked(workspace):
    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    run = render(workspace / "brief.yaml").dir
    check = run_guard.check_run(run, start="grpo-rlvr train")           # in `python -I -S`, a child process
    assert check.passed and Path(check.lock["brief"]).resolve() == (workspace / "brief.yaml").resolve()
    assert any(p.endswith("model.safetensors") for p in check.verified["checked"]), check.verified["checked"]
    assert check.verified["rewards"] and all(len(fp) == 64 for fp in check.verified["rewards"].values())
    assert check.start["trainer_pid"] == os.getpid() and check.start["door"] == "grpo-rlvr train"
    assert provenance.proven_run_id(check.start) == check.start["run_id"]    # signed for this process
    assert RunCheck.from_dict(check.to_dict()) == check
    assert run_guard.changed_since_check(check) == []
    # a second check, asked without a door, signs no start; the first one's value is untouched by it
    again = run_guard.check_run(run)
    assert again.passed and again.start is None and check.start is not None
    assert not hasattr(run_guard, "_verified") and not hasattr(run_guard, "verified")


def test_a_refused_check_verifies_nothing_and_signs_no_start(workspace):
    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection", verdict=None)   # never reviewed
    run = render(workspace / "brief.yaml").dir
    check = run_guard.check_run(run, start="grpo-rlvr train")
    assert not check.passed and any("the inspection gate does not pass" in p for p in check.problems)
    assert check.verified == {} and check.start is None
    assert run_guard.changed_since_check(check) == [] and run_guard.changed_since_check(None) == []


def test_a_check_sent_as_json_comes_back_whole():
    check = RunCheck({"brief": "b.yaml"}, ["x changed"], {"checked": {"/m": [1, 2]}, "rewards": {"r": "f" * 64}},
                     {"run_id": "abc", "trainer_pid": 7})
    assert RunCheck.from_dict(check.to_dict()) == check and not check.passed
    assert RunCheck.from_dict({"lock": {}, "problems": []}) == RunCheck({}) and RunCheck({}).passed
