"""The audit reference an inspection keeps: its population of prompts, its check against the manifest."""

from __future__ import annotations

import pytest

from grpo_rlvr.audit.reference import (
    AUDIT_FILE,
    audited,
    build_reference,
    decode_population,
    digest,
    encode_population,
    load_reference,
    reference_bytes,
)
from grpo_rlvr.errors import GateError


def test_the_population_round_trips_and_holds_each_prompt_once():
    digests = ["0123456789abcdef", "fedcba9876543210", "0123456789abcdef"]
    assert decode_population(encode_population(digests)) == {"0123456789abcdef", "fedcba9876543210"}


def test_the_audit_compares_each_prompts_first_group():
    rollouts = [{"group": g, "i": i} for g in (1, 2) for i in range(12)]
    ref = build_reference(rollouts, None, {}, {}, False, group_size=8)
    assert [(r["group"], r["i"]) for r in audited(ref)] == [(g, i) for g in (1, 2) for i in range(8)]
    assert ref["population"] is None


def test_a_reference_is_read_only_when_it_is_the_file_inspect_wrote(tmp_path):
    ref = build_reference([{"group": 0}], ["0123456789abcdef"], {"a": 1.0}, {"a": "correctness"}, False, 8)
    data = reference_bytes(ref)
    (tmp_path / AUDIT_FILE).write_bytes(data)
    manifest = {"audit": {"digest": digest(data)}}
    assert load_reference(tmp_path, manifest)["population"]["rows"] == 1
    (tmp_path / AUDIT_FILE).write_bytes(data.replace(b'"rows": 1', b'"rows": 2'))
    with pytest.raises(GateError, match="differs from what inspect wrote"):
        load_reference(tmp_path, manifest)
    with pytest.raises(GateError, match="made before the review audit"):
        load_reference(tmp_path, {})
    (tmp_path / AUDIT_FILE).unlink()
    with pytest.raises(GateError, match="cannot be read"):
        load_reference(tmp_path, manifest)
