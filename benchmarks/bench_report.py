"""Benchmark: what the run's report costs (``grpo-rlvr report``, ``src/grpo_rlvr/report/``), beside the run it reports
on and beside ``grpo-rlvr diagnose`` on the same run (the peer: it reads the same logs and draws 5 PNG plots).

Run: ``python benchmarks/bench_report.py [--run runs/demo/out/run] [--repeat 3] [--records 200 2000 20000]`` from the
repository root, after ``grpo-rlvr demo`` (its run folder is the default). About a minute on 2 CPU cores.

1. The run as it is, three ways, each ``--repeat`` times, the median printed (wall and CPU seconds):
   - in a process warmed as the trainer's is when training ends (pyarrow and grpo-rlvr's diagnosis already
     imported by the watchdog; matplotlib not): the first report (what ``train.py`` pays once) and later ones;
   - ``grpo-rlvr report RUN --out TMP`` in a fresh process, and ``grpo-rlvr diagnose RUN --out TMP`` in a fresh
     process, with their ratio. Nothing is written into the run.
   Printed too: the page's size, and the first report's share of the run's training time (``train_runtime``;
   goal: under 1 %).
2. Growth: a TRL output folder with ``--records`` log records of the run's own keys (its values repeated with
   noise) and a completions file of 64 rows a log (the run's, copied; as ``diagnose`` does, the first 100 and the
   last 300 files are read): report seconds and page size as the run grows (curves are binned to 600 points).
Limits: CPU time is shared with whatever else runs on the machine; a fresh process reads its imports from the page
cache after the first repeat.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WARM = "import pyarrow.parquet, grpo_rlvr.diagnosis, grpo_rlvr.diagnosis.detectors"   # what the watchdog imported


def in_process(run: Path, repeat: int, out: Path) -> dict:
    """First and later reports in one process warmed as the trainer's is (written into ``out``)."""
    code = f"""
import json, time
{WARM}
from grpo_rlvr.report import write_report
out = []
for _ in range({repeat}):
    t, c = time.perf_counter(), time.process_time()
    made = write_report({str(run)!r}, out={str(out)!r})
    out.append((time.perf_counter() - t, time.process_time() - c, made.bytes))
print(json.dumps(out))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    times = json.loads(done.stdout.strip().splitlines()[-1])
    return {"first_s": times[0][0], "first_cpu_s": times[0][1], "bytes": times[0][2],
            "later_s": statistics.median(t[0] for t in times[1:]) if len(times) > 1 else None}


def fresh(args: list[str], repeat: int) -> tuple[float, float]:
    """Median wall and CPU seconds (the child's) of ``grpo-rlvr ARGS`` in a fresh process."""
    import resource

    walls, cpus = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "grpo_rlvr", *args], capture_output=True, check=True)
        walls.append(time.perf_counter() - t)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def long_run(run: Path, records: int, work: Path) -> Path:
    """A TRL output folder of ``records`` logs shaped as ``run``'s (its keys and values with noise)."""
    out = work / f"long-{records}"
    shutil.rmtree(out, ignore_errors=True)
    (out / "completions").mkdir(parents=True)
    logged = [json.loads(x) for x in (run / "output" / "metrics.jsonl").read_text().splitlines()]
    logged = [r for r in logged if "reward" in r]
    rng = random.Random(0)
    with (out / "metrics.jsonl").open("w") as fh:
        for i in range(records):
            r = logged[i % len(logged)]
            fh.write(json.dumps({**{k: v * (1 + 0.05 * rng.random()) if isinstance(v, float) else v
                                    for k, v in r.items()}, "step": i + 1}) + "\n")
    sample = sorted((run / "output" / "completions").glob("*.parquet"))[-1]
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(sample)
    for i in range(min(records, 400)):   # the first 100 and the last 300 are what is read of more
        step = i + 1 if i < 100 else records - 399 + i
        pq.write_table(table.set_column(0, "step", pa.array([step] * table.num_rows)), out / "completions" /
                       f"completions_{step:05d}.parquet")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", type=Path, default=ROOT / "runs" / "demo" / "out" / "run")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--records", type=int, nargs="*", default=[200, 2000, 20000])
    a = ap.parse_args()
    if not (a.run / "output" / "metrics.jsonl").is_file():
        sys.exit(f"{a.run}: no finished run there; run `grpo-rlvr demo` first (it trains runs/demo/out/run)")
    summary = json.loads((a.run / "output" / "metrics.jsonl").read_text().splitlines()[-1])
    train_s = summary.get("train_runtime")

    with tempfile.TemporaryDirectory() as tmp:   # nothing is written into the run itself
        warm = in_process(a.run, a.repeat, Path(tmp) / "warm")
        report_s, report_cpu = fresh(["report", str(a.run), "--out", str(Path(tmp) / "fresh")], a.repeat)
        diag_s, diag_cpu = fresh(["diagnose", str(a.run), "--out", str(Path(tmp) / "diagnosis")], a.repeat)
    print(f"run: {a.run} ({train_s} s of training)")
    later = f", later {warm['later_s']:.2f} s" if warm["later_s"] is not None else ""
    print(f"report in the trainer's process: first {warm['first_s']:.2f} s (CPU {warm['first_cpu_s']:.2f} s){later}; "
          f"page {warm['bytes'] / 1024:.0f} KiB")
    if train_s:
        print(f"  share of the run's training time: {100 * warm['first_s'] / train_s:.2f} % wall, "
              f"{100 * warm['first_cpu_s'] / train_s:.2f} % in CPU time (goal < 1 %)")
    print(f"grpo-rlvr report   (fresh process): {report_s:.2f} s wall, {report_cpu:.2f} s CPU")
    print(f"grpo-rlvr diagnose (fresh process): {diag_s:.2f} s wall, {diag_cpu:.2f} s CPU")
    print(f"  report / diagnose: {report_s / diag_s:.2f}x wall, {report_cpu / diag_cpu:.2f}x CPU")

    with tempfile.TemporaryDirectory() as tmp:
        for n in a.records:
            folder = long_run(a.run, n, Path(tmp))
            grown = in_process(folder, 1, folder)
            print(f"{n:>6} log records: report {grown['first_s']:.2f} s (CPU {grown['first_cpu_s']:.2f} s), page "
                  f"{grown['bytes'] / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
