"""The data step for a reasoning-gym task: rows of a brief's dataset, written as JSONL.

Run: ``python -m grpo_rlvr.examples.reasoning_gym.data --task spell_backward --size 2000 --out train.jsonl
[--seed 0] [--config min_word_len=3 --config max_word_len=5]``. Each row: ``question`` (the task's prompt as it
words it), ``answer`` (its reference answer), ``task``, and ``entry`` (the whole reasoning-gym entry as a JSON
string, which the task's ``score_answer`` reads back: ``reward.py``). ``--config`` sets the task's generator
options (``KEY=VALUE``, the value read as JSON when it parses). Writes atomically; an existing file is replaced
only with ``--force``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path


def make_rows(task: str, size: int, seed: int, config: dict | None = None,
              keep: Callable[[dict], bool] | None = None) -> list[dict]:
    """``size`` rows of ``task`` drawn with ``seed`` (entries ``keep`` refuses are skipped, more are drawn).

    Raises:
        ValueError: an unknown task or a bad config (reasoning-gym's own message).
    """
    import reasoning_gym

    rows: list[dict] = []
    draw = 0
    while len(rows) < size:
        data = reasoning_gym.create_dataset(task, size=max(size, 64), seed=seed + draw, **(config or {}))
        for e in data:
            if keep is None or keep(e):
                rows.append({"question": e["question"], "answer": str(e["answer"]), "task": task,
                             "entry": json.dumps(e, default=str)})
                if len(rows) == size:
                    break
        draw += 1
        if draw > 50:
            raise ValueError(f"task {task!r}: fewer than {size} entries pass the filter in 50 draws")
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", required=True, help="a reasoning-gym task name, e.g. spell_backward")
    ap.add_argument("--size", type=int, default=2000, help="rows to write (default 2000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--config", action="append", default=[], metavar="KEY=VALUE", help="a generator option")
    ap.add_argument("--out", required=True, help="the JSONL file to write")
    ap.add_argument("--force", action="store_true", help="replace an existing file")
    args = ap.parse_args(argv)
    from grpo_rlvr.errors import ConfigError
    from grpo_rlvr.files import write_jsonl_atomic
    from grpo_rlvr.score.scoring import parse_options  # KEY=VALUE, the value read as JSON when it parses

    out = Path(args.out)
    if out.exists() and not args.force:
        print(f"Error: {out} exists; pass --force to replace it", file=sys.stderr)
        return 2
    try:
        config = parse_options(args.config)
    except ConfigError as e:
        print(f"Error: --config: {e}", file=sys.stderr)
        return 2
    try:
        rows = make_rows(args.task, args.size, args.seed, config)
    except (ValueError, TypeError, AssertionError) as e:
        print(f"Error: --task {args.task!r}: {e}", file=sys.stderr)
        return 2
    write_jsonl_atomic(out, rows)
    print(f"wrote {len(rows)} rows of {args.task} to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
