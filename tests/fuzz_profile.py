"""Settings for every property-based (hypothesis) test: the same cases on every machine in CI, many random ones
in the sweep.

In CI (the default) each test is derandomized: hypothesis seeds its generator from the test itself and keeps no
example database, so every machine explores the same cases and a red run means the code changed, not the luck
of the draw. Cases that once found a bug stay as explicit ``@example``s beside the test.

``GRPO_RLVR_FUZZ_SWEEP=N`` (set by ``benchmarks/fuzz_sweep.py``) multiplies each test's case count by N and
draws them at random instead: the larger sweep, run before a release and outside CI. Hypothesis prints the seed
of a failing case, and ``pytest --hypothesis-seed=SEED`` replays it.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

SWEEP_ENV = "GRPO_RLVR_FUZZ_SWEEP"


def sweep_factor() -> int:
    """N from ``GRPO_RLVR_FUZZ_SWEEP`` (0: not sweeping, the derandomized CI cases)."""
    return int(os.environ.get(SWEEP_ENV) or 0)


def fuzz_settings(max_examples: int, *, fixture_per_case: bool = False) -> settings:
    """``max_examples`` derandomized cases (CI), or N times as many random ones under the sweep.

    ``fixture_per_case`` allows function-scoped pytest fixtures (they are shared by all cases of one test; the
    tests that use them write to a fresh folder per case).
    """
    checks = [HealthCheck.too_slow] + ([HealthCheck.function_scoped_fixture] if fixture_per_case else [])
    n = sweep_factor()
    if n:
        return settings(max_examples=max_examples * n, deadline=None, derandomize=False, database=None,
                        suppress_health_check=checks)
    return settings(max_examples=max_examples, deadline=None, derandomize=True, suppress_health_check=checks)
