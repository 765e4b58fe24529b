"""Benchmark: ``grpo-rlvr demo`` on an idle machine against the same demo with one CPU hog per usable core.

Run: ``python benchmarks/bench_demo_load.py [--steps 30] [--seed 0] [--variants ours,...]``

The hogs are ``python3 -c 'while True: pass'``, one per core in this process's affinity mask, started after the
idle runs and stopped after the loaded ones. All runs share one model cache, filled by an untimed first run, so
each times the same phases (preflight, sampling, inspection, GRPO training, evaluation, diagnosis) and none
builds or warms up a model. Side by side, idle and loaded:

- ours: what the CLI does (``OMP_WAIT_POLICY=PASSIVE``, one torch thread per usable core; ``grpo_rlvr.cpu_threads``);
- as before (spin): libgomp's default, which spins 300,000 times at every barrier before a waiting thread
  sleeps (``GOMP_SPINCOUNT=300000`` restores it over the policy);
- one thread: ``OMP_NUM_THREADS=1`` (nothing to wait for).

Printed: wall seconds (CPU seconds of the demo and everything it started) [the training phase], and the
loaded/idle ratios. Others' work on a shared machine slows the idle runs too, the spinning variant most: the
load average is printed as each run starts.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HOG = "while True: pass"


def run_demo(work: Path, steps: int, seed: int, env: dict) -> dict:
    """One demo run: wall and CPU seconds (the demo and every process it started) and its phase times."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "grpo_rlvr", "demo", "--workdir", str(work), "--steps", str(steps),
                          "--seed", str(seed), "--json"], capture_output=True, text=True, env=env)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise SystemExit(f"demo failed (exit {out.returncode}):\n{out.stderr[-3000:]}")
    summary = json.loads(out.stdout)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": wall, "cpu_s": cpu, "phases": summary["phase_seconds"],
            "accuracy": (summary["accuracy_before"]["accuracy"], summary["accuracy_after"]["accuracy"])}


# name → environment on top of the caller's. "as before" restores libgomp's default spin (300,000 iterations
# at each barrier before a waiting thread sleeps), which the CLI's OMP_WAIT_POLICY=PASSIVE turns off; a
# GOMP_SPINCOUNT in the environment overrides the policy's spin count.
VARIANTS = {"ours": {}, "as before (spin)": {"GOMP_SPINCOUNT": "300000"}, "one thread": {"OMP_NUM_THREADS": "1"}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=30, help="GRPO steps per demo run (the demo's own: 150)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--variants", default=",".join(VARIANTS), help=f"comma-separated, of: {', '.join(VARIANTS)}")
    args = ap.parse_args()
    names = [v.strip() for v in args.variants.split(",")]
    unknown = [v for v in names if v not in VARIANTS]
    if unknown:
        ap.error(f"unknown variant(s) {unknown}; choose from {list(VARIANTS)}")
    cores = len(os.sched_getaffinity(0))
    idle, loaded = {}, {}
    with tempfile.TemporaryDirectory(prefix="bench-demo-load-") as tmp:
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "GRPO_RLVR_CACHE": str(Path(tmp) / "cache")}
        print(f"filling the model cache (untimed), {cores} usable cores ...", flush=True)
        run_demo(Path(tmp) / "setup", 1, args.seed, env)
        for name in names:
            print(f"idle: {name}, {args.steps} GRPO steps; load average {os.getloadavg()[0]:.2f}", flush=True)
            idle[name] = run_demo(Path(tmp) / "idle", args.steps, args.seed, {**env, **VARIANTS[name]})
        hogs = [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(cores)]
        try:
            time.sleep(1)
            for name in names:
                print(f"loaded ({cores} hogs: {HOG!r}): {name}", flush=True)
                loaded[name] = run_demo(Path(tmp) / "loaded", args.steps, args.seed, {**env, **VARIANTS[name]})
            load = os.getloadavg()[0]
        finally:
            for h in hogs:
                h.kill()
                h.wait()
    print(f"\n{args.steps} GRPO steps, seed {args.seed}; wall seconds (CPU seconds), train phase in brackets")
    print(f"{'variant':<18}{'idle':>22}{'loaded':>22}{'loaded/idle':>13}{'train l/i':>11}")
    for name in names:
        i, l_ = idle[name], loaded[name]
        cell = lambda r: f"{r['wall_s']:.1f} ({r['cpu_s']:.1f}) [{r['phases']['train']:.1f}]"  # noqa: E731
        print(f"{name:<18}{cell(i):>22}{cell(l_):>22}{l_['wall_s'] / i['wall_s']:>12.2f}×"
              f"{l_['phases']['train'] / i['phases']['train']:>10.2f}×")
    print(f"\nload average {load:.2f} at the end of the loaded runs ({cores} hogs on {cores} cores)")
    accs = {f"{a[0]:.3f} → {a[1]:.3f}" for r in (*idle.values(), *loaded.values()) for a in [r["accuracy"]]}
    print(f"accuracy before → after GRPO in every run: {', '.join(sorted(accs))} (threads and waiting do not "
          "change the arithmetic)" if len(accs) == 1 else f"accuracy before → after: {sorted(accs)}")
    ours = names[0]
    print(f"{ours}: loaded/idle {loaded[ours]['wall_s'] / idle[ours]['wall_s']:.2f}×")
    return 0


if __name__ == "__main__":
    sys.exit(main())
