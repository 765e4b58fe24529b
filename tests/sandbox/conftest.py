"""Fixtures of the sandbox tests: the isolation layers this machine gives (root and plain users differ)."""

from __future__ import annotations

import pytest

from grpo_rlvr.sandbox import isolation_layers


@pytest.fixture(scope="session")
def layers():
    return isolation_layers()


@pytest.fixture
def need(layers):
    """``need("seccomp")`` skips the test when that layer is not active on this machine."""

    def check(name: str) -> None:
        if name not in layers:
            pytest.skip(f"layer {name!r} is not active on this machine")

    return check
