"""What happened, as the report numbers it: the watchdog's findings with the steps each was present, its stop, and
diagnose's judgement of the whole log, merged by id; and how the run stands."""

from __future__ import annotations

from grpo_rlvr.diagnosis.detectors import Finding
from grpo_rlvr.report.findings import merged, run_state, summary_record, watchdog_log
from report.conftest import write_audit, write_jsonl

HACKING = {"event": "finding", "id": "reward_hacking", "title": "The format part rises", "severity": "warning",
           "evidence": ["format 0.3 → 0.6"], "recommendation": "read the completions"}


def test_each_watchdog_finding_keeps_the_steps_it_was_present(tmp_path):
    write_jsonl(tmp_path / "watch.jsonl", [
        {**HACKING, "step": 40}, {"event": "cleared", "id": "reward_hacking", "step": 70},
        {**HACKING, "step": 90}, {**HACKING, "step": 95, "severity": "critical", "title": "worse"},
        {"event": "cost", "step": 100, "checks": 20, "check_s": 0.1}])
    (tmp_path / "watch.jsonl").open("a").write('{"event": "finding", "id": "x", "step": 3')  # a torn last line
    w = watchdog_log(tmp_path)
    f = w["findings"]["reward_hacking"]
    assert f["spans"] == [[40, 70], [90, None]] and f["severity"] == "critical" and f["title"] == "worse"
    assert w["stop"] is None and w["cost"]["checks"] == 20 and list(w["findings"]) == ["reward_hacking"]


def test_merged_findings_put_the_stop_first_and_keep_both_sources_of_one_id(tmp_path):
    write_jsonl(tmp_path / "watch.jsonl", [{**HACKING, "step": 40}, {"event": "cleared", "id": "reward_hacking",
                                                                       "step": 70}])
    write_audit(tmp_path, diverge=True)   # the review audit's stop, appended by its own writer
    diagnosed = [Finding("entropy_collapse", "Entropy collapsed", "critical", ["0.7 → 0.1"], "raise beta"),
                 Finding("reward_hacking", "The format part rises (whole run)", "warning", ["e"], "fix the reward")]
    out = merged(watchdog_log(tmp_path), diagnosed)
    assert [(f["number"], f["id"]) for f in out] == [(1, "review_audit"), (2, "entropy_collapse"),
                                                      (3, "reward_hacking")]
    stop, entropy, hacking = out
    assert stop["stop_step"] == 0 and stop["stopped"] and stop["present"] and stop["sources"] == ["review audit"]
    assert entropy["run_wide"] and entropy["spans"] == [] and entropy["sources"] == ["diagnose"]
    assert hacking["sources"] == ["watchdog", "diagnose"] and hacking["spans"] == [[40, 70]]
    assert hacking["title"] == "The format part rises (whole run)" and hacking["present"]


def test_a_finding_the_watchdog_saw_clear_is_not_present_at_the_end(tmp_path):
    write_jsonl(tmp_path / "watch.jsonl", [{**HACKING, "step": 40}, {"event": "cleared", "id": "reward_hacking",
                                                                       "step": 70}])
    (f,) = merged(watchdog_log(tmp_path), [])
    assert not f["present"] and f["number"] == 1


def test_the_state_of_a_run_from_its_records():
    crash = {"exception": "KeyError", "message": "'value'", "last_step": 15}
    assert run_state(crash, None, {"step": 20}, 15, False) == {
        "state": "died", "text": "died after step 15: KeyError: 'value'"}
    stop = {"event": "stop", "step": 8, "title": "No learning signal", "checkpoint": "/r/output/checkpoint-8"}
    assert run_state(None, stop, {"step": 8}, 8, False)["text"] == ("stopped by the watchdog at step 8: No learning "
                                                                     "signal; checkpoint /r/output/checkpoint-8")
    audit = {"event": "stop", "id": "review_audit", "step": 0, "title": "rollouts differ", "checkpoint": None}
    assert run_state(None, audit, None, None, False) == {
        "state": "stopped", "text": "stopped by the review audit at step 0, before the optimizer stepped: rollouts "
                                    "differ"}
    # TRL's train_runtime is the training loop alone, named so beside train's wall time ("after 24 s" and "in 4 s"
    # read as a contradiction)
    assert run_state(None, {**stop, "event": "would_stop"}, {"step": 20, "train_runtime": 41.6}, 20, False) == {
        "state": "finished", "text": "finished at step 20; training loop 42 s (TRL's train_runtime: loading the "
                                     "model and data not counted)"}
    assert run_state(None, None, None, 12, False)["state"] == "running"
    assert run_state(None, None, None, None, True) == {
        "state": "not started", "text": "UNREVIEWED SMOKE TEST (the gate was skipped; nothing here is a trained "
                                        "model): nothing logged yet"}
    assert run_state({"exception": None, "message": "killed by SIGKILL", "last_step": None}, None, None, None,
                     False)["text"] == "died before its first logged step: killed by SIGKILL"


def test_the_summary_record_is_read_from_the_end_of_the_log(tmp_path):
    assert summary_record(tmp_path) is None
    write_jsonl(tmp_path / "metrics.jsonl", [{"step": s, "reward": 0.1} for s in range(1, 2000)])
    assert summary_record(tmp_path) is None
    with (tmp_path / "metrics.jsonl").open("a") as fh:
        fh.write('{"step": 1999, "train_runtime": 3.5}\n{"step": 1999, "eval_reward": 0.2}\n')
    assert summary_record(tmp_path) == {"step": 1999, "train_runtime": 3.5}
