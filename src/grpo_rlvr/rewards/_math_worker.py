"""The math-verify worker process: reads JSON lines ``{"gold", "pred"}`` on stdin, writes verdicts on stdout.

It runs as its own process so math-verify's signal-based timeouts work (this is that process's main thread),
and so the parent can kill it when an expression still hangs (sympy can stall inside C code).
Run: ``python -m grpo_rlvr.rewards._math_worker``.
"""

from __future__ import annotations

import json
import sys


def main() -> None:
    from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify

    configs = [LatexExtractionConfig(), ExprExtractionConfig()]
    out = sys.stdout
    for line in sys.stdin:
        job = json.loads(line)
        t = int(job.get("timeout_s", 5)) or 1
        try:
            raw = str(job["gold"])
            # A bare ground truth such as "3x" is read as LaTeX first (the plain-expression extractor would
            # stop at the number 3), then as written.
            gold = parse(raw if "$" in raw else f"${raw}$", extraction_config=configs, parsing_timeout=t)
            if not gold:
                gold = parse(raw, extraction_config=configs, parsing_timeout=t)
            pred = parse(str(job["pred"]), extraction_config=configs, parsing_timeout=t)
            if not gold:
                res = {"status": "bad_gold"}
            elif not pred:
                res = {"status": "unparsed"}
            else:
                ok = bool(verify(gold, pred, timeout_seconds=t))
                res = {"status": "ok", "equal": ok, "pred": str(pred[0])[:80], "gold": str(gold[0])[:80]}
        except Exception as e:  # noqa: BLE001 - anything math-verify raises is a verdict about this input
            res = {"status": "error", "error": f"{type(e).__name__}: {e}"[:200]}
        out.write(json.dumps(res) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
