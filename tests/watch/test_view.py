"""`grpo-rlvr watch RUN` on files that grow while it reads them: a writer subprocess logs records as training
does (a line at a time, one of them split across two writes), the watchdog's events arrive, and the run ends."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from grpo_rlvr.records.watch_log import JsonlTail
from grpo_rlvr.watch.view import Watcher, format_view

CLI = [sys.executable, "-m", "grpo_rlvr"]
LOCK = {"grpo_config": {"max_steps": 20},
        "resolved": {"rewards": [{"name": "format"}, {"name": "exact_match"}]}}


def make_run(tmp_path):
    run = tmp_path / "run"
    (run / "output").mkdir(parents=True)
    (run / "brief.lock.json").write_text(json.dumps(LOCK))
    return run


def record(step, reward):
    return {"step": step, "loss": 0.01, "reward": reward, "rewards/format/mean": 0.5 + reward / 2,
            "rewards/exact_match/mean": reward, "step_time": 2.0}


WRITER = textwrap.dedent("""
    import json, sys, time
    out, events = sys.argv[1], json.loads(sys.argv[2])
    for name, text, pause in events:
        with open(out + "/" + name, "a") as fh:
            fh.write(text)
        time.sleep(pause)
""")


def test_watch_follows_a_growing_run_until_it_ends(tmp_path):
    run = make_run(tmp_path)
    lines = [json.dumps(record(s, 0.1 * s / 5)) + "\n" for s in (5, 10, 15)]
    finding = {"event": "finding", "step": 15, "id": "truncation", "severity": "warning",
               "title": "Many completions are truncated", "recommendation": "raise max_completion_length"}
    events = [("metrics.jsonl", lines[0], 0.6), ("metrics.jsonl", lines[1][:20], 0.4),  # half a line: not read yet
              ("metrics.jsonl", lines[1][20:], 0.6), ("metrics.jsonl", lines[2], 0.3),
              ("watch.jsonl", json.dumps(finding) + "\n", 0.6),
              ("metrics.jsonl", json.dumps({"step": 20, "train_runtime": 12.5}) + "\n", 0.0)]
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(run / "output"), json.dumps(events)])
    try:
        out = subprocess.run([*CLI, "watch", str(run), "--json", "--interval", "0.1", "--timeout", "120"],
                             capture_output=True, text=True, timeout=180)
    finally:
        writer.wait(timeout=60)
    assert out.returncode == 0, out.stderr
    frames = [json.loads(x) for x in out.stdout.splitlines()]
    steps = [f["step"] for f in frames]
    assert list(dict.fromkeys(s for s in steps if s is not None)) == [5, 10, 15], steps   # seen as they came
    assert all(f["records"] <= 3 for f in frames) and frames[-1]["records"] == 3
    last = frames[-1]
    assert last["ended"] and last["max_steps"] == 20 and last["reward"] == pytest.approx(0.3)
    assert last["rewards"]["exact_match"] == {"role": "correctness", "first": 0.1, "last": pytest.approx(0.3)}
    assert last["rewards"]["format"]["role"] == "format"
    assert [f["id"] for f in last["findings"]] == ["truncation"]
    assert any(f["eta_s"] == 10.0 for f in frames if f["step"] == 15 and not f["ended"])   # step_time × 5 steps


def test_once_prints_one_frame_with_progress_roles_and_the_stop(tmp_path):
    run = make_run(tmp_path)
    (run / "output" / "metrics.jsonl").write_text("".join(json.dumps(record(s, 0.02 * s)) + "\n" for s in (5, 10))
                                                  + json.dumps({"step": 10, "eval_reward": 0.25,
                                                                "eval_rewards/exact_match/mean": 0.2}) + "\n")
    stop = {"event": "stop", "step": 10, "id": "entropy_collapse", "severity": "critical",
            "title": "Entropy collapsed while quality stalled", "checkpoint": str(run / "output" / "checkpoint-10")}
    (run / "output" / "watch.jsonl").write_text(json.dumps({**stop, "event": "finding"}) + "\n" + json.dumps(stop)
                                                + "\n")
    out = subprocess.run([*CLI, "watch", str(run), "--once"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 1, out.stderr   # stopped: --once says so in its exit status too
    text = out.stdout
    assert f"{run}: step 10/20 (50%) | reward 0.100 → 0.200" in text   # stopped: no ETA
    assert "  correctness exact_match: 0.100 → 0.200" in text and "  format      format: 0.550 → 0.600" in text
    assert "held-out at step 10: reward 0.250, exact_match 0.200" in text
    assert "step 10: [critical] Entropy collapsed while quality stalled" in text
    assert f"watchdog STOPPED the run at step 10: Entropy collapsed while quality stalled; checkpoint {run}" in text
    # without --once it returns at once, exit 1: the watchdog stopped the run
    again = subprocess.run([*CLI, "watch", str(run), "--interval", "0.1"], capture_output=True, text=True, timeout=120)
    assert again.returncode == 1 and "STOPPED" in again.stdout


def test_bad_run_folder_exits_2(tmp_path):
    out = subprocess.run([*CLI, "watch", str(tmp_path / "nope")], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "not found" in out.stderr and "Traceback" not in out.stderr
    (tmp_path / "empty").mkdir()
    out = subprocess.run([*CLI, "watch", str(tmp_path / "empty")], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "brief.lock.json" in out.stderr


def test_tail_reads_only_complete_new_lines(tmp_path):
    p = tmp_path / "m.jsonl"
    t = JsonlTail(p)
    assert t.read() == []                                 # no file yet
    p.write_text('{"a": 1}\n{"b"')
    assert t.read() == [{"a": 1}]
    with p.open("a") as fh:
        fh.write(': 2}\nnot json\n')
    assert t.read() == [{"b": 2}] and t.skipped == 1
    assert t.read() == []


def test_a_run_not_started_says_so(tmp_path):
    run = make_run(tmp_path)
    w = Watcher(run)
    assert not w.poll()
    assert "no training record logged yet" in format_view(w.view)


def test_a_cleared_finding_leaves_the_list_and_is_shown_as_cleared(tmp_path):
    run = make_run(tmp_path)
    (run / "output" / "metrics.jsonl").write_text("".join(json.dumps(record(s, 0.02 * s)) + "\n" for s in (5, 10)))
    base = {"id": "truncation", "severity": "warning", "title": "Many completions are truncated"}
    events = [{"event": "finding", "step": 5, **base}, {"event": "cleared", "step": 10, **base},
              {"event": "finding", "step": 10, "id": "kl_blowup", "severity": "critical", "title": "KL blows up"}]
    (run / "output" / "watch.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    w = Watcher(run)
    w.poll()
    assert [f["id"] for f in w.view.findings] == ["kl_blowup"]
    assert w.view.to_dict()["cleared"] == [{"step": 10, "id": "truncation", "title": "Many completions are truncated"}]
    text = format_view(w.view)
    assert "step 10: [critical] KL blows up" in text and "step 10: cleared: Many completions are truncated" in text
    assert "[warning] Many completions are truncated" not in text


def test_watch_shows_tool_use_in_a_run_with_tools(tmp_path):
    run = make_run(tmp_path)
    rec = {**record(5, 0.2), "tools/call_frequency": 1.25, "tools/failure_frequency": 0.1, "tools/unavailable": 2.0,
           "completions/clipped_ratio": 0.05}
    (run / "output" / "metrics.jsonl").write_text(json.dumps(rec) + "\n")
    w = Watcher(run)
    w.poll()
    text = format_view(w.view)
    assert ("tools: 1.250 calls a rollout, 0.100 of them raised, 2.000 rollouts unscored (a tool failing on its "
            "own), 0.050 cut by the completion budget") in text
    assert w.view.to_dict()["tools"]["calls_per_rollout"] == 1.25
    plain = make_run(tmp_path / "plain")
    (plain / "output" / "metrics.jsonl").write_text(json.dumps(record(5, 0.2)) + "\n")
    w = Watcher(plain)
    w.poll()
    assert "tools:" not in format_view(w.view) and w.view.to_dict()["tools"] is None


HOLD = """
import sys, time
from grpo_rlvr.records.one_trainer import hold
assert hold(sys.argv[1], "grpo-rlvr train") is None
print("held", flush=True)
time.sleep(600)
"""


def test_a_run_whose_trainer_is_gone_without_a_record_says_so_at_once(tmp_path):
    """A trainer killed with SIGKILL (its launcher too) writes nothing; the run's lock (records/one_trainer), which
    its trainer held, is free: `watch` says no trainer runs it, exit 1, with --once and without, instead of an ETA
    (or waiting for its --timeout). While a trainer holds the lock, the same files read as a run going on."""
    run = make_run(tmp_path)
    (run / "output" / "metrics.jsonl").write_text("".join(json.dumps(record(s, 0.02 * s)) + "\n" for s in (5, 10)))
    trainer = subprocess.Popen([sys.executable, "-c", HOLD, str(run)], stdout=subprocess.PIPE, text=True)
    try:
        assert trainer.stdout.readline().strip() == "held"
        alive = subprocess.run([*CLI, "watch", str(run), "--once"], capture_output=True, text=True, timeout=120)
        assert alive.returncode == 0 and "step 10/20 (50%), ETA 20s" in alive.stdout, alive.stdout
    finally:
        trainer.kill()
        trainer.wait()
    for once in (["--once"], ["--interval", "0.1", "--timeout", "60"]):
        gone = subprocess.run([*CLI, "watch", str(run), *once], capture_output=True, text=True, timeout=120)
        assert gone.returncode == 1 and "ETA" not in gone.stdout, gone.stdout + gone.stderr
        assert f"NO TRAINER is running this run (none holds {run / '.trainer.lock'}) and it never ended" in gone.stdout
        assert f"`grpo-rlvr train {run} --resume` continues from its last checkpoint" in gone.stdout
        assert "--timeout" not in gone.stderr


def test_a_timeout_says_the_run_goes_on(tmp_path):
    run = make_run(tmp_path)
    (run / "output" / "metrics.jsonl").write_text(json.dumps(record(5, 0.1)) + "\n")
    out = subprocess.run([*CLI, "watch", str(run), "--interval", "0.1", "--timeout", "0.5"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 1 and "watch: --timeout 0.5 s passed before the run ended; it has not ended" in out.stderr
