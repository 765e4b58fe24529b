"""The audit inside training, fed as the trainer feeds it: its records, its events, its decision."""

from __future__ import annotations

import io
import json

import pytest

from grpo_rlvr.audit.live import RECORD, AuditFollower, AuditSettings, ReviewAudit, read_audit, review_audit
from grpo_rlvr.audit.reference import build_reference
from grpo_rlvr.errors import GateRefused
from grpo_rlvr.records.audit_rollouts import prompt_digest
from grpo_rlvr.records.watch_log import WATCH_LOG

from .test_compare import KINDS, WEIGHTS, rollouts


def _audit(tmp_path, settings: AuditSettings | None = None, resumed=False):
    ref = build_reference(rollouts(32, 0.05, 0.4, seed=1), [prompt_digest(f"{g}+1=") for g in range(200)], WEIGHTS,
                          KINDS, False, 8)
    stream = io.StringIO()
    audit = ReviewAudit(ref, settings or AuditSettings(), tmp_path, tmp_path / "inspection", {"number": 2, "of": 3}, stream,
                        resumed=resumed)
    audit.start()
    return audit, stream


def _events(tmp_path):
    return [json.loads(x) for x in (tmp_path / WATCH_LOG).read_text().splitlines()]


def test_an_honest_first_batch_is_recorded_clean_and_the_audit_is_done(tmp_path):
    audit, stream = _audit(tmp_path)
    assert read_audit(tmp_path)["status"] == "pending" and audit.wants_batch()
    assert audit.observe(0, rollouts(8, 0.05, 0.4, seed=2, prompt=lambda g: f"{g + 40}+1=")) is False
    record = read_audit(tmp_path)
    assert record["status"] == "clean" and record["reference"]["draw"] == 2 and record["stopped"] is None
    assert not audit.wants_batch()
    assert [e["event"] for e in _events(tmp_path)] == ["audit"]
    assert "match the review" in stream.getvalue()


def test_a_divergence_stops_the_run_and_says_what_differs_and_what_to_do(tmp_path):
    audit, stream = _audit(tmp_path)
    assert audit.observe(0, rollouts(8, 0.85, 0.1, seed=2)) is True
    record = read_audit(tmp_path)
    assert record["status"] == "diverged" and "malformed" in record["stopped"]["summary"]
    stop = _events(tmp_path)[-1]
    assert (stop["event"], stop["id"], stop["checkpoint"]) == ("stop", "review_audit", None)
    said = stream.getvalue()
    assert "STOPPED the run at step 0, before the optimizer stepped" in said and "grpo-rlvr inspect" in said
    assert not audit.wants_batch()


def test_stop_on_never_records_a_would_stop_and_is_shown_as_loosened(tmp_path):
    audit, stream = _audit(tmp_path, AuditSettings(stop_on="never", origin="brief"))
    assert audit.observe(0, rollouts(8, 0.85, 0.1, seed=2)) is False
    record = read_audit(tmp_path)
    assert record["settings"]["loosened"] and record["status"] == "diverged" and record["stopped"] is None
    assert _events(tmp_path)[-1]["event"] == "would_stop" and "would stop the run" in stream.getvalue()


def test_several_batches_share_the_level_and_pool_their_rollouts(tmp_path):
    audit, _ = _audit(tmp_path, AuditSettings(batches=2, origin="brief"))
    audit.observe(0, rollouts(4, 0.05, 0.4, seed=2))
    assert audit.wants_batch() and read_audit(tmp_path)["status"] == "pending"
    audit.observe(1, rollouts(4, 0.05, 0.4, seed=3))
    checks = read_audit(tmp_path)["checks"]
    assert [c["rollouts"] for c in checks] == [32, 64] and checks[0]["alpha"] == 5e-4


def _check(tmp_path, settings: AuditSettings):
    """A run check as rank 0 holds one: the audit reference it verified, by digest."""
    from types import SimpleNamespace

    from grpo_rlvr.audit.reference import digest, reference_bytes

    ref = build_reference(rollouts(32, 0.05, 0.4, seed=1), None, WEIGHTS, KINDS, False, 8)
    path = tmp_path / "audit.json"
    path.write_bytes(reference_bytes(ref))
    return SimpleNamespace(verified={"audit": {"reference": str(path), "digest": digest(path.read_bytes()),
                                               "settings": settings.to_dict(), "inspection": str(tmp_path),
                                               "draw": None}})


def test_another_rank_asks_for_the_batches_rank_0_asks_for(tmp_path):
    """Every rank joins the audit's collectives for the same batches. Only rank 0 holds the run check; the others
    get its settings through the broadcast (two ranks with dynamic sampling died in gloo when rank 1, holding no
    check, had no audit and skipped the gather rank 0 waited in)."""
    settings = AuditSettings(batches=2, origin="brief")
    sent = []
    rank0 = review_audit(_check(tmp_path, settings), tmp_path / "0", main_process=True,
                         broadcast=lambda obj: sent.append(obj) or obj)
    rank1 = review_audit(None, tmp_path / "1", main_process=False, broadcast=lambda obj: sent[0])
    assert isinstance(rank0, ReviewAudit) and isinstance(rank1, AuditFollower) and rank1.settings == settings
    asked = []
    for step in range(4):
        asked.append((rank0.wants_batch(), rank1.wants_batch()))
        if rank0.wants_batch():
            rank0.observe(step, rollouts(4, 0.05, 0.4, seed=2 + step))
        if rank1.wants_batch():
            assert rank1.observed_on_rank_0() is False   # rank 0 decides
    assert asked == [(True, True), (True, True), (False, False), (False, False)]
    assert not (tmp_path / "1").exists() and len(read_audit(tmp_path / "0")["checks"]) == 2


def test_rank_0_s_refusal_reaches_every_rank(tmp_path):
    """The reference changed since the check: rank 0 refuses, and so does every other rank (none waits alone)."""
    check = _check(tmp_path, AuditSettings())
    (tmp_path / "audit.json").write_text("{}")
    sent = []
    with pytest.raises(GateRefused, match="changed since the run check"):
        review_audit(check, tmp_path / "0", main_process=True, broadcast=lambda obj: sent.append(obj) or obj)
    with pytest.raises(GateRefused, match="changed since the run check"):
        review_audit(None, tmp_path / "1", main_process=False, broadcast=lambda obj: sent[0])


def test_a_check_without_a_review_gives_no_audit_on_any_rank(tmp_path):
    """The unreviewed smoke test: no audit anywhere."""
    from types import SimpleNamespace

    sent = []
    assert review_audit(SimpleNamespace(verified={}), tmp_path, broadcast=lambda o: sent.append(o) or o) is None
    assert review_audit(None, tmp_path, main_process=False, broadcast=lambda o: sent[0]) is None


def test_a_resumed_run_keeps_the_record_of_its_first_start(tmp_path):
    audit, _ = _audit(tmp_path)
    audit.observe(0, rollouts(8, 0.05, 0.4, seed=2))
    resumed, _ = _audit(tmp_path, resumed=True)
    resumed.observe(50, rollouts(8, 0.85, 0.1, seed=2))   # a trained policy: only its prompts are compared
    record = json.loads((tmp_path / RECORD).read_text())
    assert record["resumed"] and record["status"] == "clean"
    assert record["earlier_starts"][0]["checks"][0]["step"] == 0
