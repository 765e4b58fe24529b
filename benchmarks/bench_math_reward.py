"""Benchmark: the ``math`` reward vs a raw math-verify loop, on the same corpus, side by side in one run.

Run: ``python benchmarks/bench_math_reward.py [--n 400]``. Both sides parse the gold and the predicted answer and
verify them; ours does it in its worker process (timeouts that hold in any thread), the raw loop calls
math-verify directly on the main thread. Prints wall times, items/s and the ratio (goal: ≥ 0.9× the raw loop).
"""

from __future__ import annotations

import argparse
import random
import time


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

    return build_reward("math", {"extract": "full"})


def ours(reward, pairs) -> list[bool]:
    scores = reward(completions=[p for _, p in pairs], answer=[g for g, _ in pairs])
    return [s == 1.0 for s in scores]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=400)
    args = ap.parse_args()
    pairs = corpus(args.n)
    # warm both (imports, the worker's start-up) so steady-state throughput is compared
    raw_loop(pairs[:16])
    reward = make_ours()
    ours(reward, pairs[:16])  # starts every worker process
    t0 = time.perf_counter()
    r = raw_loop(pairs)
    t_raw = time.perf_counter() - t0
    t0 = time.perf_counter()
    o = ours(reward, pairs)
    t_ours = time.perf_counter() - t0
    agree = sum(a == b for a, b in zip(r, o, strict=True))
    print(f"{'runner':<28}{'seconds':>10}{'items/s':>10}")
    print(f"{'raw math-verify loop':<28}{t_raw:>10.2f}{len(pairs) / t_raw:>10.1f}")
    print(f"{'grpo-rlvr math reward':<28}{t_ours:>10.2f}{len(pairs) / t_ours:>10.1f}")
    print(f"throughput ratio ours/raw: {t_raw / t_ours:.2f}x (goal >= 0.9x); verdicts agree on {agree}/{len(pairs)}")


if __name__ == "__main__":
    main()
