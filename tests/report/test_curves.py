"""The curves as pictures: a panel per metric the run logged (none for one it did not), each finding marked on the
panels of the metric it is about, a stop and a death drawn where they happened."""

from __future__ import annotations

import base64

from grpo_rlvr.diagnosis.metrics import load_run_logs
from grpo_rlvr.diagnosis.roles import infer_roles
from grpo_rlvr.report.curves import curves
from histories import HEALTHY, history
from report.conftest import write_jsonl


def finding(number: int, fid: str, spans=(), stop_step=None, run_wide=False, severity="warning") -> dict:
    return {"number": number, "id": fid, "severity": severity, "spans": [list(s) for s in spans],
            "stop_step": stop_step, "run_wide": run_wide}


def svg(panel: dict) -> str:
    head, data = panel["image"].split(",", 1)
    assert head == "data:image/svg+xml;base64"
    return base64.b64decode(data).decode()


def test_a_panel_per_logged_metric_with_the_findings_where_they_belong(tmp_path):
    write_jsonl(tmp_path / "metrics.jsonl", history(20, **HEALTHY, tools__call_frequency=lambda i: 0.5))
    logs = load_run_logs(tmp_path)
    logs.roles = infer_roles(logs, {})
    marks = [finding(1, "entropy_collapse", spans=[(40, None)], severity="critical"),
             finding(2, "truncation", spans=[(10, 30)]), finding(3, "sampler_mismatch", run_wide=True),
             finding(4, "review_audit", stop_step=60, severity="critical")]
    panels = {p["key"]: p for p in curves(logs, logs.roles, marks, {"last_step": 85})}
    # HEALTHY logs no held-out evaluation and no unscorable share: those panels are left out
    assert list(panels) == ["reward", "correctness", "length", "truncated", "kl", "entropy", "clip", "zero_signal",
                            "tools"]
    assert panels["entropy"]["findings"] == [1] and panels["truncated"]["findings"] == [2]
    assert panels["length"]["findings"] == [2] and panels["kl"]["findings"] == [3]
    assert panels["reward"]["findings"] == [4]   # a finding about no one metric goes on the reward's panel
    assert "F1" in svg(panels["entropy"]) and "F3 (whole run)" in svg(panels["kl"])
    assert "F4 stop" in svg(panels["reward"]) and "died" in svg(panels["reward"])
    assert "<script" not in svg(panels["reward"])
    assert panels["reward"]["lines"]["total"] == {"first": 0.2, "last": 0.58, "min": 0.2, "max": 0.58, "points": 20}
    assert set(panels["reward"]["lines"]) == {"total", "exact_match", "format"}
    assert set(panels["correctness"]["lines"]) == {"exact_match"}


def test_held_out_evaluations_are_drawn_and_nothing_is_drawn_for_no_log(tmp_path):
    write_jsonl(tmp_path / "metrics.jsonl", [*history(4, **HEALTHY),
                                             {"step": 10, "eval_reward": 0.3, "eval_rewards/exact_match/mean": 0.2},
                                             {"step": 20, "eval_reward": 0.4, "eval_rewards/exact_match/mean": 0.3}])
    logs = load_run_logs(tmp_path)
    logs.roles = infer_roles(logs, {})
    panels = {p["key"]: p for p in curves(logs, logs.roles, [], None)}
    assert panels["held_out"]["lines"]["total"]["last"] == 0.4
    assert panels["correctness"]["lines"]["exact_match (held-out)"]["points"] == 2
    assert curves(None, {}, [], None) == []
