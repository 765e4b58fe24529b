"""Benchmark: the ``math`` reward vs a raw math-verify loop, on the same corpus, side by side in one run.

Run: ``python benchmarks/bench_math_reward.py [--n 400]``. Both sides parse the gold and the predicted answer and
verify them; ours (``build_reward("math")``, default params) does it in its worker processes (timeouts that hold
in any thread, exact rationals, relative floats), the raw loop calls math-verify directly on the main thread.
Prints wall times, items/s and the ratio (goal: ≥ 0.9× the raw loop), then names every item where the verdicts
differ, with the rule that decides it. Exit status 1 when a disagreement is not explained by the rules.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys
import time
from pathlib import Path


def corpus(n: int, seed: int = 0) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        a, b = rng.randint(1, 50), rng.randint(2, 12)
        kind = i % 5
        if kind == 0:
            out.append((str(a * b), f"{a * b}"))
        elif kind == 1:
            out.append((f"\\frac{{{a}}}{{{b}}}", f"{a / b:.6f}" if i % 2 else f"\\frac{{{a * 2}}}{{{b * 2}}}"))
        elif kind == 2:
            out.append((f"{a}x+{b}", f"{b}+{a}x"))
        elif kind == 3:
            out.append((f"\\sqrt{{{a * a}}}", str(a + (i % 3 == 0))))
        else:
            out.append((f"{a}^{{2}}", str(a * a)))
    return out


# Pairs where the rules (exact rationals, relative floats) and stock math-verify's absolute tolerance part ways;
# each round's corpus ends with them, so the comparison names them.
NEAR_MISSES = {
    ("\\frac{1}{2^{98}}", "\\frac{1}{2^{99}}"): "different rationals; stock's evalf(chop=True) drops the difference",
    ("0.0000001", "0.0000002"): "floats 2x apart; stock rounds both to 6 decimals (an absolute tolerance)",
    ("\\frac{1}{12}", "0.083333"): "4e-6 off relatively (> rel_tol 1e-6); stock's rounding to 6 decimals accepts it",
}


def raw_loop(pairs) -> list[bool]:
    from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify

    cfg = [LatexExtractionConfig(), ExprExtractionConfig()]
    out = []
    for gold, pred in pairs:
        g = parse(f"${gold}$", extraction_config=cfg)
        p = parse(f"${pred}$", extraction_config=cfg)
        out.append(bool(g and p and verify(g, p)))
    return out


def make_ours():
    from grpo_rlvr.rewards import build_reward

    return build_reward("math")


def rule_for(gold: str, pred: str, ours: bool, raw: bool) -> str | None:
    """Why the rules side with ours on this disagreement, or None when they do not."""
    from fractions import Fraction

    if (gold, pred) in NEAR_MISSES and raw and not ours:
        return NEAR_MISSES[(gold, pred)]
    m = re.fullmatch(r"\\frac\{(\d+)\}\{(\d+)\}", gold)
    if m and re.fullmatch(r"\d+\.\d+", pred) and raw and not ours:
        exact = Fraction(int(m.group(1)), int(m.group(2)))
        rel = abs(Fraction(pred) - exact) / exact
        if rel > Fraction(1, 10**6):
            return (f"{pred} is {float(rel):.1e} off {gold} relatively (> rel_tol 1e-6); stock's rounding to 6 "
                    "decimals, an absolute tolerance, accepts it")
    return None


REASONS: dict[tuple[str, str], str] = {}


def ours(reward, pairs) -> list[bool]:
    scored = reward.explain([p for _, p in pairs], answer=[g for g, _ in pairs])
    REASONS.update({pair: s.reason for pair, s in zip(pairs, scored, strict=True)})
    return [s.score == 1.0 for s in scored]


def _cpu_s(pids: list[int]) -> dict[int, float]:
    """User + system CPU seconds of each process in ``pids`` so far (Linux /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            out[pid] = (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            pass
    return out


def _cpu_since(before: dict[int, float], pids: list[int]) -> float:
    return sum(v - before.get(pid, 0.0) for pid, v in _cpu_s(pids).items())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    # warm both (imports, the worker's start-up) so steady-state throughput is compared
    raw_loop(corpus(16, seed=99))
    reward = make_ours()
    reward.warm()  # every worker process started and warm
    ours(reward, corpus(16, seed=99))
    pool = reward.warmer.__self__
    # Alternate the runners on a fresh corpus each round (no cache carries over), best of --rounds each, so a
    # busy machine's swings do not pick the winner. CPU time is counted too: it does not depend on the load.
    t_raw = t_ours = c_raw = c_ours = float("inf")
    r: list[bool] = []
    o: list[bool] = []
    pairs: list[tuple[str, str]] = []
    for k in range(args.rounds):
        round_pairs = corpus(args.n - len(NEAR_MISSES), seed=k) + list(NEAR_MISSES)
        c0, t0 = time.process_time(), time.perf_counter()
        r += raw_loop(round_pairs)
        t_raw, c_raw = min(t_raw, time.perf_counter() - t0), min(c_raw, time.process_time() - c0)
        c0, w0, t0 = time.process_time(), _cpu_s(pool.pids()), time.perf_counter()
        o += ours(reward, round_pairs)
        t_ours = min(t_ours, time.perf_counter() - t0)
        c_ours = min(c_ours, time.process_time() - c0 + _cpu_since(w0, pool.pids()))
        pairs += round_pairs
    n = args.n
    agree = sum(a == b for a, b in zip(r, o, strict=True))
    print(f"{'runner':<28}{'wall s':>10}{'items/s':>10}{'CPU s':>10}{'items/CPU s':>13}")
    print(f"{'raw math-verify loop':<28}{t_raw:>10.2f}{n / t_raw:>10.1f}{c_raw:>10.2f}{n / c_raw:>13.1f}")
    print(f"{'grpo-rlvr math reward':<28}{t_ours:>10.2f}{n / t_ours:>10.1f}{c_ours:>10.2f}{n / c_ours:>13.1f}")
    print(f"{n} items per round, best of {args.rounds} rounds each; {len(pool.workers)} worker processes "
          f"(CPU s: parent + workers); machine load {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"throughput ratio ours/raw: wall {t_raw / t_ours:.2f}x, per CPU second {c_raw / c_ours:.2f}x "
          f"(goal >= 0.9x); verdicts agree on {agree}/{len(pairs)}")
    unexplained = 0
    for (gold, pred), a, b in zip(pairs, r, o, strict=True):
        if a != b:
            why = rule_for(gold, pred, b, a)
            unexplained += why is None
            print(f"  differ: gold {gold} pred {pred}: raw {a}, ours {b} ({REASONS[(gold, pred)]}): "
                  f"{why or 'NOT EXPLAINED BY THE RULES'}")
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
