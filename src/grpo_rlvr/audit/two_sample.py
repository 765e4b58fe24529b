"""Two-sample tests for rollouts that come in prompt groups: is what training samples drawn from what the person
reviewed?

Rollouts are not independent draws. Each prompt is sampled several times (a group), and rollouts of one prompt
resemble each other (an easy prompt is solved by most of its group). A test that counted 64 rollouts of 8 prompts
as 64 independent draws would call two honest samples different far more often than its level says (measured in
``tests/audit/test_two_sample.py``). So the unit here is the prompt group: ``inspect`` samples its candidates in
groups of ``num_generations``, as training's generation batch does, and under the hypothesis that training samples
what the person reviewed (the same policy, prompts from the same data, the same rewards), every group of either
sample is a draw of one and the same kind: a prompt from the data and ``num_generations`` rollouts of it. The
groups are then exchangeable, and a **permutation test** over them is exact: the statistic of the observed split
is compared with its value over random splits of all groups into a "reference" and a "training" part of the
observed sizes. No distribution is assumed, and the p-value's smallest possible value (one over the number of
distinct splits, or over the permutations drawn) is stated with it.

Statistics (each two-sided): ``share`` (a yes/no property: malformed, unscorable, truncated, called a tool) and
``mean`` (a score: a reward's, the total) compare the rollouts' mean; ``rank`` (a length) compares their mean rank
among all rollouts, which a long tail does not sway. ``holm`` holds several tests to one family-wise level.

Permutations are drawn in rounds (``ROUNDS``) until the p-value is surely above or below the level it is held to
(an honest sample stops after the first round). The first round's splits depend only on how many groups each
sample has: they are drawn once per process and serve every metric with those counts (the tests of one check are
then dependent, which Holm's procedure allows); later rounds are seeded from the data. Either way the same two
samples always give the same p-value.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass

Groups = Sequence[Sequence[float]]   # one sample: its groups, each the values of one prompt's rollouts
KINDS = ("share", "mean", "rank")
ROUNDS = (2_000, 50_000, 400_000)    # permutations drawn, round by round, while the p-value may be below the level
CHUNK = 25_000                       # splits drawn at once (memory: CHUNK x groups x 8 bytes, twice)


@dataclass(frozen=True)
class TestResult:
    """One comparison: each sample's rollouts, groups and mean, the p-value, its floor, the permutations drawn."""

    p: float
    n: tuple[int, int]              # rollouts with a value in the reference and the new sample
    groups: tuple[int, int]         # their prompt groups
    value: tuple[float, float]      # each sample's mean (a share for yes/no values)
    floor: float                    # the smallest p-value this comparison could give
    permutations: int               # random splits drawn (0: all splits enumerated, or nothing to test)
    method: str
    count: tuple[int, int] | None = None   # share: how many have the property


def _nonempty(groups: Groups) -> list[list[float]]:
    return [[float(v) for v in g] for g in groups if len(g)]


def _seed(groups: list[list[float]], n_new: int) -> int:
    h = hashlib.sha256(repr((n_new, groups)).encode()).digest()
    return int.from_bytes(h[:8], "big")


def _draw(rng, m: int, total: int, k: int):
    """``m`` random splits of ``total`` groups, ``k`` of them "new": a 0/1 row per split."""
    import numpy as np

    picks = rng.random((m, total)).argpartition(k - 1, axis=1)[:, :k]
    masks = np.zeros((m, total))
    np.put_along_axis(masks, picks, 1.0, axis=1)
    return masks


@functools.lru_cache(maxsize=8)
def _first_round(total: int, k: int):
    """The first round's splits for these counts, drawn once (seeded by the counts) and shared by every metric."""
    import numpy as np

    masks = _draw(np.random.default_rng([total, k]), ROUNDS[0], total, k)
    masks.setflags(write=False)
    return masks


def _ranks(groups: list[list[float]]) -> list[list[float]]:
    from scipy.stats import rankdata

    flat = [v for g in groups for v in g]
    ranks = rankdata(flat).tolist()   # ties share their average rank
    out, at = [], 0
    for g in groups:
        out.append(ranks[at:at + len(g)])
        at += len(g)
    return out


def permutation_test(reference: Groups, new: Groups, kind: str = "mean", level: float = 0.0) -> TestResult:
    """Whether ``new``'s groups differ from ``reference``'s in ``kind`` (``share``, ``mean``, ``rank``), by
    permuting whole groups between the two samples.

    Args:
        reference, new: each sample's groups of values (0/1 for ``share``).
        kind: what is compared (see the module docstring).
        level: the p-value the caller will hold the result to: permutations stop once the estimate is four
            standard errors above or below it (0: draw until the p-value is surely above 0, or every round).
    """
    import numpy as np

    ref, nw = _nonempty(reference), _nonempty(new)
    groups = ref + nw
    n_ref, n_new = sum(map(len, ref)), sum(map(len, nw))
    means = (sum(map(sum, ref)) / n_ref if n_ref else math.nan, sum(map(sum, nw)) / n_new if n_new else math.nan)
    count = (int(sum(map(sum, ref))), int(sum(map(sum, nw)))) if kind == "share" else None
    method = f"permutation of whole prompt groups ({'mean rank' if kind == 'rank' else 'mean'})"
    if len(ref) < 1 or len(nw) < 1:
        return TestResult(1.0, (n_ref, n_new), (len(ref), len(nw)), means, 1.0, 0, method, count)
    scored = _ranks(groups) if kind == "rank" else groups
    sums = np.array([sum(g) for g in scored])
    sizes = np.array([len(g) for g in scored], dtype=float)
    k, total = len(nw), len(groups)
    mask_new = np.zeros(total, dtype=bool)
    mask_new[len(ref):] = True

    def diff(masks):   # mean of the "new" part minus mean of the rest, for each row of boolean masks
        s_new, c_new = masks @ sums, masks @ sizes
        return s_new / c_new - (sums.sum() - s_new) / (sizes.sum() - c_new)

    observed = abs(float(diff(mask_new[None, :])[0]))
    splits = math.comb(total, k)
    if observed == 0 or np.ptp(sums / sizes) == 0:
        return TestResult(1.0, (n_ref, n_new), (len(ref), len(nw)), means, 1.0 / splits, 0, method, count)
    rng = np.random.default_rng(_seed(groups, k))
    hits = drawn = 0
    tol = 1e-12 * max(1.0, observed)
    for round_, size in enumerate(ROUNDS):
        for chunk in range(0, size, CHUNK):   # bounded memory: CHUNK splits at a time
            m = min(CHUNK, size - chunk)
            masks = _first_round(total, k) if round_ == 0 else _draw(rng, m, total, k)
            hits += int((np.abs(diff(masks)) >= observed - tol).sum())
            drawn += m
        p = (hits + 1) / (drawn + 1)
        margin = 4 * math.sqrt(p * (1 - p) / drawn)   # four standard errors of the Monte Carlo estimate
        if p - margin > level or p + margin < level:   # the answer to "is p below the level?" is known
            break
    floor = max(1.0 / splits, 1.0 / (drawn + 1))
    return TestResult(min(1.0, p), (n_ref, n_new), (len(ref), len(nw)), means, floor, drawn, method, count)


def holm(p_values: Sequence[float], alpha: float) -> list[bool]:
    """Holm's step-down procedure: which of the hypotheses to reject at family-wise level ``alpha``."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    reject = [False] * len(p_values)
    m = len(p_values)
    for rank, i in enumerate(order):
        if p_values[i] <= alpha / (m - rank):
            reject[i] = True
        else:
            break
    return reject


def holm_threshold(p_values: Sequence[float], alpha: float, index: int) -> float:
    """The level Holm's procedure holds test ``index`` to (``alpha / (m - its rank)``), for the record."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    return alpha / (len(p_values) - order.index(index))
