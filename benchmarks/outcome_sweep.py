"""The sweep behind every test that asserts an outcome of training: each test at each seed, with torch's default
CPU kernels and with them held to AVX2, and which of them land in the asserted outcome.

Run: ``python benchmarks/outcome_sweep.py [--seeds 0-3] [--modes default,avx2] [-k EXPR] [--out FILE]``

The tests are the ones marked ``training_outcome``; each is parametrized by its GRPO seed (``tests/outcome_seeds.py``:
CI runs two, the sweep sets ``GRPO_RLVR_OUTCOME_SEEDS``). ``avx2`` sets ``ATEN_CPU_CAPABILITY=avx2
MKL_ENABLE_INSTRUCTIONS=AVX2 ONEDNN_MAX_CPU_ISA=AVX2`` (what a CPU without AVX-512 runs); ``default`` leaves
torch's choice. Results accumulate in ``--out`` (JSON), so a sweep can be split over several commands (``-k``,
``--modes``, ``--seeds``) and the table printed at the end covers them all; ``--table`` only prints it. A cell
is ``ok`` when the test passed at that seed and mode, else the first line of what it found instead.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from demo_range import MODES, seeds_arg  # the same two kernel sets and seed syntax as the demo's range

REPO = Path(__file__).resolve().parents[1]

_PARAM = re.compile(r"^(?P<name>[^\[]+)\[(?:.*-)?seed(?P<seed>\d+)\]$")  # test_x[seed3]


def run_mode(mode: str, seeds: list[int], k: str | None) -> dict[str, dict]:
    """Run the marked tests once in ``mode``; returns "file::test|mode|seed" → outcome."""
    with tempfile.TemporaryDirectory() as tmp:
        junit = Path(tmp) / "junit.xml"
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "training_outcome",
               f"--junitxml={junit}", "-o", "addopts=", f"--basetemp={Path(tmp) / 'runs'}", *(["-k", k] if k else []), "tests"]
        env = {**os.environ, **MODES[mode], "GRPO_RLVR_OUTCOME_SEEDS": ",".join(map(str, seeds)),
               "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
        print(f"{mode}: seeds {seeds}{f', -k {k!r}' if k else ''} (load average {os.getloadavg()[0]:.2f}) ...",
              flush=True)
        t0 = time.monotonic()
        res = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
        print(f"  {time.monotonic() - t0:.0f} s, pytest exit {res.returncode}", flush=True)
        if not junit.is_file():
            raise SystemExit(f"pytest wrote no report:\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}")
        out = {}
        for case in ET.parse(junit).getroot().iter("testcase"):
            m = _PARAM.match(case.get("name", ""))
            if not m:
                continue
            test = case.get("classname", "").rsplit(".", 1)[-1] + "::" + m.group("name")
            problem = next((c for c in case if c.tag in ("failure", "error")), None)
            skipped = next((c for c in case if c.tag == "skipped"), None)
            if skipped is not None:
                continue
            reason = "ok"
            if problem is not None:
                text = (problem.get("message") or problem.text or "failed").strip()
                reason = " ".join(text.split())[:4000]   # the diagnosis it printed: which findings instead
            out[f"{test}|{mode}|{m.group('seed')}"] = {"outcome": "ok" if problem is None else "FAIL",
                                                       "reason": reason, "seconds": float(case.get("time", 0))}
        return out


def print_table(results: dict[str, dict]) -> bool:
    """Print test × (mode, seed); True when every recorded cell is ok."""
    tests = sorted({k.split("|")[0] for k in results})
    cols = sorted({tuple(k.split("|")[1:]) for k in results}, key=lambda c: (list(MODES).index(c[0]), int(c[1])))
    head = " ".join(f"{m[:3]}{s:>2}" for m, s in cols)
    print(f"\n{'test':<74} {head}   s/run")
    bad = []
    for t in tests:
        cells, secs = [], []
        for m, s in cols:
            r = results.get(f"{t}|{m}|{s}")
            cells.append("   - " if r is None else ("  ok " if r["outcome"] == "ok" else " FAIL"))
            if r is not None:
                secs.append(r["seconds"])
                if r["outcome"] != "ok":
                    bad.append((t, m, s, r["reason"]))
        print(f"{t:<74} {''.join(cells)}  {sum(secs) / max(len(secs), 1):6.0f}")
    for t, m, s, why in bad:
        print(f"FAIL {t} [{m}, seed {s}]: {why[:600]}")
    n = len(results)
    print(f"\n{n - len(bad)} of {n} (test, mode, seed) runs landed in the asserted outcome")
    return not bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=seeds_arg, default=seeds_arg("0-3"), help="e.g. 0-3 or 0,2 (default 0-3)")
    ap.add_argument("--modes", default="default,avx2", help="comma-separated, of: " + ", ".join(MODES))
    ap.add_argument("-k", default=None, help="only the marked tests pytest -k selects")
    ap.add_argument("--out", type=Path, default=REPO / "runs" / "outcome-sweep.json")
    ap.add_argument("--table", action="store_true", help="print the table from --out and run nothing")
    args = ap.parse_args()
    results = json.loads(args.out.read_text()) if args.out.is_file() else {}
    if not args.table:
        modes = args.modes.split(",")
        if unknown := [m for m in modes if m not in MODES]:
            ap.error(f"unknown mode(s) {unknown}; choose from {list(MODES)}")
        for mode in modes:
            results.update(run_mode(mode, args.seeds, args.k))
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(results, indent=1, sort_keys=True))
    return 0 if print_table(results) else 1


if __name__ == "__main__":
    sys.exit(main())
