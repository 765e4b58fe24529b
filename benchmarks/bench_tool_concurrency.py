"""What running a turn's tool calls at once buys: the same rollouts (the tiny model warmed to call ``push``, an
environment whose every call sleeps ``--seconds``, like a remote service) sampled on the rollout road at
``tools.concurrency`` 1 (TRL's own loop: one call after another) and at ``--concurrency``, side by side in one run.

Run: ``python benchmarks/bench_tool_concurrency.py [--seconds 0.2] [--concurrency 16] [--per-prompt 4]``

Printed: the calls made, the wall time of each roll-out, the most calls that were in flight at once, and the
ratio; the trajectories of both settings are compared and must be the same (exit 1 otherwise).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from tool_briefs import SLOW_ROWS, calling_model, most_at_once, read_calls, slow_env_brief  # noqa: E402


def roll(work: Path, model: Path, concurrency: int, seconds: float, per_prompt: int):
    from grpo_rlvr.brief import load_brief
    from grpo_rlvr.rollout.road import release, roll_out

    brief = load_brief(slow_env_brief(work, model, concurrency, seconds))
    roll_out(brief, SLOW_ROWS[:1], 1, seed=1)      # build the trainer and load the model outside the clock
    log = work / f"calls-{concurrency}.jsonl"
    log.unlink(missing_ok=True)
    t0 = time.perf_counter()
    drawn = roll_out(brief, SLOW_ROWS, per_prompt, seed=0)
    wall = time.perf_counter() - t0
    release()
    return drawn.trajectories, read_calls(work, concurrency), wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=0.2, help="each environment call's time (default 0.2)")
    ap.add_argument("--concurrency", type=int, default=16, help="tools.concurrency to compare with 1 (default 16)")
    ap.add_argument("--per-prompt", type=int, default=4, help="rollouts per prompt, 8 prompts (default 4)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        model = calling_model(work / "model")
        one, one_calls, one_s = roll(work, model, 1, args.seconds, args.per_prompt)
        many, many_calls, many_s = roll(work, model, args.concurrency, args.seconds, args.per_prompt)
    print(f"{8 * args.per_prompt} rollouts, environment calls of {args.seconds:g} s")
    print(f"{'concurrency':<12}{'calls':>6}{'at once':>9}{'roll-out s':>12}")
    for c, calls, wall in ((1, one_calls, one_s), (args.concurrency, many_calls, many_s)):
        print(f"{c:<12}{len(calls):>6}{most_at_once(calls):>9}{wall:>12.2f}")
    print(f"ratio (concurrency 1 / {args.concurrency}): {one_s / many_s:.2f}x")
    same = [t.text for t in one] == [t.text for t in many]
    print("trajectories identical at both settings" if same else "TRAJECTORIES DIFFER")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
