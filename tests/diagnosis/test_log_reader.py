"""What diagnose reads and where it writes: run folders, TRL output_dirs with checkpoints, trainer_state.json,
metrics.jsonl (a half-written last line), completions parquet files, TensorBoard files (refused, clearly); big
files streamed; broken, empty and odd logs as findings or exit-2 errors, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from grpo_rlvr.diagnosis import diagnose, load_run_logs, log_reader
from grpo_rlvr.errors import InputFileError
from histories import HEALTHY, history
from paths import CLI


def state(path, records, **top):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"global_step": records[-1]["step"] if records else 0, **top,
                                "log_history": records}, indent=2, sort_keys=True))
    return path


def cli(*args, cwd):
    return subprocess.run([*CLI, "diagnose", *map(str, args)], capture_output=True, text=True, cwd=cwd)


# --- where the logs are --------------------------------------------------------------------------------------

def test_trl_output_dir_reads_the_newest_checkpoint(tmp_path):
    out = tmp_path / "Qwen-GRPO"
    full = history(**HEALTHY)
    state(out / "checkpoint-20" / "trainer_state.json", full[:4])
    state(out / "checkpoint-100" / "trainer_state.json", full)      # numerically, not alphabetically, newest
    state(out / "checkpoint-40" / "trainer_state.json", full[:8])
    res = diagnose(out)
    assert res.data["records"] == 20 and res.data["log"].endswith("checkpoint-100/trainer_state.json")
    assert "read checkpoint-100/trainer_state.json, the newest of 3 trainer_state.json files (global_step 100)" \
        in res.data["notes"]
    assert res.out_dir == out and (out / "diagnosis.md").is_file()       # the output_dir, not a checkpoint


def test_a_final_save_state_beats_an_older_checkpoint(tmp_path):
    full = history(**HEALTHY)
    state(tmp_path / "checkpoint-50" / "trainer_state.json", full[:10])
    state(tmp_path / "trainer_state.json", full)
    assert load_run_logs(tmp_path).source == tmp_path / "trainer_state.json"


def test_half_written_last_line_is_skipped_with_a_note(tmp_path):
    recs = history(**HEALTHY)
    text = "".join(json.dumps(r) + "\n" for r in recs)
    (tmp_path / "metrics.jsonl").write_text(text + '{"step": 105, "loss": 0.0')
    res = diagnose(tmp_path / "metrics.jsonl", out_dir=tmp_path)
    assert res.data["records"] == 20 and res.healthy
    assert res.data["notes"] == ["metrics.jsonl line 21 is half-written (the run stopped mid-write?): skipped"]
    assert "note: metrics.jsonl line 21 is half-written" in res.format()


def test_bad_line_elsewhere_names_file_and_line(tmp_path):
    lines = [json.dumps(r) for r in history(**HEALTHY)]
    lines[6] = lines[6][:20]
    (tmp_path / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    p = cli(tmp_path / "metrics.jsonl", cwd=tmp_path)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert f"{tmp_path / 'metrics.jsonl'}, line 7: not valid JSON" in p.stderr and "delete or fix that line" in p.stderr


def test_completions_parquet_alone(tmp_path):
    """A TRL output_dir that kept only completions/*.parquet: the rewards' roles come from their columns and
    the missing metric log is a finding."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    comp = tmp_path / "completions"
    comp.mkdir()
    for step in (1, 2, 3, 4):
        rows = [{"step": step, "prompt": f"p{g}", "completion": "<answer>1</answer>", "format_reward": 1.0,
                 "accuracy_reward": 0.0, "advantage": 0.0} for g in range(4) for _ in range(4)]
        pq.write_table(pa.Table.from_pylist(rows), comp / f"completions_{step:05d}.parquet")
    for target in (tmp_path, comp / "completions_00004.parquet"):
        res = diagnose(target, out_dir=tmp_path / "d")
        assert {"no_records", "no_learning_signal"} <= {f.id for f in res.findings}, res.format()
        assert res.data["roles"] == {"accuracy_reward": {"role": "correctness", "how": "name"},
                                     "format_reward": {"role": "format", "how": "name"}}


def test_tensorboard_files_get_a_plain_error(tmp_path):
    run = tmp_path / "runs" / "Dec01_10-00-00_host"
    run.mkdir(parents=True)
    (run / "events.out.tfevents.1733047200.host.1.0").write_bytes(b"\x00" * 64)
    for target in (tmp_path, run / "events.out.tfevents.1733047200.host.1.0"):
        p = cli(target, cwd=tmp_path)
        assert p.returncode == 2 and "Traceback" not in p.stderr
        assert "no TensorBoard reader is installed" in p.stderr and "trainer_state.json" in p.stderr


# --- streaming -----------------------------------------------------------------------------------------------

def test_streamed_log_history_equals_json_load_with_a_bounded_buffer(tmp_path, monkeypatch):
    """Tiny chunks cut numbers, strings and records at every possible place; the buffer never holds much more
    than one record and one chunk, whatever the file's size."""
    recs = history(n=60, **HEALTHY)
    recs[5]["note"] = "a string, with \"quotes\" and \\ and ] and }"
    recs[7]["nested"] = {"a": [1, 2, {"b": None}]}
    p = state(tmp_path / "trainer_state.json", recs, stateful_callbacks={"x": {"y": [1, 2, 3]}}, best_metric=None)
    chunk = 37
    monkeypatch.setattr(log_reader, "CHUNK_CHARS", chunk)
    sizes = []
    fill = log_reader._Buffer._fill

    def spy(self):
        fill(self)
        sizes.append(len(self.buf))

    monkeypatch.setattr(log_reader._Buffer, "_fill", spy)
    got = list(log_reader.state_records(p, []))
    assert got == json.loads(p.read_text())["log_history"]
    longest = max(len(json.dumps(r, indent=2)) for r in recs) + 200   # a record as indented in the file
    assert max(sizes) <= 2 * longest + chunk, (max(sizes), p.stat().st_size)


# --- degenerate logs are findings, not health ----------------------------------------------------------------

def test_empty_metrics_is_no_records_not_healthy(tmp_path):
    (tmp_path / "metrics.jsonl").write_text("")
    res = diagnose(tmp_path, out_dir=tmp_path / "d")
    assert [f.id for f in res.findings] == ["no_records"] and not res.healthy
    assert "healthy" not in res.format().lower()


def test_four_records_are_too_few(tmp_path):
    state(tmp_path / "trainer_state.json", history(n=4, **HEALTHY))
    res = diagnose(tmp_path, out_dir=tmp_path / "d")
    f = next(x for x in res.findings if x.id == "too_few_records")
    assert f.title == "Too few log records to judge trends (4; 8 needed)" and not res.healthy
    assert "steps 5–20" in f.evidence[0]


def test_nan_metrics_are_named_with_their_step(tmp_path):
    nan = float("nan")
    recs = history(**{**HEALTHY, "entropy": lambda i: nan, "loss": lambda i: 0.01 if i < 6 else nan,
                      "rewards__format__mean": lambda i: float("inf") if i == 9 else 0.7})
    p = tmp_path / "trainer_state.json"
    p.write_text(json.dumps({"log_history": recs}))             # json writes NaN and Infinity, as TRL's state does
    res = diagnose(p, out_dir=tmp_path / "d")
    f = next(x for x in res.findings if x.id == "non_finite_metrics")
    assert f.severity == "critical"
    assert "entropy is nan from step 5 (20 of 20 logs)" in f.evidence
    assert "loss is nan from step 35 (14 of 20 logs)" in f.evidence
    assert "rewards/format/mean is inf from step 50 (1 of 20 logs)" in f.evidence
    assert "entropy_collapse" not in {x.id for x in res.findings}       # no "from nan to nan"
    assert "nan" not in json.dumps([x["evidence"] for x in res.data["findings"] if x["id"] != "non_finite_metrics"])


def test_null_reward_means_are_named(tmp_path):
    recs = history(**HEALTHY)
    for r in recs[10:]:
        r["rewards/exact_match/mean"] = None   # TRL writes null when a reward returned None for a whole step
    res = diagnose(state(tmp_path / "trainer_state.json", recs), out_dir=tmp_path / "d")
    f = next(x for x in res.findings if x.id == "non_finite_metrics")
    assert f.severity == "warning" and "rewards/exact_match/mean is null from step 55 (10 of 20 logs)" in f.evidence


def test_missing_key_metrics(tmp_path):
    keep = {k: v for k, v in HEALTHY.items() if k not in ("entropy", "completions__mean_length")}
    res = diagnose(state(tmp_path / "trainer_state.json", history(**keep)), out_dir=tmp_path / "d")
    f = next(x for x in res.findings if x.id == "missing_key_metrics")
    assert "entropy is not in the log: not checked: entropy collapse" in f.evidence
    assert any(e.startswith("completions/mean_length is not in the log") for e in f.evidence)
    assert not res.healthy


@pytest.mark.parametrize("content,message", [
    ("[]", "the file is a list; a trainer_state.json is an object with a log_history list"),
    ("", "the file is empty"),
    ('{"global_step": 3}', "no log_history"),
    ('{"log_history": 5}', "log_history is not a list"),
    ('{"log_history": [{"step": 1, "loss": 0.1}, {"step": 2, "lo', "not valid JSON"),
    ('{"log_history": [' + "[" * 100000 + "]" * 100000 + "]}", "nested too deeply"),
    ("\xff\xfe{}", "not UTF-8"),
])
def test_broken_trainer_state_is_exit_2(tmp_path, content, message):
    p = tmp_path / "trainer_state.json"
    if content.startswith("\xff"):
        p.write_bytes(b"\xff\xfe{}")
    else:
        p.write_text(content)
    r = cli(p, cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and message in r.stderr and str(p) in r.stderr


def test_odd_log_history_values_are_a_finding(tmp_path):
    p = tmp_path / "trainer_state.json"
    p.write_text(json.dumps({"log_history": [1, "a", None, {"loss": 1}, {"step": "3"},
                                             {"step": 4, "loss": {"deep": [[[[1]]]]}}]}))
    res = diagnose(p, out_dir=tmp_path / "d")
    assert [f.id for f in res.findings] == ["no_records"], res.format()
    assert res.data["notes"][0].startswith("5 log entries are not a record with an integer step (e.g. 1, 'a', None)")


# --- where the diagnosis goes --------------------------------------------------------------------------------

def test_a_lone_file_elsewhere_gets_its_diagnosis_in_the_current_folder(tmp_path):
    logs = tmp_path / "someone-elses" / "trainer_state.json"
    state(logs, history(**HEALTHY))
    here = tmp_path / "here"
    here.mkdir()
    os.chmod(logs.parent, 0o555)   # a folder the user only reads from
    try:
        r = cli(logs, cwd=here)
    finally:
        os.chmod(logs.parent, 0o755)
    assert r.returncode == 0, r.stderr
    assert (here / "diagnosis.md").is_file() and (here / "diagnosis.json").is_file()
    assert sorted(p.name for p in logs.parent.iterdir()) == ["trainer_state.json"]


def test_a_run_folder_gets_it_beside_its_logs_and_out_overrides(tmp_path):
    run = tmp_path / "run"
    (run / "output").mkdir(parents=True)
    (run / "output" / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in history(**HEALTHY)))
    assert diagnose(run).out_dir == run / "output" and (run / "output" / "diagnosis.md").is_file()
    r = cli(run, "--out", tmp_path / "d", cwd=tmp_path)
    assert r.returncode == 0 and (tmp_path / "d" / "diagnosis.json").is_file()


def test_not_found_is_exit_2(tmp_path):
    r = cli(tmp_path / "nope", cwd=tmp_path)
    assert r.returncode == 2 and "not found" in r.stderr and "Traceback" not in r.stderr
    with pytest.raises(InputFileError, match="no metrics.jsonl or trainer_state.json"):
        diagnose(tmp_path)


def test_completions_files_in_step_order_and_bounded(tmp_path, monkeypatch):
    """Steps past 99999 sort after 99999 (TRL pads to 5 digits); a long run reads its first and last files."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from grpo_rlvr.diagnosis import metrics

    monkeypatch.setattr(metrics, "MAX_COMPLETION_FILES", (2, 3))
    (tmp_path / "completions").mkdir()
    steps = [99997, 99998, 99999, 100000, 100001, 100002, 100003]
    for s in steps:
        rows = [{"step": s, "prompt": "p", "completion": "c", "r": 1.0, "advantage": 0.0}]
        pq.write_table(pa.Table.from_pylist(rows), tmp_path / "completions" / f"completions_{s:05d}.parquet")
    state(tmp_path / "trainer_state.json", history(**HEALTHY))
    logs = load_run_logs(tmp_path)
    assert [r["step"] for r in logs.completions] == [99997, 99998, 100001, 100002, 100003]
    assert "read 5 of 7 completions files (the first 2 and the last 3)" in logs.notes


def test_a_run_shorter_than_its_logging_steps_has_its_one_record(tmp_path):
    """A 3-step run with logging_steps 5 logs once, at its end: TRL puts the steps' metrics into the summary record
    (train_runtime beside reward and the tool metrics). That record is the run's history, not "no records"."""
    record = {"step": 3, "train_runtime": 8.4, "train_loss": 4.8e-05, "reward": 0.5, "reward_std": 0.54,
              "rewards/format/mean": 0.65, "rewards/exact_match/mean": 0.37, "tools/call_frequency": 0.66,
              "tools/failure_frequency": 0.19, "entropy": 0.26, "kl": 0.004, "epoch": 0.012}
    (tmp_path / "metrics.jsonl").write_text(json.dumps(record) + "\n")
    res = diagnose(tmp_path, out_dir=tmp_path / "d")
    assert res.data["records"] == 1, res.format()
    assert "no_records" not in [f.id for f in res.findings]
    said = res.format()
    assert "reward 0.5 → 0.5" in said and "calls a rollout 0.66" in said and "no training records" not in said, said
