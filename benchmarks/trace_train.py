"""Trace: what one ``grpo-rlvr train`` repeats. Counts each brief load and each re-score of the gate's samples,
per process, for a launch of the demo's brief on the tiny model (a reviewed inspection, 1 GRPO step), read from
the ``GRPO_RLVR_TRACE`` file (``src/grpo_rlvr/work_trace.py``) that every process of the launch appends to.

Run: ``python benchmarks/trace_train.py [--steps 1]``. Needs nothing downloaded; about a minute on 2 cores.

The processes: ``grpo-rlvr train`` (the launcher), its gate check in a clean interpreter, the rendered
``train.py`` (its own check is the door for ``python train.py``, ``accelerate launch`` and SLURM, so it stays) and
that check's clean interpreter. Not covered: server mode, whose ``launch.sh`` needs a GPU to train (its check is
skipped when the launcher has just made it; tests/run/test_launch_server.py runs that path).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_train_overhead import setup  # noqa: E402 - the same reviewed run folder


def who(argv: list[str]) -> str:
    text = " ".join(argv)
    if "_clean_start" in text:
        return "check"
    return "train.py" if "train.py" in text else "grpo-rlvr train" if "grpo" in text else text


def label(event: dict) -> str:
    me = who(event["argv"])
    return f"{who(event['parent_argv'])}'s gate check (clean interpreter)" if me == "check" else me


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=1)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        run = setup(work, args.steps)
        trace = work / "trace.jsonl"
        env = {**os.environ, "GRPO_RLVR_TRACE": str(trace), "HF_HUB_OFFLINE": "1"}
        res = subprocess.run([sys.executable, "-m", "grpo_rlvr", "train", str(run), "--max-steps", str(args.steps)],
                             env=env, capture_output=True, text=True)
        if res.returncode != 0:
            print(res.stdout[-2000:], res.stderr[-3000:], sep="\n")
            return 1
        events = [json.loads(x) for x in trace.read_text().splitlines()]
    first_pid: dict[int, int] = {}
    for i, e in enumerate(events):
        first_pid.setdefault(e["pid"], i)
    counts: dict[tuple[int, str], collections.Counter] = collections.defaultdict(collections.Counter)
    for e in events:
        counts[(e["pid"], label(e))][e["event"]] += 1
    print(f"one `grpo-rlvr train RUN --max-steps {args.steps}` (local mode), in the order the processes ran:")
    print(f"{'process':<50}{'pid':>8}{'brief loads':>13}{'gate re-scores':>16}")
    for (pid, name), c in sorted(counts.items(), key=lambda kv: first_pid[kv[0][0]]):
        print(f"{name:<50}{pid:>8}{c['brief_load']:>13}{c['gate_rescore']:>16}")
    total = collections.Counter(e["event"] for e in events)
    print(f"{'total':<58}{total['brief_load']:>13}{total['gate_rescore']:>16}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
