"""The live review audit as the report reads it, from records its own writer made: a run without one, a clean audit,
one that stopped the run, one loosened by the brief that would have stopped it, one still waiting for its first
batch, and files this reader does not know."""

from __future__ import annotations

import json

from grpo_rlvr.audit.live import RECORD, AuditSettings
from grpo_rlvr.report.live_audit import NOT_RECORDED, live_audit, loosening
from report.conftest import started_audit, write_audit


def test_a_run_without_an_audit_record_says_so(tmp_path):
    assert live_audit(tmp_path) == {"recorded": False, "note": NOT_RECORDED}
    assert "no audit recorded" in NOT_RECORDED and "smoke test" in NOT_RECORDED


def test_a_clean_audit_is_shown_with_its_numbers(tmp_path):
    record = write_audit(tmp_path, diverge=False)
    a = live_audit(tmp_path)
    assert a["recorded"] and a["outcome"] == "clean" and a["stopped"] is None and a["loosened"] is None
    (check,) = a["checks"]
    assert check["verdict"] == "clean" and check["diverged"] == [] and check["rollouts"] == 64
    assert a["sentence"] == (f"64 training rollouts of 8 prompts against the "
                             f"{record['reference']['rollouts']} the inspection sampled, {len(check['tests'])} "
                             f"comparisons clean at alpha {record['checks'][0]['alpha']}")
    malformed = next(t for t in check["tests"] if t["metric"] == "malformed")
    assert malformed["summary"].startswith("malformed ") and " reviewed; p " in malformed["summary"]
    assert a["cost_s"] == record["cost_s"] and not a["resumed"]


def test_an_audit_that_stopped_the_run_names_what_differed_and_what_to_do(tmp_path):
    write_audit(tmp_path, diverge=True)
    a = live_audit(tmp_path)
    assert a["outcome"] == "stopped" and a["diverged_checks"] == 1 and "malformed" in a["checks"][0]["diverged"]
    assert a["sentence"].startswith("STOPPED the run before the optimizer stepped: at step 0, 64 training rollouts")
    assert a["stopped"]["step"] == 0 and "grpo-rlvr inspect" in a["stopped"]["what_to_do"]


def test_a_loosened_audit_says_it_would_have_stopped_and_who_loosened_it(tmp_path):
    write_audit(tmp_path, diverge=True, settings=AuditSettings(stop_on="never", origin="brief"))
    a = live_audit(tmp_path)
    assert a["outcome"] == "would stop" and a["stopped"] is None
    assert a["sentence"].startswith("would have stopped the run, which trained on (stop_on: never)")
    assert a["loosened"] == {"by": "the brief's audit section",
                             "how": ["stop_on: never (a divergence is recorded, the run trains on)"]}
    smaller = loosening(AuditSettings(alpha=1e-5, origin="brief").to_dict())
    assert smaller["how"] == ["alpha 1e-05 (the recipe's is 0.001: it stops a run less often)"]
    assert loosening(AuditSettings(origin="brief").to_dict()) is None   # set in the brief, as strict as the recipe


def test_an_audit_before_its_first_batch_is_pending(tmp_path):
    started_audit(tmp_path)
    a = live_audit(tmp_path)
    assert a["outcome"] == "pending" and a["checks"] == [] and a["sentence"].startswith("no generation batch")


def test_an_audit_file_this_reader_does_not_know_is_said_to_be_unreadable(tmp_path):
    clean = write_audit(tmp_path, diverge=False)
    for content, said in ((json.dumps({**clean, "format": 2}), "format 2"),
                          ("{broken", "cannot be read"),
                          (json.dumps({**clean, "status": "fine"}), "status 'fine'"),
                          (json.dumps({**clean, "checks": {}}), "`checks` is not a list"),
                          (json.dumps({**clean, "stopped": 3}), "`stopped` is neither"),
                          (json.dumps([1]), "not a JSON object")):
        (tmp_path / RECORD).write_text(content)
        a = live_audit(tmp_path)
        assert not a["recorded"] and said in a["note"], (content, a)
