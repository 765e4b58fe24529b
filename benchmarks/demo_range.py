"""The demo's claim over seeds and CPU kernels: ``grpo-rlvr demo --seed S`` for each seed, with torch's default
CPU kernels and with them held to AVX2, and the range of what it gives. The demo numbers in docs/measurements.md
are this range.

Run: ``python benchmarks/demo_range.py [--task tool] [--seeds 0-4] [--modes default,avx2] [--out runs/demo-range]``

``--task tool`` measures the tool demo's claim instead: accuracy at least 2× (``--min-ratio`` defaults to the
task's claim) and the tool-call rate (samples that called the tool) up, healthy, with each run's whole time.

Why both: on a CPU with AVX-512 torch picks AVX-512 kernels, which round differently from the AVX2 ones a CPU
without it gets; GRPO and the SFT warmup amplify that difference (a float64 run drifts from 1e-16 at step 1 to
1e-4 by step 150), so one machine's numbers are not another's. ``avx2`` sets ``ATEN_CPU_CAPABILITY=avx2
MKL_ENABLE_INSTRUCTIONS=AVX2 ONEDNN_MAX_CPU_ISA=AVX2``, which is what a CPU without AVX-512 runs.

Each run writes ``OUT/<mode>-seed<S>/`` (the demo's work folder, with demo_summary.json); a run whose summary is
already there is read, not redone (``--rerun`` redoes it), so the sweep can be split over several commands with
the same ``--out``. Each mode has its own model cache (``OUT/cache-<mode>``). Printed: one row per run (sampled
accuracy before → after GRPO, the ratio, what the watchdog did, the diagnosis) and the range; exit 1 if a run is
below ``--min-ratio``, was stopped by the watchdog, or is not diagnosed healthy.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

MODES = {"default": {}, "avx2": {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2",
                                 "ONEDNN_MAX_CPU_ISA": "AVX2"}}


def seeds_arg(text: str) -> list[int]:
    """``0-4`` or ``0,2,5``."""
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out += list(range(int(lo), int(hi or lo) + 1))
    return out


CLAIM = {"arithmetic": 3.0, "tool": 2.0}   # the ratio after/before each task claims (docs/measurements.md)


def run_one(out: Path, mode: str, seed: int, steps: int | None, rerun: bool, task: str = "arithmetic",
            warmup_steps: int | None = None) -> dict:
    work = out / f"{mode}-seed{seed}"
    summary = work / "demo_summary.json"
    if summary.is_file() and not rerun:
        s = json.loads(summary.read_text())
        if s.get("grpo_steps") == (steps or s.get("grpo_steps")):
            return s
    env = {**os.environ, **MODES[mode], "HF_HUB_OFFLINE": "1", "GRPO_RLVR_CACHE": str(out / f"cache-{mode}")}
    cmd = [sys.executable, "-m", "grpo_rlvr", "demo", "--task", task, "--workdir", str(work), "--seed", str(seed),
           "--json", *(["--steps", str(steps)] if steps else []),
           *(["--warmup-steps", str(warmup_steps)] if warmup_steps else [])]
    print(f"running: {mode} seed {seed} (load average {os.getloadavg()[0]:.2f}) ...", file=sys.stderr, flush=True)
    t0 = time.monotonic()
    res = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if res.returncode != 0 and not summary.is_file():
        raise SystemExit(f"demo {mode} seed {seed} failed (exit {res.returncode}):\n{res.stderr[-3000:]}")
    print(f"  done in {time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)
    return json.loads(summary.read_text())


def watch_verdict(work: Path) -> str:
    """What the watchdog did in the demo's run: ``no stop``, or where it stopped (or would have) and for what."""
    events = [json.loads(x) for p in work.rglob("watch.jsonl") for x in p.read_text().splitlines()]
    stop = next((e for e in events if e["event"] in ("stop", "would_stop")), None)
    return "no stop" if stop is None else f"{stop['event']} at {stop['step']} ({stop['id']})"


def verdict(s: dict) -> str:
    d = s["diagnosis"]
    return "healthy" if d.get("healthy") else ",".join(f["id"] for f in d.get("findings", [])) or "not healthy"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=seeds_arg, default=seeds_arg("0-4"), help="e.g. 0-4 or 0,3 (default 0-4)")
    ap.add_argument("--modes", default="default,avx2", help="comma-separated, of: " + ", ".join(MODES))
    ap.add_argument("--out", type=Path, default=Path("runs/demo-range"))
    ap.add_argument("--steps", type=int, default=None, help="GRPO steps (default: the demo brief's)")
    ap.add_argument("--warmup-steps", type=int, default=None, help="SFT warmup steps (default: the task's)")
    ap.add_argument("--task", choices=sorted(CLAIM), default="arithmetic", help="the demo task (default arithmetic)")
    ap.add_argument("--min-ratio", type=float, default=None,
                    help="the claim: after/before at least this (default: the task's, 3 for arithmetic, 2 for tool)")
    ap.add_argument("--rerun", action="store_true", help="redo runs whose summary is already in --out")
    args = ap.parse_args()
    modes = args.modes.split(",")
    if unknown := [m for m in modes if m not in MODES]:
        ap.error(f"unknown mode(s) {unknown}; choose from {list(MODES)}")
    out = args.out.resolve()
    if args.min_ratio is None:
        args.min_ratio = CLAIM[args.task]
    rows = []
    for mode in modes:
        for seed in args.seeds:
            s = run_one(out, mode, seed, args.steps, args.rerun, args.task, args.warmup_steps)
            b, a = s["accuracy_before"]["accuracy"], s["accuracy_after"]["accuracy"]
            rows.append({"mode": mode, "seed": seed, "before": b, "after": a, "ratio": a / b if b else float("inf"),
                         "verdict": verdict(s), "train_s": s["phase_seconds"].get("train"),
                         "watch": watch_verdict(out / f"{mode}-seed{seed}"),
                         "steps": s["grpo_steps"], "total_s": s.get("total_seconds"),
                         "tools": (s["accuracy_before"].get("tool_call_rate"), s["accuracy_after"].get("tool_call_rate"))})
    tools = args.task == "tool"
    print(f"\n{'mode':<9}{'seed':>5}  {'before → after':<16}{'ratio':>7}  " + ("tool calls      " if tools else "")
          + f"{'train s':>7}  {'total s':>7}  {'watchdog':<24}diagnosis")
    for r in rows:
        calls = f"{r['tools'][0]:.3f} → {r['tools'][1]:.3f}  " if tools else ""
        print(f"{r['mode']:<9}{r['seed']:>5}  {r['before']:.3f} → {r['after']:.3f}  {r['ratio']:>6.2f}×  {calls}"
              f"{r['train_s']:>7.1f}  {r['total_s'] or 0:>7.1f}  {r['watch']:<24}{r['verdict']}")
    lo = min(rows, key=lambda r: r["ratio"])
    print(f"\nrange over {len(rows)} runs ({', '.join(modes)} × seeds {args.seeds[0]}–{args.seeds[-1]}, "
          f"{rows[0]['steps']} GRPO steps): before {min(r['before'] for r in rows):.3f}–"
          f"{max(r['before'] for r in rows):.3f}, after {min(r['after'] for r in rows):.3f}–"
          f"{max(r['after'] for r in rows):.3f}, ratio {lo['ratio']:.2f}×–{max(r['ratio'] for r in rows):.2f}×")
    bad = [r for r in rows if r["ratio"] < args.min_ratio or r["verdict"] != "healthy" or r["watch"] != "no stop"
           or (tools and not r["tools"][1] > r["tools"][0])]
    for r in bad:
        print(f"BELOW THE CLAIM: {r['mode']} seed {r['seed']}: {r['ratio']:.2f}× ({r['verdict']}; {r['watch']}"
              + (f"; tool calls {r['tools'][0]:.3f} → {r['tools'][1]:.3f}" if tools else "") + ")")
    print("every run healthy and at least " f"{args.min_ratio:g}×" + (", tool calls up" if tools else "") if not bad else f"{len(bad)} of {len(rows)} runs "
          "miss the claim")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
