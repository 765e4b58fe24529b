"""A run folder holds one run: what counts as an earlier training's outputs, and the rendered train.py's own
refusal to start a second training into them (``grpo-rlvr train``'s: tests/run/test_launch.py)."""

from __future__ import annotations

import json

import pytest

from grpo_rlvr.records.checked_run import RunCheck
from grpo_rlvr.records.run_outputs import prior_outputs, second_run_problem
from grpo_rlvr.run.guard import SMOKE_MARKER, demo_acceptance, refuse_unless_gated


def finished_run(output):
    (output / "checkpoint-50").mkdir(parents=True)
    (output / "metrics.jsonl").write_text(json.dumps({"step": 50}) + "\n")
    (output / "final").mkdir()
    return output


def test_what_counts_as_a_run(tmp_path):
    out = tmp_path / "output"
    assert prior_outputs(out) == []                      # no folder
    out.mkdir()
    (out / "notes.txt").write_text("mine")                # not a training's output
    (out / "checkpoint-x.txt").write_text("a file")       # checkpoints are folders
    assert prior_outputs(out) == []
    finished_run(out)
    assert prior_outputs(out) == ["checkpoint-50", "final", "metrics.jsonl"]
    assert second_run_problem(out, tmp_path, resuming=True) is None      # --resume continues it
    assert "--resume" in second_run_problem(out, tmp_path, resuming=False)
    (out / SMOKE_MARKER).write_text("{}")                 # a smoke test's outputs: a gated run moves them aside
    assert prior_outputs(out) == []


def test_train_py_refuses_a_second_run_into_the_outputs_of_one(tmp_path, capsys):
    """refuse_unless_gated (what the rendered train.py calls before any model loads), with a run check that
    passes: the outputs of a finished run alone refuse it, and a resume from one of its checkpoints does not."""
    out = finished_run(tmp_path / "output")
    with demo_acceptance(lambda run, smoke, resume, start=None: RunCheck({}, [])), pytest.raises(SystemExit) as e:
        refuse_unless_gated(tmp_path, out)
    err = capsys.readouterr().err
    assert e.value.code == 1 and "training refused (nothing was loaded)" in err
    assert "already holds a run's outputs (checkpoint-50, final, metrics.jsonl)" in err
    assert f"grpo-rlvr train {tmp_path} --resume" in err and "grpo-rlvr render BRIEF --out NEW_RUN" in err
    with demo_acceptance(lambda run, smoke, resume, start=None: RunCheck({}, [])):
        refuse_unless_gated(tmp_path, out, resume=str(out / "checkpoint-50"))   # continues: no refusal
    assert "training refused" not in capsys.readouterr().err
