"""The ``math`` reward under default options beside stock math-verify, on completions in the styles models write.

Run: ``python benchmarks/math_styles.py [--markdown]``. Each row: a completion, its ground truth, the verdict the
rules give (``expect``), our verdict (``build_reward("math")``, default params) and stock math-verify's
(``math_verify.parse`` on the whole completion, ``verify`` against the parsed ground truth, its defaults). Then
the worst per-item time, cold (the first item of a fresh worker) and warm, with the worker start-up apart.
Exit status 1 when any of our verdicts differs from ``expect``.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time

# (style, completion, ground truth, verdict by the rules)
CASES: list[tuple[str, str, str, bool]] = [
    ("boxed", "We add the halves... so the result is $\\boxed{\\frac{1}{2}}$.", "0.5", True),
    ("boxed, wrong", "Thus $x = \\boxed{3}$.", "4", False),
    ("boxed then restated", "\\boxed{12}\n\nSo twelve apples remain.", "12", True),
    ("plain 'The answer is'", "First 6*7 = 42. The answer is 42.", "42", True),
    ("plain, wrong", "I think the answer is 41.", "42", False),
    ("GSM8K ####", "Natalia sold 48/2 = 24 clips in May.\nAltogether 48+24 = 72.\n#### 72", "72", True),
    ("#### with thousands", "Total: 1,000 + 250\n#### 1,250", "1250", True),
    ("<answer> tag", "<think>2+2</think>\n<answer>4</answer>", "4", True),
    ("Minerva final-answer line", "Solving gives 17.\nFinal Answer: The final answer is $17$. I hope it is correct.",
     "17", True),
    ("'Final Answer:' bold", "Reasoning...\n**Final Answer:** $\\frac{3}{4}$", "0.75", True),
    ("last inline math", "The roots satisfy $x^2 = 9$, hence $x = 3$", "3", True),
    ("one-line bare answer", "3/4", "\\frac{3}{4}", True),
    ("units in text", "Each costs $5, so he pays 4*5 = 20. The answer is 20 dollars.", "20", True),
    ("units in LaTeX", "The area is $\\boxed{12\\text{ cm}^2}$", "12", True),
    ("percent", "The answer is $25\\%$", "25\\%", True),
    ("set, any order", "The solutions are $\\boxed{\\{3, -2\\}}$", "\\{-2, 3\\}", True),
    ("set, one missing", "The solutions are $\\boxed{\\{3\\}}$", "\\{-2, 3\\}", False),
    ("interval", "So $x \\in \\boxed{(1, 2]}$", "(1, 2]", True),
    ("interval, wrong bracket", "So $x \\in \\boxed{[1, 2]}$", "(1, 2]", False),
    ("equation vs value", "We find $\\boxed{x = 5}$", "5", True),
    ("symbolic", "Simplifying, the answer is $\\boxed{2x + x}$", "3x", True),
    ("near miss: tiny rationals", "The probability is $\\boxed{\\frac{1}{2^{99}}}$", "\\frac{1}{2^{98}}", False),
    ("near miss: tiny floats", "The answer is $0.0000002$", "0.0000001", False),
    ("near miss: rounding 1/3", "The answer is 0.3333", "\\frac{1}{3}", False),
    ("float close enough", "The answer is 0.333333", "\\frac{1}{3}", True),
    ("near miss: big integer", "The answer is 1000001.0", "1000000", False),
    ("reasoning number, no answer", "Let me think.\nThere are 3 cases and 5 subcases.\nI am not sure.", "5", False),
    ("pathological power tower", "The answer is $\\boxed{2^{2^{2^{2^{2^{2^{99}}}}}}}$", "4", False),
    ("pathological factorial", "The answer is $\\boxed{(10^{10^{10}})!}$", "3", False),
]


def stock(completion: str, gold: str) -> bool:
    from math_verify import parse, verify

    return bool(verify(parse(f"${gold}$"), parse(completion)))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = ap.parse_args()
    from grpo_rlvr.rewards import build_reward

    # --- per-item time, cold: a fresh reward; its worker warms up (timed apart), then takes its first item
    reward = build_reward("math", {"workers": 1})
    t0 = time.perf_counter()
    reward.warm(wait=False)
    warm_s = _wait_ready(reward)
    startup_s = time.perf_counter() - t0
    times: list[float] = []
    ours: list[tuple[float | None, str]] = []
    for i, (_, text, gold, _) in enumerate(CASES):
        box: list = []
        t = time.perf_counter()
        th = threading.Thread(target=lambda text=text, gold=gold, box=box: box.extend(reward.explain([text], answer=[gold])))
        th.start()  # off the main thread, as TRL may call rewards
        th.join()
        times.append(time.perf_counter() - t)
        ours.append((box[0].score, box[0].reason))
        if i == 0:
            cold_first = times[0]
    stock_v = []
    for _, text, gold, _ in CASES:
        try:
            stock_v.append(stock(text, gold))
        except Exception as e:  # noqa: BLE001 - stock math-verify raising is its verdict here
            stock_v.append(f"error {type(e).__name__}")
    wrong = 0
    rows = []
    for (style, text, gold, expect), (score, reason), st, dt in zip(CASES, ours, stock_v, times, strict=True):
        got = score == 1.0
        wrong += got != expect
        rows.append((style, text, gold, expect, got, st, dt, reason))
    if args.markdown:
        print("| style | completion | gold | rules | ours | stock math-verify | s | our reason |")
        print("|---|---|---|---|---|---|---|---|")
        for style, text, gold, expect, got, st, dt, reason in rows:
            cell = text.replace("\n", "⏎").replace("|", "\\|")
            print(f"| {style} | `{cell[:70]}` | `{gold}` | {expect} | {got}{'' if got == expect else ' ✗'} | "
                  f"{st} | {dt:.2f} | {reason[:60].replace('|', '/')} |")
    else:
        for style, _text, gold, expect, got, st, dt, reason in rows:
            mark = "" if got == expect else "  <-- differs from the rules"
            print(f"{style:<30} gold {gold:<18} rules {expect!s:<5} ours {got!s:<5} stock {st!s:<5} "
                  f"{dt:6.2f}s  {reason[:50]}{mark}")
    # cold and pathological: a second fresh worker whose very first item is the power tower (no start-up grace)
    fresh = build_reward("math", {"workers": 1})
    _wait_ready(fresh)
    t = time.perf_counter()
    fresh.explain([CASES[-2][1]], answer=[CASES[-2][2]])
    cold_patho = time.perf_counter() - t
    patho = [dt for (style, *_), dt in zip(CASES, times, strict=True) if style.startswith("pathological")]
    normal = [dt for (style, *_), dt in zip(CASES, times, strict=True) if not style.startswith("pathological")]
    limit = 2 * reward.params["timeout_s"] + 1
    print(f"\nworker start-up (imports + warm-up, before any item): {startup_s:.2f} s (waited {warm_s:.2f} s)")
    print(f"cold: first item of a fresh worker {cold_first:.2f} s; a pathological first item {cold_patho:.2f} s")
    print(f"worst per-item time: {max(times):.2f} s (pathological {max(patho):.2f} s, others {max(normal):.2f} s; "
          f"bound 2 x timeout_s + 1 = {limit:.0f} s)")
    disagree = [r[0] for r in rows if r[4] != (r[5] is True)]
    print(f"ours vs the rules: {len(rows) - wrong}/{len(rows)} agree; ours vs stock differ on: "
          f"{', '.join(disagree) or 'none'}")
    return 1 if wrong else 0


def _wait_ready(reward) -> float:
    """Block until every worker of ``reward`` said ready; seconds waited."""
    t = time.perf_counter()
    reward.warm()
    return time.perf_counter() - t


if __name__ == "__main__":
    sys.exit(main())
