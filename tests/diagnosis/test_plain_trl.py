"""A real plain-TRL run, diagnosed: a user's script (tests/scripts/plain_trl_grpo.py) calls GRPOTrainer
directly, without grpo-rlvr's brief, render or launcher, with its own reward functions (format_reward,
correctness_reward, length_bonus, which pays for length), on the local tiny model. diagnose reads its output_dir
(trainer_state.json in the newest checkpoint, TRL's completions parquet files), tells the rewards' roles from
their names and finds the length coupling.

Measured (10 steps, batch 16, lr 1e-3, at most 128 tokens): mean length 42 → 100 tokens (first 3 logs 61, last 3
94: +54%), length_bonus 0.45 → 0.71 over the same windows, correctness 0 throughout; the within-group length /
advantage correlation at the end is +1.00. The run's CPU time is about 45 s."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from grpo_rlvr.demo import arithmetic_task
from grpo_rlvr.diagnosis import diagnose
from grpo_rlvr.files import write_jsonl_atomic
from outcome_seeds import training_outcome
from paths import CLI, SCRIPTS

pytestmark = pytest.mark.e2e

SCRIPT = SCRIPTS / "plain_trl_grpo.py"


@training_outcome
def test_plain_trl_run_with_a_length_bonus_is_diagnosed(tmp_path, tiny_model_dir, seed):
    """Sweep (issue 23, ``benchmarks/outcome_sweep.py -k plain_trl``): seeds 0-1 with the default kernels and with
    AVX2 held, 4 of 4."""
    write_jsonl_atomic(tmp_path / "train.jsonl", arithmetic_task.make_rows(64, seed=1))
    out = tmp_path / "Tiny-GRPO"
    env = {**os.environ, "PYTHONPATH": "", "OMP_NUM_THREADS": "1"}   # the user's script knows nothing of grpo_rlvr
    run = subprocess.run([sys.executable, str(SCRIPT), str(tiny_model_dir), str(tmp_path / "train.jsonl"), str(out),
                          "1e-3", str(seed)], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    assert (out / "checkpoint-10" / "trainer_state.json").is_file() and not (out / "trainer_state.json").exists()
    assert sorted(p.name for p in (out / "completions").glob("*.parquet"))[-1] == "completions_00010.parquet"

    p = subprocess.run([*CLI, "diagnose", str(out), "--json"], capture_output=True, text=True, cwd=tmp_path)
    d = json.loads(p.stdout)
    assert p.returncode == 1 and d["exit_code"] == 1 and not d["healthy"], p.stderr   # a failure mode is named
    assert d["log"] == str(out / "checkpoint-10" / "trainer_state.json") and d["records"] == 10
    assert {n: r["role"] for n, r in d["roles"].items()} == {
        "correctness_reward": "correctness", "format_reward": "format", "length_bonus": "length"}
    f = next((x for x in d["findings"] if x["id"] == "length_reward_coupling"), None)
    assert f is not None, p.stdout
    assert any(e.startswith("length_bonus (a length reward) mean") for e in f["evidence"]), f["evidence"]
    assert d["recommended_variant"] == "dr_grpo" and (out / "diagnosis.md").is_file()
    text = diagnose(out).format()
    print(text)   # the report pastes this run's diagnosis
    assert "length_bonus: length (name)" in text
