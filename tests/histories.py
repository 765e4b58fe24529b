"""Logged metric histories and completion files written as TRL writes them, for the diagnosis tests that need no
training run: a healthy history, and helpers that make any failure mode by overriding one series."""

from __future__ import annotations

import json


def history(n=20, **series):
    """Log records for steps 5, 10, …; each series is a function of the record index 0..n-1."""
    out = []
    for i in range(n):
        rec = {"step": 5 * (i + 1), "loss": 0.01}
        for key, fn in series.items():
            rec[key.replace("__", "/")] = fn(i)
        out.append(rec)
    return out


HEALTHY = dict(reward=lambda i: 0.2 + 0.02 * i, rewards__format__mean=lambda i: 0.7 + 0.01 * i,
               rewards__exact_match__mean=lambda i: 0.1 + 0.015 * i, entropy=lambda i: 0.4 - 0.008 * i,
               frac_reward_zero_std=lambda i: 0.1, completions__mean_length=lambda i: 20.0,
               completions__clipped_ratio=lambda i: 0.02, kl=lambda i: 0.01 + 0.001 * i,
               clip_ratio__region_mean=lambda i: 0.0)


def write_state(tmp_path, records) -> str:
    p = tmp_path / "trainer_state.json"
    p.write_text(json.dumps({"log_history": records}))
    return str(p)


def write_completions(tmp_path, steps, make_group, groups_per_step=4, size=8):
    """completions/completions_<step>.parquet as TRL writes them: step, prompt, completion, rewards, advantage.
    ``make_group(step_index, group_index)`` returns [(completion, exact_match, advantage), ...]."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    d = tmp_path / "completions"
    d.mkdir(exist_ok=True)
    for i, step in enumerate(steps):
        rows = []
        for g in range(groups_per_step):
            for text, em, adv in make_group(i, g)[:size]:
                rows.append({"step": step, "prompt": [{"role": "user", "content": f"{g}+{i}="}],
                             "completion": text, "format": 1.0, "exact_match": em, "advantage": adv})
        pq.write_table(pa.Table.from_pylist(rows), d / f"completions_{step:05d}.parquet")


# entropy falling by a fifth per log while quality stays flat: the watchdog's critical entropy_collapse
ENTROPY_COLLAPSE = {"entropy": lambda i: 0.5 * 0.8 ** i, "reward": lambda i: 0.3,
                    "rewards__exact_match__mean": lambda i: 0.1}

STEPS = [5 * (i + 1) for i in range(20)]
