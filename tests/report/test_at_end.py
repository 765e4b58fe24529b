"""The report the rendered train.py writes as its run ends: written however the run ended when a training began (or
died), not for a start the gate refused, only on rank 0, and a failure to write it never changes how the run ended."""

from __future__ import annotations

import io
import json

import pytest

from grpo_rlvr.report import at_end
from grpo_rlvr.report.at_end import report_at_end


def test_written_when_the_training_ends_however_it_ends(written_run):
    out = written_run / "output"
    said = io.StringIO()
    with pytest.raises(SystemExit) as done, report_at_end(written_run, said):
        (out / "metrics.jsonl").touch()      # this training logged
        raise SystemExit(1)                  # e.g. the watchdog stopped it: train.py returns 1
    assert done.value.code == 1 and f"report: {out / 'report.html'}" in said.getvalue()
    (out / "report.html").unlink()
    with pytest.raises(KeyError), report_at_end(written_run, said):
        (out / "crash.json").write_text("{}")   # an exception ends the run after crash_record wrote its record
        raise KeyError("value")
    assert (out / "report.html").is_file()


def test_not_written_for_a_start_the_gate_refused_nor_on_other_ranks(written_run, monkeypatch):
    out = written_run / "output"
    (out / "crash.json").write_text("{}")   # an earlier start died
    with pytest.raises(SystemExit), report_at_end(written_run, io.StringIO()):
        (out / "crash.json").unlink()       # what recorded_crash does as a run starts again
        raise SystemExit(1)                            # the gate refused: this process wrote nothing
    assert not (out / "report.html").exists()
    monkeypatch.setenv("RANK", "1")
    with report_at_end(written_run, io.StringIO()):
        (out / "metrics.jsonl").touch()
    assert not (out / "report.html").exists()


def test_a_report_that_fails_is_said_and_the_run_keeps_its_exit_code_and_exception(written_run, monkeypatch):
    import grpo_rlvr.report

    def broken(run):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(grpo_rlvr.report, "write_report", broken)
    out, said = written_run / "output", io.StringIO()
    with pytest.raises(SystemExit) as done, report_at_end(written_run, said):
        (out / "metrics.jsonl").touch()
        raise SystemExit(0)
    assert done.value.code == 0
    assert said.getvalue() == (f"report: not written (OSError: [Errno 28] No space left on device); `grpo-rlvr "
                               f"report {written_run}` writes it\n")

    def interrupted(run):
        raise KeyboardInterrupt

    monkeypatch.setattr(grpo_rlvr.report, "write_report", interrupted)
    with pytest.raises(ValueError, match="the run's own"), report_at_end(written_run, io.StringIO()):
        (out / "metrics.jsonl").touch()
        raise ValueError("the run's own")
    assert at_end.write_quietly(written_run, io.StringIO()) is None


def test_train_py_writes_it_around_main_and_after_the_crash_record(workspace):
    """The rendered train.py enters report_at_end before recorded_crash, so the crash record is written first."""
    from artifacts import make_artifact
    from grpo_rlvr.run.render import render

    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    text = (render(workspace / "brief.yaml").dir / "train.py").read_text()
    entered = "    with report_at_end(RUN_DIR), recorded_crash(RUN_DIR, Path(BRIEF_DIR)):\n        sys.exit(main())"
    assert entered in text
    import grpo_rlvr.records.provenance as provenance
    import grpo_rlvr.records.run_outputs as run_outputs

    assert {provenance.PROVENANCE, run_outputs.SMOKE_MARKER} <= set(at_end.SIGNS_OF_A_TRAINING)


def test_the_launcher_writes_it_for_a_trainer_killed_by_a_signal(workspace, monkeypatch, capfd):
    """The kernel's OOM killer sends SIGKILL: train.py can write neither its crash record nor its report, so
    ``grpo-rlvr train`` writes both. The trainer here is a STAND-IN (no training runs): it logs two steps and dies as
    a killed process does (exit status -9)."""
    from artifacts import make_artifact
    from grpo_rlvr.run import launch
    from grpo_rlvr.run.render import render

    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    run = render(workspace / "brief.yaml").dir

    def killed(cmd, cwd, env, stream):
        (run / "output").mkdir(exist_ok=True)
        (run / "output" / "metrics.jsonl").write_text('{"step": 2, "loss": 0.1, "reward": 0.2}\n'
                                                      '{"step": 4, "loss": 0.1, "reward": 0.3}\n')
        return -9, False   # (exit status, whether the launcher passed on a Ctrl-C)

    monkeypatch.setattr(launch, "_run_forwarding_signals", killed)
    res = launch.train(run)
    assert res.returncode == -9 and res.crash["signal"] == "SIGKILL"
    facts = json.loads((run / "output" / "report.json").read_text())
    assert facts["state"]["text"] == "died after step 4: the trainer was killed by SIGKILL"
    assert f"report: {run / 'output' / 'report.html'}" in capfd.readouterr().err
