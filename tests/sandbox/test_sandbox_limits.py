"""``SandboxLimits`` validation."""

from __future__ import annotations

import dataclasses

import pytest

from grpo_rlvr.sandbox import SandboxLimits


def test_defaults():
    limits = SandboxLimits()
    assert (limits.timeout_s, limits.cpu_s, limits.memory_mb) == (5.0, 5.0, 512)
    assert (limits.max_processes, limits.max_output_bytes) == (256, 8_000_000)


@pytest.mark.parametrize(
    ("field", "value"),
    [("timeout_s", 0), ("timeout_s", float("nan")), ("cpu_s", -1), ("cpu_s", "5"), ("memory_mb", 16),
     ("memory_mb", 512.0), ("max_processes", 0), ("max_output_bytes", True)],
)  # fmt: skip
def test_bad_field_is_named(field, value):
    with pytest.raises(ValueError, match=f"SandboxLimits.{field}"):
        SandboxLimits(**{field: value})


def test_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        SandboxLimits().timeout_s = 1.0
