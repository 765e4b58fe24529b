"""The watchdog inside training (diagnosis/watchdog.py), replayed on recorded log histories: a healthy run (the
real demo's log, and the synthetic healthy history) is never stopped; each failure mode it stops for stops the
run once it has persisted over the window, with a checkpoint asked of the Trainer and the variant named. One real
tiny run that stops is in tests/diagnosis/test_runs.py."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from transformers import TrainerControl, TrainerState

from grpo_rlvr.diagnosis.detectors import MIN_RECORDS_FOR_TREND
from grpo_rlvr.diagnosis.watchdog import WATCH_LOG, Watch, Watchdog, stop_message
from histories import ENTROPY_COLLAPSE, HEALTHY, history, write_completions

DEMO = Path(__file__).resolve().parent.parent / "data" / "demo_trainer_state.json"

LENGTH = {"completions__mean_length": lambda i: 20 + 3 * i, "rewards__exact_match__mean": lambda i: 0.1}
FORMAT_HACK = {"rewards__format__mean": lambda i: min(1.0, 0.5 + 0.05 * i), "rewards__exact_match__mean": lambda i: 0.1}
COLLAPSE = {"frac_reward_zero_std": lambda i: 0.1 if i < 3 else 1.0, "rewards__exact_match__mean":
            lambda i: 0.2 if i < 3 else 0.0, "reward": lambda i: 0.4 if i < 3 else 0.1}


def replay(folder, records, **kw) -> Watch:
    w = Watch(folder, stream=io.StringIO(), **kw)
    for r in records:
        if w.add(r):
            w.check(r["step"])
    return w


def events(folder) -> list[dict]:
    p = Path(folder) / WATCH_LOG
    return [json.loads(line) for line in p.read_text().splitlines()] if p.is_file() else []


def test_the_real_demo_run_is_never_stopped(tmp_path):
    records = json.loads(DEMO.read_text())["log_history"]
    w = replay(tmp_path, records)
    assert w.checks == len(records) == 30
    assert w.stopped is None, w.stopped
    assert not [e for e in events(tmp_path) if e["event"] in ("stop", "would_stop")]


def test_a_finding_that_goes_away_is_said_to_have_cleared(tmp_path):
    """The real demo log: truncation at steps 5-25 and the format-hacking suspicion at 40-105 (the demo learns the
    format first; correctness rises later), each reported when it comes and said to have cleared when it goes."""
    w = replay(tmp_path, json.loads(DEMO.read_text())["log_history"])
    seen = [(e["event"], e["id"], e["step"]) for e in events(tmp_path)]
    assert seen == [("finding", "truncation", 5), ("cleared", "truncation", 30),
                    ("finding", "reward_hacking", 40), ("cleared", "reward_hacking", 110)], seen
    said = w.stream.getvalue()
    assert "watch: cleared: Many completions are truncated (step 30)" in said
    assert "watch: cleared: The format part rises while correctness does not" in said and not w.reported


def test_the_healthy_history_is_never_stopped_nor_reported(tmp_path):
    w = replay(tmp_path, history(**HEALTHY))
    assert w.checks == 20 and w.stopped is None and events(tmp_path) == []


@pytest.mark.parametrize("override,finding,variant", [
    (ENTROPY_COLLAPSE, "entropy_collapse", "dapo"),
    (LENGTH, "length_reward_coupling", "dr_grpo"),
    (COLLAPSE, "no_learning_signal", None),
])
def test_each_stopping_failure_mode_stops_after_the_window(tmp_path, override, finding, variant):
    w = replay(tmp_path, history(**{**HEALTHY, **override}))
    stop = w.stopped
    assert stop is not None and stop["event"] == "stop" and stop["id"] == finding, events(tmp_path)
    assert stop["variant"] == variant and stop["checks"] == 3
    assert stop["checkpoint"] == str(tmp_path / f"checkpoint-{stop['step']}")
    log = events(tmp_path)
    first = next(e for e in log if e["event"] == "finding" and e["id"] == finding)
    written = next(e for e in log if e["event"] == "stop")   # the replay goes on: later findings may follow it
    assert {k: v for k, v in written.items() if k != "time"} == json.loads(json.dumps(stop))
    # It persisted over the window (three checks, one per log of 5 steps), once enough records judge a trend.
    assert stop["step"] == max(first["step"] + 10, 5 * MIN_RECORDS_FOR_TREND)
    assert f"[{first['severity']}]" in w.stream.getvalue()


def test_format_rising_without_correctness_is_reported_never_stopped(tmp_path):
    """A healthy run learns the format first (the real demo at step 55: format 0.37 → 0.63, correctness flat): the
    watchdog reports the suspicion and lets the run go on; diagnose judges the whole run."""
    w = replay(tmp_path, history(**{**HEALTHY, **FORMAT_HACK}))
    assert w.stopped is None
    assert [e["id"] for e in events(tmp_path)] == ["reward_hacking"]


def weighted_lock(format_weight: float, correctness_weight: float) -> dict:
    return {"resolved": {"rewards": [{"name": "format", "weight": format_weight, "kind": None, "params": {}},
                                     {"name": "exact_match", "weight": correctness_weight, "kind": None,
                                      "params": {}}]}}


def test_format_rising_when_nothing_pays_for_correctness_is_critical_and_stopped(tmp_path):
    """The same log, but the brief weighs correctness 0 (the run is paid for the format alone): it cannot learn
    anything else, so the finding is critical and the watchdog stops the run, naming the weight to give. With
    correctness weighted, the same log is only reported (above)."""
    w = replay(tmp_path / "unpaid", history(**{**HEALTHY, **FORMAT_HACK}), lock=weighted_lock(1.0, 0.0))
    assert w.stopped is not None and w.stopped["id"] == "reward_hacking" and w.stopped["severity"] == "critical"
    assert "exact_match weighs 0 in the brief: the run is paid for the format alone" in w.stopped["evidence"]
    assert w.stopped["brief_change"] == {"rewards": "set exact_match's weight to 1.0"}
    assert "Give exact_match a weight" in stop_message(w.stopped, tmp_path / "run")
    paid = replay(tmp_path / "paid", history(**{**HEALTHY, **FORMAT_HACK}), lock=weighted_lock(0.2, 1.0))
    assert paid.stopped is None and paid.reported["reward_hacking"][0] == "warning"


def test_a_longer_window_stops_later_and_never_on_a_short_run(tmp_path):
    early = replay(tmp_path / "a", history(**{**HEALTHY, **ENTROPY_COLLAPSE})).stopped["step"]
    later = replay(tmp_path / "b", history(**{**HEALTHY, **ENTROPY_COLLAPSE}), window=5).stopped["step"]
    assert later == early + 10
    assert replay(tmp_path / "c", history(**{**HEALTHY, **ENTROPY_COLLAPSE}), window=50).stopped is None
    assert replay(tmp_path / "d", history(n=MIN_RECORDS_FOR_TREND - 1, **{**HEALTHY, **ENTROPY_COLLAPSE})).stopped is None


def test_checking_every_fourth_log(tmp_path):
    w = replay(tmp_path, history(**{**HEALTHY, **ENTROPY_COLLAPSE}), every=4)
    assert w.checks == 5 and w.stopped["step"] % 20 == 0


def test_stop_on_never_records_the_moment_and_lets_the_run_go_on(tmp_path):
    cb = Watchdog(tmp_path, tmp_path / "output", stop_on="never", stream=io.StringIO())
    control = feed(cb, history(**{**HEALTHY, **ENTROPY_COLLAPSE}))
    assert not control.should_training_stop and not control.should_save
    assert cb.watch.stopped["event"] == "would_stop" and cb.watch.stopped["checkpoint"] is None
    assert [e["event"] for e in events(tmp_path / "output")].count("would_stop") == 1


def feed(cb, records, max_steps=0) -> TrainerControl:
    state, control = TrainerState(max_steps=max_steps), TrainerControl()
    for r in records:
        state.global_step = r["step"]
        control = cb.on_log(None, state, control, logs={k: v for k, v in r.items() if k != "step"}) or control
        if control.should_training_stop:
            break
    return control


# Each rank of a two-process gloo group feeds the same collapsing log to its own Watchdog (only rank 0 checks)
RANKS = """
import io, json, sys
import torch.distributed as dist
from transformers import TrainerControl, TrainerState
from grpo_rlvr.diagnosis.watchdog import Watchdog
from histories import ENTROPY_COLLAPSE, HEALTHY, history

dist.init_process_group("gloo")
rank = dist.get_rank()
cb = Watchdog(sys.argv[1], sys.argv[1] + f"/output-{rank}", stream=io.StringIO())
state, control = TrainerState(), TrainerControl()
state.is_world_process_zero = rank == 0
for r in history(**{**HEALTHY, **ENTROPY_COLLAPSE}):
    state.global_step = r["step"]
    control = cb.on_log(None, state, control, logs={k: v for k, v in r.items() if k != "step"}) or control
    if control.should_training_stop:
        break
with open(f"{sys.argv[1]}/rank{rank}.json", "w") as f:   # a file each: two ranks' prints can interleave
    json.dump({"step": state.global_step, "stopped_run": cb.stopped_run, "checks": cb.watch.checks}, f)
dist.destroy_process_group()
"""


def test_every_rank_agrees_that_the_watchdog_stopped_the_run(tmp_path):
    """train.py skips the final save when the watchdog stopped the run; under FSDP or ZeRO-3 that save is a
    collective, so a rank that thought the run went on would wait there for the others. Two real processes."""
    import os
    import socket
    import subprocess
    import sys

    script = tmp_path / "ranks.py"
    script.write_text(RANKS)
    here = Path(__file__).parent
    # loopback only, by address: gloo otherwise resolves this machine's hostname, which a minimal root (a CI lane)
    # may not know, and waits on it
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(here), str(here.parent)]), OMP_NUM_THREADS="1",
               GLOO_SOCKET_IFNAME="lo")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nnodes", "1", "--nproc_per_node", "2",
                           "--master_addr", "127.0.0.1", "--master_port", str(port), str(script), str(tmp_path)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    r0, r1 = (json.loads((tmp_path / f"rank{r}.json").read_text()) for r in (0, 1))
    assert r0["stopped_run"] and r1["stopped_run"], (r0, r1)
    assert r0["step"] == r1["step"]   # stopped at the same step
    assert r0["checks"] > 0 and r1["checks"] == 0   # rank 0 alone decided


def test_the_callback_asks_the_trainer_for_a_checkpoint_and_a_stop(tmp_path):
    run = tmp_path / "run"
    out = run / "output"
    cb = Watchdog(run, out, stream=io.StringIO())
    control = feed(cb, history(**{**HEALTHY, **ENTROPY_COLLAPSE}))
    assert control.should_training_stop and control.should_save and cb.stopped_run
    step = cb.watch.stopped["step"]
    (out / f"checkpoint-{step}").mkdir(parents=True)            # the Trainer saves it before on_train_end
    state = TrainerState()
    state.global_step = step
    cb.on_train_end(None, state, control)
    said = cb.stream.getvalue()
    assert f"watch: stopping at step {step}" in said
    assert f"checkpoint saved: {out / f'checkpoint-{step}'}" in said
    assert "variant: dapo; brief change: variant: {name: dapo, diagnosis:" in said
    assert f"next: grpo-rlvr diagnose {run} --apply run-dapo.yaml" in said


def test_stop_message_without_a_variant_gives_the_brief_change(tmp_path):
    w = replay(tmp_path, history(**{**HEALTHY, **COLLAPSE}))
    msg = stop_message(w.stopped, tmp_path / "run")
    assert "[critical] No learning signal: the run lost it" in msg
    assert "brief change: grpo: {learning_rate: divide grpo.learning_rate by 10}" in msg
    assert "variant:" not in msg and "checkpoint: " in msg and "(not found)" in msg


def test_completions_files_are_read_once(tmp_path):
    steps = [5 * (i + 1) for i in range(6)]
    write_completions(tmp_path, steps, lambda i, g: [(f"<answer>{i}</answer>", 0.0, 0.0)] * 8)
    w = Watch(tmp_path, stream=io.StringIO())
    assert len(w.logs().completions) == 6 * 4 * 8
    (tmp_path / "completions" / "completions_00005.parquet").write_bytes(b"not parquet any more")
    write_completions(tmp_path, [35], lambda i, g: [("x", 0.0, 0.0)] * 8)
    rows = w.logs().completions
    assert len(rows) == 7 * 4 * 8 and sorted(w.seen_files)[-1] == "completions_00035.parquet"


def test_the_brief_watch_section_reaches_the_rendered_train_py(workspace):
    import yaml

    from artifacts import make_artifact
    from briefs import example_brief_text
    from grpo_rlvr.brief.loader import load_brief
    from grpo_rlvr.run.render import render

    assert load_brief(workspace / "brief.yaml").watch.to_dict() == {"stop_on": "critical", "every": 1, "window": 3,
                                                                    "max_unscorable": 0.05}
    data = yaml.safe_load(example_brief_text())
    data["watch"] = {"stop_on": "never", "window": 5, "max_unscorable": 0.01}
    (workspace / "brief.yaml").write_text(yaml.safe_dump(data))
    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    run = render(workspace / "brief.yaml").dir
    text = (run / "train.py").read_text()
    assert "WATCH = {'stop_on': 'never', 'every': 1, 'window': 5, 'max_unscorable': 0.01}" in text
    assert "Watchdog(RUN_DIR, Path(config.output_dir), **WATCH)" in text


def test_no_stop_at_the_last_step(tmp_path):
    """A run that ends at the step the watchdog would stop at ends as planned (exit 0): stopping saves nothing."""
    records = history(**{**HEALTHY, **ENTROPY_COLLAPSE})
    at = replay(tmp_path / "a", records).stopped["step"]
    cb = Watchdog(tmp_path, tmp_path / "b", stream=io.StringIO())
    control = feed(cb, [r for r in records if r["step"] <= at], max_steps=at)
    assert not control.should_training_stop and cb.watch.stopped is None and not cb.stopped_run
    assert any(e["id"] == "entropy_collapse" for e in events(tmp_path / "b"))   # still reported


def test_checks_are_put_off_when_they_took_more_than_their_share_of_training_time(tmp_path):
    """The budget: checks may take FREE_CHECK_S plus TIME_BUDGET of the time since training began; a due check
    past it waits for a later log (and is counted), and the cost is written at the end of training."""
    import time

    from grpo_rlvr.diagnosis.watchdog import FREE_CHECK_S, TIME_BUDGET

    w = replay(tmp_path, history(**HEALTHY))
    assert w.checks > 0 and w.put_off == 0 and 0 < w.spent < FREE_CHECK_S   # a short run: every due check ran
    w.began = time.monotonic() - 100.0
    w.spent = FREE_CHECK_S + TIME_BUDGET * 100.0 + 0.5   # more than the budget of 100 s of training
    assert not w.within_budget() and w.put_off == 1
    w.spent = FREE_CHECK_S + TIME_BUDGET * 100.0 - 0.5
    assert w.within_budget() and w.put_off == 1

    cb = Watchdog(tmp_path / "run", tmp_path / "out", stream=io.StringIO())
    records = history(**HEALTHY)
    feed(cb, records[:5])
    cb.watch.spent = 1e9                                  # every later due check is now over the budget
    feed(cb, records[5:10])
    assert cb.watch.checks == 5 and cb.watch.put_off == 5
    state = TrainerState()
    state.global_step = 10
    cb.on_train_end(None, state, TrainerControl())
    cost = [e for e in events(tmp_path / "out") if e["event"] == "cost"]
    assert cost and cost[-1]["checks"] == 5 and cost[-1]["put_off"] == 5 and cost[-1]["elapsed_s"] > 0


def test_dashboard_rows_go_to_the_trainers_integrations_only_and_a_failing_one_is_said_once(tmp_path, capsys):
    """_to_dashboards calls transformers' integration callbacks (a real TensorBoard one here) with the watchdog's
    row, leaves the Trainer's other callbacks alone, and a dashboard that raises is said once and never stops it."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from torch.utils.tensorboard import SummaryWriter
    from transformers import TrainerCallback, TrainingArguments
    from transformers.integrations import TensorBoardCallback

    from grpo_rlvr.diagnosis.watchdog import _to_dashboards

    calls = []

    class NotADashboard(TrainerCallback):
        def on_log(self, args, state, control, logs=None, **kwargs):
            calls.append(logs)

    class Broken(TensorBoardCallback):
        def on_log(self, args, state, control, logs=None, **kwargs):
            raise OSError("disk full")

    tb = TensorBoardCallback(tb_writer=SummaryWriter(str(tmp_path / "tb")))
    state = TrainerState()
    state.global_step, state.is_world_process_zero = 4, True
    args = TrainingArguments(output_dir=str(tmp_path / "out"), report_to="none")
    failed: set[str] = set()
    for _ in range(3):
        _to_dashboards([NotADashboard(), Broken(), tb], args, state, TrainerControl(), {"watch/stopped": 1}, failed)
    tb.tb_writer.close()
    assert calls == [] and failed == {"Broken"}
    assert capsys.readouterr().err.count("watch: could not log to Broken: disk full (training goes on)") == 1
    events = EventAccumulator(str(tmp_path / "tb"))
    events.Reload()
    assert [(e.step, e.value) for e in events.Scalars("train/watch/stopped")] == [(4, 1.0)] * 3


def test_a_destroyed_policy_is_stopped_before_a_trend_window(tmp_path):
    """Correctness 0.083 at the start, then none: a fact at any length of run (64 completions a step, a log every
    2 steps). Present once two logs of 128 samples held no success (step 8), stopped at the third check in a row
    (step 12), four records short of the eight a trend needs."""
    lock = {"grpo_config": {"per_device_train_batch_size": 64, "gradient_accumulation_steps": 1, "logging_steps": 2}}
    records = [{**r, "step": 2 * (i + 1)} for i, r in enumerate(history(
        8, **{**HEALTHY, "rewards__exact_match__mean": lambda i: 0.083 if i < 2 else 0.0}))]
    w = replay(tmp_path, records, lock=lock)
    assert w.stopped is not None and w.stopped["id"] == "correctness_collapsed", events(tmp_path)
    assert w.stopped["step"] == 12 and w.stopped["step"] < 2 * MIN_RECORDS_FOR_TREND


def test_too_many_unscorable_samples_stop_the_run_naming_the_rows(tmp_path):
    """The tally the trainer writes (records/unscorable.py): a quarter of the samples left unscored over 16 steps
    of 8 groups, with confidence above 5%: stopped at the third check, rows named in the stop."""
    from grpo_rlvr.records.unscorable import TALLY

    tally = {"seen": 64 * 16, "unscorable": 256, "num_generations": 8, "rows": [
        {"row": 7, "source": "data/train.jsonl:8", "reward": "unit_tests", "why": "column 'tests': tests[1] is not "
         "valid Python", "samples": 128, "first_step": 1, "split": "train"}], "more_rows": 3}
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / TALLY).write_text(json.dumps(tally))
    w = replay(tmp_path, history(**HEALTHY))
    assert w.stopped is not None and w.stopped["id"] == "unscorable_samples" and w.stopped["step"] == 15
    assert w.stopped["severity"] == "critical"
    assert any("dataset row 7 (data/train.jsonl:8), reward 'unit_tests': column 'tests'" in e
               for e in w.stopped["evidence"]), w.stopped["evidence"]
    (tmp_path / TALLY).write_text(json.dumps({**tally, "unscorable": 8}))   # one row met once: named, not stopped
    (tmp_path / WATCH_LOG).unlink()
    w = replay(tmp_path, history(**HEALTHY))
    assert w.stopped is None and [e["severity"] for e in events(tmp_path)] == ["warning"]
