"""The ``math`` reward beside its peers on final answers written the way models write them: one table.

Run: ``python benchmarks/math_styles.py [--verl PATH] [--hogs N] [--items]``. ``PATH`` is a checkout of verl (its
``verl/utils/reward_score/math_verify.py`` is loaded from there by path, nothing of it is copied here); without it
verl's column says "not run". Scorers, each on every item of ``CASES``:

- ours: ``build_reward("math")``, default params, called off the main thread as TRL may call it;
- math-verify: ``verify(parse(f"${gold}$"), parse(completion))``, its defaults;
- TRL: ``trl.rewards.accuracy_reward`` with the gold as written, and with the gold wrapped in ``$…$``;
- verl: ``compute_score(completion, gold)`` of verl's math-verify scorer.

Each row of ``CASES`` has the verdict a careful grader gives (``expect``); where the style is ambiguous (rows
marked ``rule``) it is the verdict of our documented default for that case (the ``math`` reward's params say
which). The table counts agreements with ``expect`` per category, then the worst time any item took per scorer;
the peers run in a child process each (math-verify's own timers need a main thread), restarted after an item that
overruns ``--peer-limit`` s. The pathological rows are then timed for ours again with ``--hogs`` busy processes on
the cores (default: one per core), against the bound ``2 × timeout_s + 1`` s, with ``evaluated: false`` so each is
parsed (by default ours refuses them unparsed: their ground truth is a number and they are not one). Exit status 1 when ours agrees
less often than the best peer in any category, or an item of ours overruns the bound.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import selectors
import subprocess
import sys
import threading
import time
from pathlib import Path

# (category, completion, ground truth, careful grader's verdict, "rule" when the verdict is a documented choice)
CASES: list[tuple[str, str, str, bool, str]] = [
    # GSM8K's final line
    ("gsm8k ####", "Natalia sold 48/2 = 24 clips in May.\nAltogether 48+24 = 72.\n#### 72", "72", True, ""),
    ("gsm8k ####", "She has 5 + 3 = 8 apples.\n#### 8", "8", True, ""),
    ("gsm8k ####", "Total cost 3 * 4 = 12\n#### 12", "13", False, ""),
    ("gsm8k ####", "#### 1,250", "1250", True, ""),
    ("gsm8k ####", "He walks 2.5 km a day, 5 days: 12.5\n#### 12.5", "12.5", True, ""),
    ("gsm8k ####", "So the answer:\n#### $18", "18", True, ""),
    ("gsm8k ####", "#### -4", "4", False, ""),
    ("gsm8k ####", "#### 0.50", "0.5", True, ""),
    # boxed
    ("boxed", "We add the halves, so the result is $\\boxed{\\frac{1}{2}}$.", "0.5", True, ""),
    ("boxed", "Thus $x = \\boxed{3}$.", "4", False, ""),
    ("boxed", "\\boxed{12}\n\nSo twelve apples remain.", "12", True, ""),
    ("boxed", "The area is $\\boxed{12\\pi}$.", "12\\pi", True, ""),
    ("boxed", "The area is $\\boxed{12\\pi}$.", "36\\pi", False, ""),
    ("boxed", "Simplifying gives $\\boxed{2x + x}$", "3x", True, ""),
    ("boxed", "Therefore $\\boxed{\\sqrt{8}}$", "2\\sqrt{2}", True, ""),
    ("boxed", "So the answer is $\\fbox{7}$.", "7", True, ""),
    ("boxed", "We get $\\boxed{x = 5}$", "5", True, ""),
    ("boxed", "We get $\\boxed{\\dfrac{3}{4}}$", "0.75", True, ""),
    ("boxed", "So $\\boxed{\\frac12}$", "\\frac{1}{2}", True, ""),
    ("boxed", "So $\\boxed{\\tfrac{2}{3}}$", "\\frac{2}{3}", True, ""),
    # final-answer lines
    ("final-answer line", "First 6*7 = 42. The answer is 42.", "42", True, ""),
    ("final-answer line", "I think the answer is 41.", "42", False, ""),
    ("final-answer line", "Solving gives 17.\nFinal Answer: The final answer is $17$. I hope it is correct.", "17",
     True, ""),
    ("final-answer line", "Reasoning...\n**Final Answer:** $\\frac{3}{4}$", "0.75", True, ""),
    ("final-answer line", "Step 1: 3 + 4 = 7.\nAnswer: 7", "7", True, ""),
    ("final-answer line", "So, the final answer is: **15**.", "15", True, ""),
    ("final-answer line", "The answer is $-\\frac{1}{2}$.", "-0.5", True, ""),
    ("final-answer line", "The final answer is 9.", "8", False, ""),
    ("final-answer line", "The roots satisfy $x^2 = 9$, hence $x = 3$", "3", True, ""),
    ("final-answer line", "3/4", "\\frac{3}{4}", True, ""),
    # units written after the number
    ("units", "Each costs $5, so he pays 4*5 = 20. The answer is 20 dollars.", "20", True, ""),
    ("units", "The area is $\\boxed{12\\text{ cm}^2}$", "12", True, ""),
    ("units", "The answer is 3/4 cup.", "\\frac{3}{4}", True, ""),
    ("units", "The answer is 15 minutes.", "15", True, ""),
    ("units", "The answer is 16 miles per hour.", "16", True, ""),
    ("units", "The answer is 7 apples.", "8", False, ""),
    ("units", "\\boxed{\\text{12 apples}}", "12", True, ""),
    ("units", "\\boxed{5\\text{ m}}", "5", True, ""),
    # currency
    ("currency", "So it costs \\boxed{\\$12.50}", "12.5", True, ""),
    ("currency", "The total is \\boxed{\\$1,250}", "1250", True, ""),
    ("currency", "The answer is \\$18.", "18", True, ""),
    ("currency", "She pays 3 * 6 = 18 dollars.\n#### $18.00", "18", True, ""),
    ("currency", "The answer is $\\$ 45$.", "45", True, ""),
    ("currency", "So it costs \\boxed{\\$12.75}", "12.5", False, ""),
    # percent
    ("percent", "The answer is $25\\%$", "25\\%", True, ""),
    ("percent", "The answer is 25%.", "25", True, ""),
    ("percent", "\\boxed{40\\%}", "40", True, ""),
    ("percent", "\\boxed{0.5}", "50\\%", True, "rule"),
    ("percent", "\\boxed{45\\%}", "40\\%", False, ""),
    # mixed numbers
    ("mixed numbers", "The answer is 2 1/2 pizzas.", "\\frac{5}{2}", True, "rule"),
    ("mixed numbers", "\\boxed{2\\frac{1}{2}}", "\\frac{5}{2}", True, ""),
    ("mixed numbers", "The answer is 3 1/4.", "3.25", True, "rule"),
    ("mixed numbers", "The answer is 1 1/2.", "\\frac{1}{2}", False, "rule"),
    # multiple choice
    ("multiple choice", "The answer is (C) 12.", "C", True, "rule"),
    ("multiple choice", "\\boxed{\\text{(B)}}", "B", True, ""),
    ("multiple choice", "The answer is (B) 12.", "C", False, ""),
    ("multiple choice", "\\boxed{D}", "D", True, ""),
    ("multiple choice", "The answer is (C) 12.", "12", True, "rule"),
    ("multiple choice", "The answer is A.", "B", False, ""),
    # intervals and sets
    ("intervals, sets", "So $x \\in \\boxed{(1, 2]}$", "(1, 2]", True, ""),
    ("intervals, sets", "So $x \\in \\boxed{[1, 2]}$", "(1, 2]", False, ""),
    ("intervals, sets", "The solutions are $\\boxed{\\{3, -2\\}}$", "\\{-2, 3\\}", True, ""),
    ("intervals, sets", "The solutions are $\\boxed{\\{3\\}}$", "\\{-2, 3\\}", False, ""),
    ("intervals, sets", "$\\boxed{(-\\infty, 0) \\cup (1, \\infty)}$", "(-\\infty, 0) \\cup (1, \\infty)", True, ""),
    ("intervals, sets", "The answer is $x > 2$.", "(2, \\infty)", True, ""),
    # several boxes, several answers
    ("several boxes", "The roots are \\boxed{5} and \\boxed{-2}.", "-2, 5", True, ""),
    ("several boxes", "So $x = \\boxed{5}$ or $x = \\boxed{-2}$", "\\{-2, 5\\}", True, ""),
    ("several boxes", "First \\boxed{3}, then after checking the cases we get \\boxed{5}", "5", True, ""),
    ("several boxes", "The roots are \\boxed{5} and \\boxed{-3}.", "-2, 5", False, ""),
    ("several answers", "#### 120\nOn second thought, the answer is 121.", "121", True, "rule"),
    ("several answers", "#### 120\nOn second thought, the answer is 121.", "120", False, "rule"),
    ("several answers", "The answer is 41. Wait, recheck: 6*7 = 42, so \\boxed{42}.", "42", True, "rule"),
    # thousands separators
    ("thousands", "The answer is 1,000,000.", "1000000", True, ""),
    ("thousands", "\\boxed{1{,}250}", "1250", True, ""),
    ("thousands", "\\boxed{1\\,250}", "1250", True, ""),
    ("thousands", "The pairs are \\boxed{(1, 250)}", "(1, 250)", True, ""),
    ("thousands", "The answer is 12,345.", "12345", True, ""),
    ("thousands", "The answer is 12,345.", "12346", False, ""),
    # degrees
    ("degrees", "\\boxed{30^\\circ}", "30", True, ""),
    ("degrees", "The answer is 45°.", "45", True, ""),
    ("degrees", "The angle is $\\boxed{60^{\\circ}}$", "60^\\circ", True, ""),
    ("degrees", "\\boxed{120^\\circ}", "60", False, ""),
    # scientific notation
    ("scientific notation", "\\boxed{3 \\times 10^{5}}", "300000", True, ""),
    ("scientific notation", "The answer is 1.5e3.", "1500", True, ""),
    ("scientific notation", "The answer is $2.5 \\cdot 10^{-3}$", "0.0025", True, ""),
    ("scientific notation", "The answer is 1.5e3.", "150", False, ""),
    # text wrappers
    ("text wrappers", "\\boxed{\\text{7}}", "7", True, ""),
    ("text wrappers", "\\boxed{\\textbf{9}}", "9", True, ""),
    ("text wrappers", "\\boxed{\\mathrm{42}}", "42", True, ""),
    # truncated completions
    ("truncated", "So in total she spends 12 + 10 =", "22", False, ""),
    ("truncated", "Let me compute: 6 * 7 =", "42", False, ""),
    ("truncated", "The answer is 12 +", "12", False, ""),
    ("truncated", "First, 48/2 = 24. Then 48 + 24", "72", False, ""),
    ("truncated", "We need \\boxed{\\frac{1}{", "0.5", False, ""),
    # near misses
    ("near misses", "The probability is $\\boxed{\\frac{1}{2^{99}}}$", "\\frac{1}{2^{98}}", False, ""),
    ("near misses", "The answer is $0.0000002$", "0.0000001", False, ""),
    ("near misses", "The answer is 0.3333", "\\frac{1}{3}", False, ""),
    ("near misses", "The answer is 0.333333", "\\frac{1}{3}", True, "rule"),
    ("near misses", "\\boxed{0.3333333}", "\\frac{1}{3}", True, "rule"),
    ("near misses", "The answer is 1000001.0", "1000000", False, ""),
    ("near misses", "The answer is 3.14", "\\pi", False, ""),
    ("near misses", "The answer is $\\frac{1}{\\sqrt{2}}$", "\\frac{\\sqrt{2}}{2}", True, ""),
    ("near misses", "Let me think.\nThere are 3 cases and 5 subcases.\nI am not sure.", "5", False, ""),
    # pathological expressions (time bound)
    ("pathological", "The answer is $\\boxed{2^{2^{2^{2^{2^{2^{99}}}}}}}$", "4", False, ""),
    ("pathological", "The answer is $\\boxed{(10^{100})!}$", "3", False, ""),
    ("pathological", "The answer is $\\boxed{(10^{10^{10}})!}$", "3", False, ""),
    ("pathological", "The answer is $\\boxed{9^{9^{9^{9}}}}$", "9", False, ""),
    ("pathological", "\\boxed{10^{10^{10^{10}}} - 10^{10^{10^{10}}} + 1}", "2", False, ""),
    ("pathological", "\\boxed{\\sum_{k=1}^{10^{12}} k^{k}}", "7", False, ""),
    ("pathological", "\\boxed{7^{7^{7^{7}}} \\bmod 10}", "3", False, ""),
    ("pathological", "\\boxed{(2^{2^{2^{2^{2}}}})!}", "2", False, ""),
]

PEERS = ("math-verify", "trl", "trl ($gold$)", "verl")


# --- the peers, each in a child process ------------------------------------------------------------------

def _peer_main(peer: str, verl: str | None) -> None:
    """Child: read items (JSON lines) on stdin, write one verdict line each (main thread: math-verify's timers)."""
    import logging

    logging.disable(logging.WARNING)
    from math_verify import parse, verify

    fn = None
    if peer.startswith("trl"):
        from trl.rewards import accuracy_reward

        fn = accuracy_reward
    elif peer == "verl":
        import importlib.util

        spec = importlib.util.spec_from_file_location("verl_math_verify", verl)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        fn = module.compute_score
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        item = json.loads(line)
        text, gold = item["text"], item["gold"]
        t = time.perf_counter()
        try:
            if peer == "math-verify":
                got = bool(verify(parse(f"${gold}$"), parse(text)))
            elif peer == "verl":
                got = float(fn(text, gold)) == 1.0
            else:
                g = f"${gold}$" if peer == "trl ($gold$)" else gold
                got = fn([[{"role": "assistant", "content": text}]], [g])[0] == 1.0
        except Exception as e:  # noqa: BLE001 - a peer raising is its verdict here: not right
            got = f"error {type(e).__name__}"
        print(json.dumps({"got": got, "s": time.perf_counter() - t}), flush=True)


class PeerRunner:
    """A peer's child process; an item that overruns ``limit_s`` is recorded as such and the child restarted."""

    def __init__(self, peer: str, verl: str | None, limit_s: float):
        self.peer, self.verl, self.limit_s = peer, verl, limit_s
        self.proc: subprocess.Popen | None = None

    def _start(self) -> None:
        code = f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import math_styles as m; " \
               f"m._peer_main({self.peer!r}, {self.verl!r})"
        self.proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, bufsize=1)
        if not self._line(300):
            raise RuntimeError(f"peer {self.peer} did not start")

    def _line(self, timeout_s: float) -> str | None:
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            if not sel.select(timeout_s):
                return None
        return self.proc.stdout.readline() or None

    def run(self, text: str, gold: str) -> tuple[object, float]:
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        t = time.perf_counter()
        self.proc.stdin.write(json.dumps({"text": text, "gold": gold}) + "\n")
        self.proc.stdin.flush()
        line = self._line(self.limit_s)
        if line is None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None
            return f"over {self.limit_s:.0f} s", time.perf_counter() - t
        return json.loads(line)["got"], time.perf_counter() - t

    def close(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()


# --- ours -------------------------------------------------------------------------------------------------

def ours_one(reward, text: str, gold: str) -> tuple[object, float, str]:
    box: list = []
    t = time.perf_counter()
    th = threading.Thread(target=lambda: box.extend(reward.explain([text], answer=[gold])))
    th.start()  # off the main thread, as TRL may call rewards
    th.join()
    return box[0].score == 1.0, time.perf_counter() - t, box[0].reason


def _hog() -> None:
    while True:
        pass


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--verl", help="a checkout of verl (the root, or its verl/utils/reward_score/math_verify.py)")
    ap.add_argument("--hogs", type=int, default=os.cpu_count() or 1,
                    help="busy processes while the pathological rows are timed again (default: one per core)")
    ap.add_argument("--peer-limit", type=float, default=60.0, help="seconds before a peer's item is cut off")
    ap.add_argument("--items", action="store_true", help="also print every item where a scorer differs")
    args = ap.parse_args()
    verl = args.verl
    if verl and Path(verl).is_dir():
        verl = str(Path(verl) / "verl" / "utils" / "reward_score" / "math_verify.py")
    if verl and not Path(verl).is_file():
        ap.error(f"--verl: {verl} not found; give a verl checkout's root")
    from grpo_rlvr.rewards import build_reward

    reward = build_reward("math", {"workers": 1})
    reward.warm()
    limit = 2 * reward.params["timeout_s"] + 1
    verdicts: dict[str, list] = {"ours": []}
    times: dict[str, list[float]] = {"ours": []}
    reasons = []
    for _, text, gold, _, _ in CASES:
        got, dt, why = ours_one(reward, text, gold)
        verdicts["ours"].append(got)
        times["ours"].append(dt)
        reasons.append(why)
    for peer in PEERS:
        if peer == "verl" and not verl:
            continue
        runner = PeerRunner(peer, verl, args.peer_limit)
        verdicts[peer], times[peer] = [], []
        for _, text, gold, _, _ in CASES:
            got, dt = runner.run(text, gold)
            verdicts[peer].append(got)
            times[peer].append(dt)
        runner.close()
    scorers = list(verdicts)
    cats = list(dict.fromkeys(c[0] for c in CASES))
    width = max(len(c) for c in cats) + 8
    head = f"{'category':<{width}}" + "".join(f"{s:>14}" for s in ["ours", *PEERS])
    print(head)
    print("-" * len(head))
    behind = []
    for cat in cats:
        idx = [i for i, c in enumerate(CASES) if c[0] == cat]
        rule = sum(1 for i in idx if CASES[i][4])
        label = f"{cat} ({len(idx)}{f', {rule} rule' if rule else ''})"
        cells, counts = [], {}
        for s in ["ours", *PEERS]:
            if s not in verdicts:
                cells.append(f"{'not run':>14}")
                continue
            counts[s] = sum(verdicts[s][i] is CASES[i][3] for i in idx)
            cells.append(f"{counts[s]:>14}")
        print(f"{label:<{width}}" + "".join(cells))
        if counts["ours"] < max(counts.values()):
            behind.append(cat)
    total = {s: sum(v is c[3] for v, c in zip(verdicts[s], CASES, strict=True)) for s in scorers}
    print(f"{f'all ({len(CASES)})':<{width}}" + "".join(f"{total[s]:>14}" if s in total else f"{'not run':>14}"
                                                      for s in ["ours", *PEERS]))
    print(f"{'worst item (s)':<{width}}" + "".join(f"{max(times[s]):>14.2f}" if s in times else f"{'not run':>14}"
                                                   for s in ["ours", *PEERS]))
    if args.items:
        print("\nItems where a scorer differs from the grader (✗):")
        for i, (cat, text, gold, expect, rule) in enumerate(CASES):
            wrong = [s for s in scorers if verdicts[s][i] is not expect]
            if wrong:
                print(f"  [{cat}] {text[:60]!r} vs {gold!r}: expect {expect}{' (rule)' if rule else ''}; "
                      f"✗ {', '.join(f'{s}={verdicts[s][i]}' for s in wrong)}"
                      + (f"; ours: {reasons[i][:60]}" if "ours" in wrong else ""))
    # --- the time bound with a busy process on every core
    hogs = [multiprocessing.Process(target=_hog, daemon=True) for _ in range(max(0, args.hogs))]
    for h in hogs:
        h.start()
    try:
        patho = [(c[1], c[2]) for c in CASES if c[0] == "pathological"]
        # evaluated: false, so each tower is parsed and the worker's time bound is what is timed (by default
        # these answers are refused before parsing: the ground truth is a number and they are not one)
        fresh = build_reward("math", {"workers": 1, "evaluated": False})
        fresh.warm()
        loaded = [ours_one(fresh, text, gold)[1] for text, gold in patho]
    finally:
        for h in hogs:
            h.terminate()
            h.join()
    print(f"\nours, pathological rows with {len(hogs)} busy process(es) on {os.cpu_count()} core(s): worst "
          f"{max(loaded):.2f} s, each {', '.join(f'{t:.1f}' for t in loaded)} s; bound 2 × timeout_s + 1 = "
          f"{limit:.0f} s; load average {os.getloadavg()[0]:.1f}")
    over = [t for t in loaded + times["ours"] if t > limit]
    if behind:
        print(f"ours agrees less often than a peer in: {', '.join(behind)}")
    if over:
        print(f"{len(over)} item(s) of ours over the bound")
    return 1 if behind or over else 0


if __name__ == "__main__":
    sys.exit(main())
