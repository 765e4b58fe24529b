"""Benchmark: reading a large trainer_state.json for ``diagnose``: ``json.load`` of the whole file (how
diagnosis read it before) vs the streaming reader (``load_run_logs``), and the whole ``diagnose`` on it.

Run: ``python benchmarks/bench_diagnosis_read.py [--mb 550] [--keep FILE]``. It writes a trainer_state.json of
about MB megabytes, shaped as the Trainer writes one (indent 2, sorted keys, every metric TRL 1.16's
GRPOTrainer logs, one record per step), then measures each side in its own subprocess: wall time and peak
resident memory (``ru_maxrss``). Needs about 2 GB of free memory at 550 MB for the json.load side.

Measured at 550 MB (379,659 records) on the shared 2-core machine, under load: json.load 69.5 s and 1193 MiB,
streaming 63.6 s and 244 MiB, the whole diagnose 47.6 s and 327 MiB; timings vary by about 2x with the load.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KEYS = ["clip_ratio/high_max", "clip_ratio/high_mean", "clip_ratio/low_mean", "clip_ratio/low_min",
        "clip_ratio/region_mean", "completions/clipped_ratio", "completions/max_length",
        "completions/max_terminated_length", "completions/mean_length", "completions/mean_terminated_length",
        "completions/min_length", "completions/min_terminated_length", "entropy", "epoch", "frac_reward_zero_std",
        "grad_norm", "kl", "learning_rate", "loss", "num_tokens", "reward", "reward_std",
        "rewards/format_reward/mean", "rewards/format_reward/std", "rewards/correctness_reward/mean",
        "rewards/correctness_reward/std", "rewards/length_bonus/mean", "rewards/length_bonus/std", "step_time"]


def write_state(path: Path, mb: int, seed: int = 0) -> int:
    """A trainer_state.json of about ``mb`` MB; returns the number of records."""
    rng = random.Random(seed)
    n = 0
    with open(path, "w") as fh:
        fh.write('{\n  "best_global_step": null,\n  "best_metric": null,\n  "epoch": 1.0,\n  "global_step": 0,\n'
                 '  "log_history": [\n')
        while fh.tell() < mb * 1_000_000:
            rec = {k: rng.random() * (1000 if "length" in k else 1) for k in KEYS}
            rec["step"] = n + 1
            fh.write(("" if n == 0 else ",\n") + "    " + json.dumps(rec, indent=2, sort_keys=True).replace(
                "\n", "\n    "))
            n += 1
        fh.write(f'\n  ],\n  "logging_steps": 1,\n  "max_steps": {n},\n  "train_batch_size": 8\n}}\n')
    return n


SIDES = {
    "json.load": "import json; s = json.load(open(P)); h = [r for r in s['log_history'] if 'step' in r]; n = len(h)",
    "streaming": "from grpo_rlvr.diagnosis import load_run_logs; n = len(load_run_logs(P).history)",
    "diagnose (all)": "import tempfile; from grpo_rlvr.diagnosis import diagnose; "
                      "n = diagnose(P, out_dir=tempfile.mkdtemp()).data['records']",
}


def measure(side: str, path: Path) -> tuple[float, float, int]:
    code = ("import resource, sys, time; P = sys.argv[1]; t = time.perf_counter(); " + SIDES[side]
            + "; print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, n)")
    p = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True,
                       env={**os.environ, "MPLBACKEND": "Agg"})
    wall, rss_kb, n = p.stdout.split()[-3:]
    return float(wall), int(rss_kb) / 1024, int(n)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--mb", type=int, default=550)
    ap.add_argument("--keep", type=Path, default=None, help="write the generated file here and keep it")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        path = args.keep or Path(d) / "trainer_state.json"
        t = time.perf_counter()
        n = write_state(path, args.mb)
        print(f"wrote {path.stat().st_size / 1e6:.0f} MB, {n} records in {time.perf_counter() - t:.0f} s")
        for side in SIDES:
            wall, rss, got = measure(side, path)
            assert got == n, (side, got, n)
            print(f"{side:>15}: {wall:7.1f} s   peak RSS {rss:8.0f} MiB   ({got} records)")
        print(f"(16 bytes a logged number in the tables: {n * (len(KEYS)) * 16 / 2**20:.0f} MiB of the streaming "
              f"side's; {math.ceil(path.stat().st_size / 2**20)} MiB of text never held at once)")


if __name__ == "__main__":
    main()
