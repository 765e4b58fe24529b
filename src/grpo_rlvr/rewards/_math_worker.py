"""The math-verify worker process: warms up, says ``{"status": "ready"}``, then reads JSON lines
``{"gold", "pred", "timeout_s", "rel_tol", "approximate_fractions", "hedge", "number", "evaluated"}`` on stdin
(``pred`` a string, or a list whose items must all be equal to the gold) and writes one verdict line each on
stdout.

Two rules need the parsed ground truth, so they are decided here, before the answer is parsed: an answer that
hedges (``hedge``, the reason ``_answer_shape`` gives) does not count against a ground truth that is one value
(anything but a set, interval, tuple, matrix, list or a relation other than ``x = value``): verdict ``hedge``;
with ``evaluated``, an answer that is not a number written out (``number`` false) does not count against a
ground truth that is one number (a sympy Integer, Rational or Float): verdict ``unevaluated``.

It runs as its own process so a signal timer works (this is that process's main thread) and so the parent
can kill it when an expression still hangs (sympy can stall inside C code). Each item gets one budget of
2 × ``timeout_s`` of this process's CPU time (``ITIMER_PROF``: on a loaded machine a right answer waits for the
CPU, it is not scored "timed out") for parsing both sides and comparing (math-verify's own per-call alarms are off: they would
allow 4 × ``timeout_s``). Number equality is ``_math_compare``'s. Gold answers are parsed once and cached.
Run: ``python -m grpo_rlvr.rewards._math_worker``.
"""

from __future__ import annotations

import json
import logging
import signal
import sys


class ItemTimeout(BaseException):
    """Raised by the timer; a BaseException so that math-verify's ``except Exception`` cannot swallow it."""


def _alarm(signum, frame):  # noqa: ARG001
    raise ItemTimeout


def main() -> None:
    # Ctrl-C is for the parent, which closes us: a trainer that finishes its step after a Ctrl-C (or `python
    # train.py` in a terminal, whose Ctrl-C reaches every process of the group) still needs its checks answered
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.disable(logging.WARNING)  # math-verify warns that its own timeouts are off: ours are on
    from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify
    from sympy import Number

    from grpo_rlvr.rewards import _math_compare

    configs = [LatexExtractionConfig(), ExprExtractionConfig()]
    installed: tuple | None = None
    gold_cache: dict[str, list] = {}

    def parse_gold(raw: str) -> list:
        if raw not in gold_cache:
            # A bare ground truth such as "3x" is read as LaTeX first (the plain-expression extractor would
            # stop at the number 3), then as written.
            gold = parse(raw if "$" in raw else f"${raw}$", extraction_config=configs, parsing_timeout=None)
            gold_cache[raw] = gold or parse(raw, extraction_config=configs, parsing_timeout=None)
            if len(gold_cache) > 4096:
                gold_cache.pop(next(iter(gold_cache)))
        return gold_cache[raw]

    def one_value(g) -> bool:
        """Whether a parsed ground truth is one value, not several (a set, an interval, a tuple, a list...)."""
        from sympy import Basic, Eq, Set, Symbol, Tuple
        from sympy.core.relational import Relational
        from sympy.logic.boolalg import BooleanFunction
        from sympy.matrices import MatrixBase

        if isinstance(g, Eq):
            return isinstance(g.lhs, Symbol)  # "x = 3" is one value; other equations are left to math-verify
        return isinstance(g, Basic) and not isinstance(g, (Set, Tuple, Relational, BooleanFunction, MatrixBase))

    def check(job: dict) -> dict:
        nonlocal installed
        settings = (job.get("rel_tol", _math_compare.REL_TOL), job.get("approximate_fractions", True))
        if installed != settings:
            installed = settings
            _math_compare.install(*settings)
        gold = parse_gold(str(job["gold"]))
        if not gold:
            return {"status": "bad_gold"}
        if job.get("hedge") and one_value(gold[0]):
            return {"status": "hedge", "why": job["hedge"]}
        if job.get("evaluated") and not job.get("number", True) and isinstance(gold[0], Number):
            return {"status": "unevaluated"}
        # several answers (``several: all``) are equal when every one is; checked in one item's budget
        for raw in job["pred"] if isinstance(job["pred"], list) else [job["pred"]]:
            pred = parse(str(raw), extraction_config=configs, parsing_timeout=None)
            if not pred:
                return {"status": "unparsed"}
            if not verify(gold, pred, timeout_seconds=None):
                return {"status": "ok", "equal": False, "pred": str(pred[0])[:80], "gold": str(gold[0])[:80]}
        return {"status": "ok", "equal": True, "pred": str(pred[0])[:80], "gold": str(gold[0])[:80]}

    signal.signal(signal.SIGPROF, _alarm)
    out = sys.stdout
    # Warm-up before the first item, so no item pays for imports or first-use set-up (the parent waits for
    # "ready" separately): the parsers and the comparison each run once.
    check({"gold": "\\frac{1}{2}", "pred": "$0.5$"})
    check({"gold": "\\{1, 2\\}", "pred": "$[1, 2)$"})
    gold_cache.clear()
    out.write(json.dumps({"status": "ready"}) + "\n")
    out.flush()
    for line in sys.stdin:
        job = json.loads(line)
        budget = 2.0 * float(job.get("timeout_s", 5.0))
        try:
            signal.setitimer(signal.ITIMER_PROF, budget)   # this process's CPU, not the clock: a loaded machine
            try:                                            # slows an item, it does not make it time out
                res = check(job)
            finally:
                signal.setitimer(signal.ITIMER_PROF, 0)
        except ItemTimeout:
            res = {"status": "timeout"}
        except Exception as e:  # noqa: BLE001 - anything math-verify raises is a verdict about this input
            res = {"status": "error", "error": f"{type(e).__name__}: {e}"[:200]}
        out.write(json.dumps(res) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
