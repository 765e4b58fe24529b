"""The live review audit as the report reads it: a run that predates it, a clean audit, a diverged one that stopped
the run (loosened by the brief), and files this reader does not know."""

from __future__ import annotations

import json

from grpo_rlvr.report.live_audit import AUDIT, NOT_RECORDED, live_audit
from report.conftest import CLEAN_AUDIT, DIVERGED_AUDIT


def test_a_run_before_the_audit_says_no_audit_was_recorded(tmp_path):
    assert live_audit(tmp_path) == {"recorded": False, "note": NOT_RECORDED}
    assert NOT_RECORDED == "no audit recorded (this run predates the audit)"


def test_a_clean_audit_is_read_as_recorded(tmp_path):
    (tmp_path / AUDIT).write_text(json.dumps(CLEAN_AUDIT))
    a = live_audit(tmp_path)
    assert a["recorded"] and a["status"] == "clean" and a["diverged_checks"] == 0 and a["stopped"] is None
    assert a["loosened_by"] is None and a["reference"]["rollouts"] == 192
    (check,) = a["checks"]
    assert check["verdict"] == "clean" and check["diverged"] == [] and check["time"] == "2024-12-07 05:40:00 UTC"
    assert check["tests"][0]["reviewed"] == "25/192" and check["tests"][0]["p"] == 0.41


def test_a_diverged_audit_names_the_metric_the_stop_and_who_loosened_it(tmp_path):
    (tmp_path / AUDIT).write_text(json.dumps(DIVERGED_AUDIT))
    a = live_audit(tmp_path)
    assert a["status"] == "diverged" and a["diverged_checks"] == 1 and a["checks"][0]["diverged"] == ["malformed"]
    assert a["loosened_by"] == "the brief" and a["stopped"]["step"] == 0
    assert "inspect again" in a["stopped"]["what_to_do"]


def test_an_audit_file_this_reader_does_not_know_is_said_to_be_unreadable(tmp_path):
    for content, said in ((json.dumps({**CLEAN_AUDIT, "format": 2}), "format 2"),
                          ("{broken", "cannot be read"),
                          (json.dumps({**CLEAN_AUDIT, "status": "fine"}), "status 'fine'"),
                          (json.dumps({**CLEAN_AUDIT, "checks": {}}), "`checks` is not a list"),
                          (json.dumps([1]), "not a JSON object")):
        (tmp_path / AUDIT).write_text(content)
        a = live_audit(tmp_path)
        assert not a["recorded"] and said in a["note"], (content, a)
