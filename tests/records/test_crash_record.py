"""A run that died is explained: train.py records the exception that ended it (with its last frame in the user's
or grpo-rlvr's code, the fix and stderr's tail), the launcher records a death by signal, and ``diagnose`` and
``watch`` name it (``watch --once`` exits 1). The e2e test crashes a real GRPOTrainer run before its first log."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from browser import assert_page_shows
from grpo_rlvr.records.crash_record import CRASH, TAIL, read_crash, record_exit, recorded_crash
from tiny_runs import run_with_a_bad_row

CLI = [sys.executable, "-m", "grpo_rlvr"]

USER_CODE = """\
def score(rows):
    total = 0
    for r in rows:
        total += r["value"]
    return total
"""


def fake_run(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "grpo_config.yaml").write_text("output_dir: output\n")
    (run / "brief.lock.json").write_text(json.dumps({"grpo_config": {"max_steps": 10}}))
    return run


def test_an_exception_that_ends_the_run_is_recorded_with_its_frame_in_user_code_and_the_fix(tmp_path, capsys):
    import runpy

    run, brief_dir = fake_run(tmp_path), tmp_path / "brief"
    brief_dir.mkdir()
    (brief_dir / "helper.py").write_text(USER_CODE)
    helper = runpy.run_path(str(brief_dir / "helper.py"))
    (run / "output").mkdir()
    (run / "output" / CRASH).write_text(json.dumps({"exception": "Old", "time": 1}))   # an earlier death: replaced
    with pytest.raises(KeyError), recorded_crash(run, brief_dir):
        print("step 3/10 | reward 0.125", file=sys.stderr)
        helper["score"]([{"value": 1}, {"valu": 2}])
    crash = json.loads((run / "output" / CRASH).read_text())
    assert crash["exception"] == "KeyError" and crash["message"] == "'value'"
    assert crash["at"]["file"] == str(brief_dir / "helper.py") and crash["at"]["line"] == 4
    assert crash["at"]["owner"] == "user" and crash["at"]["code"] == 'total += r["value"]'
    assert "raised in your code" in crash["fix"] and "helper.py:4 in score" in crash["fix"]
    tail = (run / "output" / TAIL).read_text()
    assert "step 3/10 | reward 0.125" in tail and "step 3/10" in capsys.readouterr().err   # kept and shown
    assert sys.stderr is not None and not hasattr(sys.stderr, "kept")   # put back
    with recorded_crash(run, brief_dir):   # a later start of the run removes the record of the earlier death
        pass
    assert not (run / "output" / CRASH).exists()


def test_a_trainer_killed_by_a_signal_is_recorded_by_the_launcher_and_watch_and_diagnose_say_so(tmp_path):
    """What the kernel's OOM killer does (SIGKILL): no Python runs, so the launcher records the exit status."""
    run = fake_run(tmp_path)
    out = run / "output"
    out.mkdir()
    (out / "metrics.jsonl").write_text(json.dumps({"step": 4, "loss": 0.1, "reward": 0.2}) + "\n")
    since = time.time()
    killed = subprocess.run([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"])
    assert killed.returncode == -9
    crash = record_exit(out, killed.returncode, since)
    assert crash["signal"] == "SIGKILL" and crash["last_step"] == 4 and "out-of-memory killer" in crash["fix"]
    assert read_crash(out) == crash
    assert record_exit(out, 137, since) is None   # a record of this launch is there: kept, not replaced
    assert read_crash(out)["signal"] == "SIGKILL"

    shown = subprocess.run([*CLI, "watch", str(run), "--once"], capture_output=True, text=True, timeout=120)
    assert shown.returncode == 1, shown.stdout + shown.stderr
    assert "the run DIED after step 4: the trainer was killed by SIGKILL" in shown.stdout, shown.stdout
    diag = subprocess.run([*CLI, "diagnose", str(run), "--json"], capture_output=True, text=True, timeout=120)
    assert diag.returncode == 1, diag.stderr
    finding = next(f for f in json.loads(diag.stdout)["findings"] if f["id"] == "crashed")
    assert "SIGKILL" in finding["title"] and "out-of-memory" in finding["recommendation"]


RETURNS_ONE_VALUE = """\
def reward(completions, answer, **kwargs):
    if "x7" in answer:   # a row the inspection never met: the bug returns one value for the whole batch
        return [0.0]
    return [0.0 for _ in completions]
"""


@pytest.mark.e2e
def test_a_run_that_crashes_before_its_first_log_is_explained_by_diagnose_and_watch(workspace):
    """Real GRPOTrainer on CPU. A user reward that returns one value for a whole batch when it meets a row past the
    ones inspected: TRL's call raises (not a row the reward could not score: the reward broke its contract), the
    run dies within its first epoch, before its first log (logging every 50 steps). The launcher says how it died;
    diagnose (exit 1) and watch --once (exit 1) name the exception, its frame in grpo-rlvr's code and the fix,
    instead of 'has the run logged anything?' and exit 0."""
    run, res, said = run_with_a_bad_row(workspace, "one_value.py", RETURNS_ONE_VALUE, 0.5,
                                        {"logging_steps": 50, "max_steps": 10})
    # a grpo-rlvr error (here the user reward's broken contract, named with its fix) ends train.py with exit 2,
    # as every command ends on bad input
    assert not res.ok and res.returncode == 2 and res.watch_stop is None, said[-3000:]
    trained = said
    out = run / "output"
    assert not (out / "metrics.jsonl").exists()
    crash = json.loads((out / CRASH).read_text())
    assert crash["exception"] == "RewardError" and "returned 1 values for 64 completions" in crash["message"]
    assert crash["at"]["owner"] == "project" and crash["at"]["file"].endswith("grpo_rlvr/rewards/user.py")
    assert "Traceback" in (out / TAIL).read_text()
    assert "RewardError: user reward 'one_value' returned 1 values" in res.format()

    diag = subprocess.run([*CLI, "diagnose", str(run)], capture_output=True, text=True, timeout=300)
    assert diag.returncode == 1 and "has the run logged anything" not in diag.stderr, diag.stderr[-2000:]
    said = diag.stdout
    assert "[critical] The run died: RewardError" in said and "before its first logged step" in said, said
    assert "grpo_rlvr/rewards/user.py:" in said and "in checked (project code)" in said and "the message names" in said
    shown = subprocess.run([*CLI, "watch", str(run), "--once"], capture_output=True, text=True, timeout=120)
    assert shown.returncode == 1 and "no training record logged yet" not in shown.stdout, shown.stdout
    assert "the run DIED before its first logged step: RewardError: user reward 'one_value'" in shown.stdout
    # train.py wrote its report after the crash record: the page, opened in a browser, names the death and the fix
    assert all(f"report: {out / 'report.html'}" in text for text in (trained, said, shown.stdout))
    report = json.loads((out / "report.json").read_text())
    assert report["state"]["state"] == "died" and report["provenance"]["signed_start"]
    assert_page_shows(out / "report.html", workspace, "died before its first logged step: RewardError",
                      "The run died: RewardError", "./model", "tester (human)", "the message names what is wrong")


def test_a_ctrl_c_is_recorded_as_a_stop_with_the_resume_command_and_watch_and_diagnose_say_so(tmp_path, capsys):
    """train.py's Ctrl-C (trainer/training_callbacks.StopOnCtrlC saved checkpoint-6 and raised): no traceback, exit
    130, a stop record naming the checkpoint and `grpo-rlvr train RUN --resume`; `watch --once` says STOPPED at once
    (exit 1), `diagnose` names it as a stop, not a death."""
    from grpo_rlvr.trainer.training_callbacks import StoppedByUser

    run = fake_run(tmp_path)
    out = run / "output"
    out.mkdir()
    (out / "metrics.jsonl").write_text(json.dumps({"step": 5, "loss": 0.1, "reward": 0.2}) + "\n")
    with pytest.raises(SystemExit) as e, recorded_crash(run):
        raise StoppedByUser("checkpoint-6")
    assert e.value.code == 130
    err = capsys.readouterr().err
    assert "Traceback" not in err and "train.py: the run was STOPPED (stopped by Ctrl-C (SIGINT)) after step 5: " \
        "checkpoint-6 saved" in err
    assert f"train.py: resume: grpo-rlvr train {run.resolve()} --resume" in err
    record = read_crash(out)
    assert (record["kind"], record["checkpoint"], record["resume"]) == (
        "stopped", "checkpoint-6", f"grpo-rlvr train {run.resolve()} --resume")

    shown = subprocess.run([*CLI, "watch", str(run), "--once"], capture_output=True, text=True, timeout=120)
    assert shown.returncode == 1 and "step 5/10" in shown.stdout, shown.stdout + shown.stderr
    assert "the run was STOPPED (stopped by Ctrl-C (SIGINT)) after step 5: checkpoint-6 saved" in shown.stdout
    assert f"resume: grpo-rlvr train {run.resolve()} --resume" in shown.stdout and "ETA" not in shown.stdout
    diag = subprocess.run([*CLI, "diagnose", str(run), "--json"], capture_output=True, text=True, timeout=120)
    finding = next(f for f in json.loads(diag.stdout)["findings"] if f["id"] == "stopped")
    assert finding["severity"] == "warning" and "crashed" not in [f["id"] for f in json.loads(diag.stdout)["findings"]]
    assert finding["recommendation"] == f"resume it: `grpo-rlvr train {run.resolve()} --resume`"


def test_a_ctrl_c_before_any_checkpoint_says_there_is_nothing_to_resume(tmp_path, capsys):
    run = fake_run(tmp_path)
    with pytest.raises(SystemExit) as e, recorded_crash(run):
        raise KeyboardInterrupt   # the second Ctrl-C, or one while the model loads
    assert e.value.code == 130
    record = read_crash(run / "output")
    assert record["checkpoint"] is None and record["resume"] is None
    err = capsys.readouterr().err
    assert "before its first logged step: no checkpoint saved" in err and "nothing to resume" in err
    assert "Traceback" not in err
