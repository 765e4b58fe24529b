"""The arithmetic of benchmarks/bench_dynamic_sampling.py: the zero-signal recount over logged completions, the
ratios and the table (not its timings: the benchmark itself measures those)."""

from __future__ import annotations

import importlib.util
import math

import pytest

from paths import REPO

_PATH = REPO / "benchmarks" / "bench_dynamic_sampling.py"
_spec = importlib.util.spec_from_file_location("bench_dynamic_sampling", _PATH)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def rows(step, groups, prompt="p"):
    """Logged completions of one step: each group a list of (exact_match, format) rewards."""
    return [{"step": step, "prompt": f"{prompt}{g}", "exact_match": em, "format": fmt}
            for g, group in enumerate(groups) for em, fmt in group]


def test_recount_counts_groups_whose_combined_rewards_are_equal_within_the_tolerance():
    flat_noise = [(1.0, 0.2 + 1e-8)] + [(1.0, 0.2)] * 3      # float noise: still no signal
    mixed = [(1.0, 1.0), (0.0, 1.0), (0.0, 1.0), (0.0, 1.0)]
    format_only = [(0.0, 1.0), (0.0, 0.0), (0.0, 1.0), (0.0, 1.0)]
    logged = rows(1, [flat_noise, mixed]) + rows(2, [format_only, flat_noise])
    both = {"exact_match": 1.0, "format": 0.2}
    assert bench.zero_signal_share(logged, both, 4, last_step=2) == (0.5, 4)
    # exact_match alone: the format-only group has no signal either
    assert bench.zero_signal_share(logged, {"exact_match": 1.0}, 4, last_step=2) == (0.75, 4)
    assert bench.zero_signal_share(logged, both, 4, last_step=1) == (0.5, 2)   # later steps left out
    share, n = bench.zero_signal_share(logged, both, 4, last_step=0)
    assert math.isnan(share) and n == 0


def test_a_none_reward_counts_zero_as_in_trls_nansum():
    logged = rows(1, [[(None, 1.0), (0.0, 1.0)]])
    assert bench.zero_signal_share(logged, {"exact_match": 1.0, "format": 0.2}, 2, last_step=1) == (1.0, 1)


@pytest.mark.parametrize("d,p,text", [(3.0, 2.0, "1.50"), (0.0, 2.0, "0.00"), (1.0, 0.0, "n/a"), (None, 1.0, "n/a"),
                                      (float("nan"), 1.0, "n/a")])
def test_ratio_is_dynamic_over_plain(d, p, text):
    assert bench.ratio(d, p) == text


def test_table_rows_carry_both_arms_and_their_ratio():
    plain = {"zero_signal_share": 0.5, "generations_in_budget": 640, "steps_in_budget": 10,
             "accuracy_at_budget": 0.2, "generations_at_steps": 320, "accuracy_at_steps": 0.15, "wall_at_steps": 10.0}
    dynamic = {**plain, "generations_in_budget": 640, "steps_in_budget": 4, "accuracy_at_budget": 0.3,
               "zero_signal_share": 0.0}
    del dynamic["accuracy_at_steps"]     # an arm that never reached the equal-steps point
    table = bench.format_table(plain, dynamic).splitlines()
    assert len(table) == 1 + len(bench.ROWS)
    by_label = {line[:50].strip(): line.split() for line in table[1:]}
    assert by_label["steps done in budget"][-3:] == ["10", "4", "0.40"]
    assert by_label["sampled accuracy at equal wall time"][-3:] == ["0.200", "0.300", "1.50"]
    assert by_label["zero-signal share of trained groups (in budget)"][-3:] == ["0.500", "0.000", "0.00"]
    assert by_label["sampled accuracy at equal steps"][-3:] == ["0.150", "—", "n/a"]
