"""Samples no reward could score during training: left out of their step (not a made-up 0), counted, named by
their dataset row and source line; the watchdog stops a run only when their share is above the brief's limit with
confidence. The e2e test trains TRL's GRPOTrainer on the tiny model and reads the group statistics TRL logged."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from grpo_rlvr.records.unscorable import Tally, lower_bound, named, share_above, summary, wilson_interval
from tiny_runs import BAD_ROW as BAD
from tiny_runs import run_with_a_bad_row

CLI = [sys.executable, "-m", "grpo_rlvr"]


def test_the_tally_names_rows_and_counts_samples_once_whatever_the_rewards():
    t = Tally(num_generations=8)
    rec = [{"sample": s, "row": 12, "source": "d/train.jsonl:13", "reward": r, "why": "bad"}
           for s in (0, 1) for r in ("a", "b")]
    new = t.add(3, 64, rec)
    assert [e["row"] for e in new] == [12]
    assert t.seen == 64 and t.unscorable == 2 and t.by_reward == {"a": 2, "b": 2}
    assert t.add(4, 64, []) == [] and t.seen == 128
    d = t.to_dict()
    assert d["rows"][0]["samples"] == 4 and d["rows"][0]["first_step"] == 3
    assert named(d["rows"][0]) == "dataset row 12 (d/train.jsonl:13), reward 'a': bad"
    assert summary(d)[0] == "2 samples of 128 (1.6%) unscorable, left out of their steps; 1 dataset row:"


def test_one_bad_row_met_early_does_not_stop_a_run_and_many_do():
    """Each group of 8 is one draw. One bad row in the first step of 8 prompts: its share is 1/8, far above 5%,
    but not with confidence; the same share over 40 steps is."""
    one_row_early = {"seen": 64, "unscorable": 8, "num_generations": 8}
    assert not share_above(one_row_early, 0.05)
    assert share_above({"seen": 64 * 40, "unscorable": 8 * 40, "num_generations": 8}, 0.05)
    assert not share_above({"seen": 64 * 40, "unscorable": 8 * 40, "num_generations": 8}, 0.2)
    assert share_above({"seen": 64, "unscorable": 64, "num_generations": 8}, 0.05)   # nothing scores: stop early
    assert math.isclose(lower_bound(0.5, 100), 0.4038, abs_tol=1e-3)   # Wilson, z = 1.96


def test_the_wilson_interval_stays_inside_0_and_1_and_is_not_empty_at_the_ends():
    low, high = wilson_interval(0.5, 100)
    assert math.isclose(low, 0.4038, abs_tol=1e-4) and math.isclose(high, 0.5962, abs_tol=1e-4)
    assert wilson_interval(0.0, 64) == (0.0, 1.96 ** 2 / (64 + 1.96 ** 2))   # 0 of 64: up to 5.7%, not 0
    low, high = wilson_interval(1.0, 64)
    assert math.isclose(high, 1.0) and math.isclose(low, 1 - 1.96 ** 2 / (64 + 1.96 ** 2))
    assert wilson_interval(0.3, 0) == (0.0, 1.0) and lower_bound(0.3, 0) == 0.0


# A user reward with a bug that only some rows and completions meet: it reads the row's answer as a number for the
# completions whose first character has an even code, and one row's answer is not a number.
RAISES_ON_A_ROW = """\
def reward(completions, answer, **kwargs):
    out = []
    for c, a in zip(completions, answer):
        if c and ord(c[0]) % 2 == 0:
            int(a)
        out.append((ord(c[-1]) % 3) / 2 if c else 0.0)
    return out
"""
RAISING_LINE = 5


@pytest.mark.e2e
def test_a_user_reward_raising_on_one_row_leaves_the_run_training_counted_and_named(workspace):
    """Real GRPOTrainer on CPU, 10 steps of 8 prompts over 40 rows (two epochs: the bad row is drawn twice). The
    samples the reward raised on are left out of their steps: every reward NaN in TRL's completions log, advantage
    0, and the rest of their group normalised among themselves (their advantages sum to 0); the run finishes, the
    tally names the row by index and line with where the reward raised, and `watch --once` and `diagnose` say so."""
    run, res, said = run_with_a_bad_row(workspace, "raises_on_a_row.py", RAISES_ON_A_ROW, 1.0,
                                        {"logging_steps": 1, "max_steps": 10})
    assert res.ok and res.global_step == 10, said[-3000:]
    out = run / "output"

    tally = json.loads((out / "unscorable.json").read_text())
    assert tally["seen"] == 640 and 1 <= tally["unscorable"] <= 16, tally
    (entry,) = tally["rows"]
    assert entry["row"] == BAD and entry["source"] == f"{workspace / 'data' / 'train.jsonl'}:{BAD + 1}"
    assert entry["why"].startswith(f"{workspace / 'raises_on_a_row.py'}:{RAISING_LINE}: ValueError: invalid literal")
    assert f"unscorable: dataset row {BAD} ({workspace / 'data' / 'train.jsonl'}:{BAD + 1}), reward " \
           "'raises_on_a_row'" in said, said[-3000:]
    metrics = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    share = [m["rewards/raises_on_a_row/unscorable"] for m in metrics if "rewards/raises_on_a_row/unscorable" in m]
    assert len(share) == 10 and sum(share) > 0

    # TRL's own log of the groups: the left-out samples have no reward and advantage 0; their group-mates were
    # normalised among themselves, so their advantages sum to zero
    import pyarrow.parquet as pq

    def none(v):   # TRL's NaN, as the parquet file holds it (null)
        return v is None or math.isnan(v)

    left_out, partial = 0, 0
    for f in sorted((out / "completions").glob("completions_*.parquet")):
        table = pq.read_table(f).to_pylist()
        for g in range(0, len(table), 8):
            group = table[g:g + 8]
            gone = [r for r in group if none(r["raises_on_a_row"])]
            if not gone:
                continue
            assert len({json.dumps(r["prompt"]) for r in group}) == 1
            assert all(none(r["format"]) and none(r["exact_match"]) and r["advantage"] == 0.0 for r in gone), gone
            kept = [r["advantage"] for r in group if not none(r["raises_on_a_row"])]
            left_out += len(gone)
            if len(kept) >= 2:
                partial += 1
                assert abs(sum(kept)) < 1e-3 and any(abs(a) > 1e-3 for a in kept), group
    assert left_out == tally["unscorable"] and partial >= 1, (left_out, partial)

    shown = subprocess.run([*CLI, "watch", str(run), "--once"], capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert f"{tally['unscorable']} samples of 640" in shown.stdout and f"dataset row {BAD} (" in shown.stdout
    from grpo_rlvr.diagnosis import diagnose

    diag = diagnose(run)
    f = next(x for x in diag.findings if x.id == "unscorable_samples")
    assert f.severity == "warning" and any(f"dataset row {BAD}" in e for e in f.evidence)
