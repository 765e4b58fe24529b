"""The audit's two-sample test: calibrated on grouped samples from one population (the false-alarm rate is measured
here, by simulation with a fixed seed: strongly grouped prompts, rare successes), powerful on the differences the
issue's attacks make, and why whole prompt groups are permuted (counting rollouts as independent draws raises false
alarms many times the nominal rate on the same data)."""

from __future__ import annotations

import random

import pytest

from grpo_rlvr.audit.two_sample import holm, holm_threshold, permutation_test


def _binary(rng, groups: int, size: int = 8, a: float = 0.3, b: float = 0.7) -> list[list[float]]:
    """Groups of yes/no outcomes, each group with its own rate (a prompt's difficulty, Beta(a, b))."""
    out = []
    for _ in range(groups):
        p = rng.betavariate(a, b)
        out.append([float(rng.random() < p) for _ in range(size)])
    return out


def _lengths(rng, groups: int, size: int = 8) -> list[list[float]]:
    """Completion lengths: each prompt has its own typical length, and some completions run to the limit."""
    out = []
    for _ in range(groups):
        typical = rng.choice((5, 10, 20))
        out.append([float(min(24, max(1, int(rng.gauss(typical, 3))))) for _ in range(size)])
    return out


def _rate(gen, kind: str, alpha: float, new_groups: int, reps: int = 250, seed: int = 0, **kw) -> float:
    rng = random.Random(seed)
    hits = sum(permutation_test(gen(rng, 32, **kw), gen(rng, new_groups, **kw), kind, level=alpha).p <= alpha
               for _ in range(reps))
    return hits / reps


@pytest.mark.parametrize("gen,kind,kw", [
    (_binary, "share", {}),                       # strongly grouped prompts
    (_binary, "mean", {"a": 0.1, "b": 3.0}),      # rare successes, in a few prompts
    (_lengths, "rank", {}),
], ids=["share-grouped", "mean-rare", "rank-lengths"])
@pytest.mark.parametrize("new_groups", [4, 8])
def test_honest_samples_raise_false_alarms_at_most_at_the_nominal_rate(gen, kind, kw, new_groups):
    """32 prompts × 8 candidates against training's 4 or 8 prompts × 8 rollouts, both from one population: the
    measured false-alarm rate at alpha 0.05 is at most 0.05 plus twice the simulation's own noise (250 pairs: sd
    0.014)."""
    assert _rate(gen, kind, 0.05, new_groups, **kw) <= 0.078


def test_counting_rollouts_as_independent_raises_many_false_alarms():
    """What grouping is for: on the same honest data, a plain two-sample test of 256 against 64 rollouts (Fisher's
    exact test on the counts, every rollout an independent draw) is called different several times the nominal
    rate."""
    from scipy.stats import fisher_exact

    rng = random.Random(0)
    hits = 0
    for _ in range(250):
        ref, new = _binary(rng, 32), _binary(rng, 8)
        x, y = int(sum(map(sum, ref))), int(sum(map(sum, new)))
        hits += fisher_exact([[x, 256 - x], [y, 64 - y]])[1] <= 0.05
    assert hits / 250 > 0.15


def test_the_issues_forged_review_is_far_from_training():
    """The forged review: few malformed among the candidates, 55 of 64 in training's first batch."""
    ref = [[1.0] * 2 + [0.0] * 6 for _ in range(12)] + [[0.0] * 8 for _ in range(20)]    # 24 of 256
    new = [[1.0] * 7 + [0.0] for _ in range(7)] + [[1.0] * 6 + [0.0] * 2]                # 55 of 64
    t = permutation_test(ref, new, "share", level=1e-4)
    assert (t.count, t.n, t.groups) == ((24, 55), (256, 64), (32, 8))
    assert t.p < 1e-4 and t.p == pytest.approx(t.floor, rel=1e-6)   # no random split was as far apart


def test_a_judge_that_pays_wrong_answers_is_found_by_its_mean():
    """Right answers score 1 at a per-prompt rate; a swapped judge pays 0.77 for each wrong one."""
    rng = random.Random(1)
    honest = _binary(rng, 32, a=1.5, b=3)
    swapped = [[1.0 if v else 0.77 for v in g] for g in _binary(rng, 8, a=1.5, b=3)]
    assert permutation_test(honest, swapped, "mean", level=1e-4).p < 1e-4


def test_the_same_data_give_the_same_p_value():
    rng = random.Random(2)
    ref, new = _binary(rng, 32), _binary(rng, 8)
    assert permutation_test(ref, new, "share").p == permutation_test(ref, new, "share").p


def test_a_p_value_far_above_the_level_stops_after_the_first_round():
    rng = random.Random(3)
    ref, new = _binary(rng, 32), _binary(rng, 8)
    quick, full = permutation_test(ref, new, "share", level=1e-4), permutation_test(ref, new, "share", level=0.9)
    assert quick.permutations < full.permutations or quick.p > 1e-3


def test_equal_values_and_empty_samples_are_not_different():
    assert permutation_test([[0.0, 0.0]] * 5, [[0.0, 0.0]] * 5, "share").p == 1.0
    assert permutation_test([[1.0, 1.0]] * 5, [[1.0]] * 5, "mean").p == 1.0
    assert permutation_test([], [[1.0]], "rank").p == 1.0


def test_holm_rejects_in_order_and_stops_at_the_first_it_keeps():
    assert holm([0.001, 0.04, 0.03], 0.05) == [True, False, False]   # 0.03 > 0.05/2
    assert holm([0.001, 0.02, 0.04], 0.05) == [True, True, True]
    assert holm([], 0.05) == []
    assert holm_threshold([0.001, 0.04, 0.03], 0.05, 1) == pytest.approx(0.05)
