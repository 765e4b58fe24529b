"""Benchmark: the watchdog's cost (``diagnosis/watchdog.py``) per logging step, beside the step it watches.

Run: ``python benchmarks/bench_watchdog.py [--steps 30] [--records 100 1000 5000]`` (from the repository root,
``HF_HUB_OFFLINE=1``; nothing is downloaded). A few minutes on 2 CPU cores.

1. Two real runs of the demo's brief on the untrained tiny model, ``logging_steps`` 1 (the watchdog checks at
   every step: its worst case), ``watch.stop_on: never`` so both run all steps: one with the watchdog checking
   every log (``watch.every`` 1), one where it never checks (``watch.every`` 1000, the most, above the step count: without it).
   Printed: the mean step time of each (TRL's ``step_time``) and their ratio. On a shared CPU that ratio is
   noisy, so the watchdog's own cost is also measured exactly: the first run's logs (``metrics.jsonl`` and its
   completions files) replayed through ``Watch`` in the order they were written, each check timed. Printed: the
   mean and the worst check, and the mean over the mean step time (goal < 2 %). The run's own record of its
   checks' cost (the ``cost`` event the callback writes to ``output/watch.jsonl`` at the end) is printed too: the
   callback puts a due check off when the checks took more than ``TIME_BUDGET`` of training's time so far.
2. Growth: a long run's check at ``--records`` log records (the demo's keys, a completions file of 64 rows a
   log, 80 of them kept as the watchdog keeps them). Printed: ms a check, and the share of a step of
   ``--step-s`` seconds (default 10, a small GPU model's GRPO step) with a check at every log.
Limits: one repeat; CPU time is shared with whatever else runs.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def setup(work: Path, steps: int, every: int) -> Path:
    import yaml

    from grpo_rlvr.demo import arithmetic_task, tiny_model
    from grpo_rlvr.files import write_jsonl_atomic
    from grpo_rlvr.run.render import render

    sys.path.insert(0, str(ROOT / "tests"))
    from artifacts import make_artifact

    if not (work / "model").is_dir():
        tok = tiny_model.build_tokenizer()
        tiny_model.save_pretrained(tiny_model.build_model(tok, 0), tok, work / "model", {"seed": 0})
        write_jsonl_atomic(work / "data" / "train.jsonl", arithmetic_task.make_rows(500, seed=1))
    from importlib import resources

    brief = yaml.safe_load(resources.files("grpo_rlvr.examples.arithmetic").joinpath("brief.yaml").read_text())
    brief["grpo"].update(max_steps=steps, save_steps=10_000, logging_steps=1)
    brief["watch"] = {"stop_on": "never", "every": every}
    brief["output_dir"] = f"./out-every-{every}"
    path = work / f"brief-{every}.yaml"
    path.write_text(yaml.safe_dump(brief))
    make_artifact(path, work / f"out-every-{every}" / "inspection")
    return render(path).dir


def metric(run: Path, key: str) -> list[float]:
    recs = [json.loads(x) for x in (run / "output" / "metrics.jsonl").read_text().splitlines()]
    return [r[key] for r in recs if isinstance(r.get(key), (int, float))]


def step_times(run: Path) -> list[float]:
    return metric(run, "step_time")[1:]   # the first warms up


def replay(run: Path) -> list[float]:
    """Seconds of each check, the run's own logs fed to ``Watch`` in order, its completions files appearing as
    they were written (one per log)."""
    import shutil

    from grpo_rlvr.diagnosis.watchdog import Watch, warm_imports

    warm_imports()   # as the callback does at train start
    src = run / "output"
    recs = [json.loads(x) for x in (src / "metrics.jsonl").read_text().splitlines()]
    files = sorted((src / "completions").glob("completions_*.parquet"))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        (out / "completions").mkdir()
        lock = json.loads((run / "brief.lock.json").read_text())
        w = Watch(out, lock, stop_on="never", stream=io.StringIO())
        times, i = [], 0
        for r in recs:
            if w.add(r):
                t0 = time.perf_counter()
                w.check(r["step"])
                times.append(time.perf_counter() - t0)
            while i < len(files) and int(files[i].stem.rsplit("_", 1)[1]) <= r["step"]:
                shutil.copy(files[i], out / "completions" / files[i].name)   # TRL writes it after the log
                i += 1
        return times


def growth(records: list[int]) -> list[tuple[int, float]]:
    """ms of one check at each number of records (a long healthy run, a completions file a log)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from grpo_rlvr.diagnosis.watchdog import Watch, warm_imports

    warm_imports()
    keys = ["clip_ratio/high_max", "clip_ratio/region_mean", "completions/clipped_ratio", "completions/mean_length",
            "completions/max_length", "entropy", "frac_reward_zero_std", "grad_norm", "kl", "learning_rate",
            "num_tokens", "reward", "reward_std", "rewards/exact_match/mean", "rewards/exact_match/std",
            "rewards/format/mean", "rewards/format/std", "step_time"]
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "completions").mkdir()
        w = Watch(folder, None, stop_on="never", stream=io.StringIO())
        rows = lambda s: [{"step": s, "prompt": [{"role": "user", "content": f"{g}+{s % 9}="}],  # noqa: E731
                           "completion": [{"role": "assistant", "content": f"<answer>{(g + s) % 19}</answer>"}],
                           "format": 1.0, "exact_match": float((g + s) % 3 == 0), "advantage": 0.1}
                          for g in range(8) for _ in range(8)]
        target = sorted(records)
        for n in range(1, target[-1] + 1):
            rec = {"step": n, "loss": 0.01, **{k: 0.3 + 0.0001 * (n % 97) for k in keys}}
            w.add(rec)
            if n % max(1, target[-1] // 100) == 0 or n in target:   # the files a long run's watchdog keeps
                pq.write_table(pa.Table.from_pylist(rows(n)), folder / "completions" / f"completions_{n:06d}.parquet")
            if n in target:
                w.check(n)   # reads the files written since the last check
                t0 = time.perf_counter()
                w.check(n)
                out.append((n, (time.perf_counter() - t0) * 1000))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--records", type=int, nargs="+", default=[100, 1000, 5000])
    ap.add_argument("--step-s", type=float, default=10.0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        runs = {name: setup(work, args.steps, every) for name, every in (("with", 1), ("without", 1000))}
        for name, run in runs.items():
            res = subprocess.run([sys.executable, "-m", "grpo_rlvr", "train", str(run)], capture_output=True,
                                 text=True)
            if res.returncode != 0:
                raise SystemExit(f"{name}: training failed:\n{res.stderr[-2000:]}")
        st = {name: statistics.fmean(step_times(run)) for name, run in runs.items()}
        lengths = {name: statistics.fmean(metric(run, "completions/mean_length")) for name, run in runs.items()}
        checks = replay(runs["with"])
        cost = [json.loads(x) for x in (runs["with"] / "output" / "watch.jsonl").read_text().splitlines()]
        cost = next((e for e in reversed(cost) if e.get("event") == "cost"), None)
    mean_check = statistics.fmean(checks)
    print(f"1. {args.steps} GRPO steps of the demo's brief on the tiny model, logging every step")
    print(f"   mean step time: with the watchdog {st['with']:.3f} s, without {st['without']:.3f} s, "
          f"ratio {st['with'] / st['without']:.3f} (noisy on a shared CPU); mean completion length "
          f"{lengths['with']:.1f} vs {lengths['without']:.1f} tokens (the same work when equal)")
    print(f"   the watchdog's checks, replayed on that run's logs (imports paid first, as the callback pays them at "
          f"train start): {len(checks)} checks, mean {mean_check * 1000:.1f} ms, median "
          f"{statistics.median(checks) * 1000:.1f} ms, worst {max(checks) * 1000:.1f} ms")
    print(f"   mean check / mean step: {mean_check / st['with']:.2%} (goal < 2%)")
    if cost:
        print(f"   inside the run itself (its watch.jsonl cost record): {cost['checks']} checks took "
              f"{cost['check_s']:.3f} s of {cost['elapsed_s']:.1f} s of training = {cost['share']:.2%}; "
              f"{cost['put_off']} put off for the budget")
    print(f"2. a long run's check (a completions file a log, {args.step_s:g} s steps, a check every log)")
    for n, ms in growth(args.records):
        print(f"   {n:>6} records: {ms:8.1f} ms a check = {ms / 1000 / args.step_s:.2%} of a step")


if __name__ == "__main__":
    main()
