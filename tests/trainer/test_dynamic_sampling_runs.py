"""Dynamic sampling in real tiny CPU runs (TRL's GRPOTrainer, the rendered train.py): one process with
steps_per_generation and num_iterations > 1 and a resume, on a reward where about half of the groups carry no
signal; and two processes (torchrun, gloo) that run out of refill rounds, train filler and move completions
between ranks. Rewards: tests/data/signal_reward.py. The checks read the run's completions log and metrics.jsonl."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from artifacts import make_artifact
from briefs import example_brief_text
from grpo_rlvr.run.launch import train
from grpo_rlvr.run.render import render
from grpo_rlvr.trainer.dynamic_sampling import STATE_FILE
from grpo_rlvr.trainer.group_filter import groups_with_signal
from paths import DATA

GENS = 8
METRICS = ("groups_dropped", "zero_signal_frac", "rounds_used", "generations_spent", "refill_prompts",
           "refill_prompts_total", "filler_groups", "surplus_groups", "rows_moved")


def ds_brief(workspace: Path, reward: str, dynamic: dict, hardware: dict | None = None, **grpo) -> Path:
    shutil.copy(DATA / "signal_reward.py", workspace / "signal_reward.py")
    data = yaml.safe_load(example_brief_text())
    data["rewards"].append({"name": f"signal_reward.py:{reward}", "kind": "shaping", "weight": 0.05})
    data["grpo"].update({"logging_steps": 1, "save_strategy": "no", **grpo})
    data["grpo"].pop("disable_tqdm", None)
    data["dynamic_sampling"] = dynamic
    if hardware:
        data["hardware"] = hardware
    path = workspace / "brief.yaml"
    path.write_text(yaml.safe_dump(data))
    make_artifact(path, workspace / "out" / "inspection")
    return path


def records(output: Path) -> list[dict]:
    return [json.loads(x) for x in (output / "metrics.jsonl").read_text().splitlines()]


def logged_groups(output: Path) -> dict[int, list[list[dict]]]:
    """step → the logged completions in blocks of num_generations (the trained batch, group by group)."""
    import pandas as pd

    out = {}
    for f in sorted((output / "completions").glob("completions_*.parquet")):
        rows = pd.read_parquet(f).to_dict("records")
        assert len(rows) % GENS == 0, f
        blocks = [rows[i:i + GENS] for i in range(0, len(rows), GENS)]
        for b in blocks:  # a block is one group: one prompt
            assert len({json.dumps(r["prompt"], sort_keys=True, default=str) for r in b}) == 1, f
        out[int(f.stem.split("_")[1])] = blocks
    return out


def signal_of(block: list[dict], names: list[str], weights: list[float]) -> bool:
    import torch

    values = torch.tensor([[float("nan") if r[n] is None else r[n] for n in names] for r in block])
    return bool(groups_with_signal(values, weights, GENS, 1e-6)[0])


def check_batches(output: Path) -> list[dict]:
    """Every logged batch: groups without signal only as filler (advantage exactly 0), as many as reported."""
    names, weights = ["format", "exact_match", None], [0.2, 1.0, 0.05]
    metrics = [r for r in records(output) if "dynamic_sampling/rounds_used" in r]
    assert metrics, "no dynamic_sampling/* metrics logged"
    for r in metrics:
        assert all(f"dynamic_sampling/{m}" in r for m in METRICS), sorted(r)
    by_step = {r["step"]: r for r in metrics}
    for step, blocks in logged_groups(output).items():
        names[2] = next(k for k in blocks[0][0] if k not in ("step", "prompt", "completion", "advantage",
                                                               "format", "exact_match"))
        flat = [b for b in blocks if not signal_of(b, names, weights)]
        if step in by_step:
            assert len(flat) == by_step[step]["dynamic_sampling/filler_groups"], step
        for b in flat:
            assert all(r["advantage"] == 0.0 for r in b), step
    return metrics


@pytest.mark.e2e
def test_one_process_multi_step_generation_and_resume(workspace):
    """steps_per_generation 2 × num_iterations 2: one generation batch (4 groups) per 4 steps; refill fills it.
    Then the run resumes from checkpoint-4 and continues the refill stream where the checkpoint left it."""
    path = ds_brief(workspace, "half", {"max_rounds": 3}, per_device_train_batch_size=16,
                    steps_per_generation=2, num_iterations=2, max_steps=8, save_strategy="steps", save_steps=4)
    run = render(path).dir
    out = run / "output"
    res = train(run)
    assert res.ok and res.global_step == 8
    metrics = check_batches(out)
    assert [r["step"] for r in metrics] == [1, 5]        # one generation batch per 4 optimizer steps
    assert sum(r["dynamic_sampling/groups_dropped"] for r in metrics) > 0
    assert all(r["dynamic_sampling/filler_groups"] == 0 for r in metrics)   # refill succeeded every time
    assert all(r["dynamic_sampling/rounds_used"] >= 1 for r in metrics if r["dynamic_sampling/groups_dropped"])
    assert all(r["dynamic_sampling/generations_spent"] == 32 * (1 + r["dynamic_sampling/rounds_used"])
               for r in metrics)
    saved = json.loads((out / "checkpoint-4" / STATE_FILE).read_text())
    assert saved["position"] == metrics[0]["dynamic_sampling/refill_prompts_total"] > 0

    first = {r["step"]: r for r in records(out)}
    shutil.rmtree(out / "checkpoint-8")
    with (workspace / "resume.log").open("w") as fh:
        res = train(run, resume=True, stream=fh)
    assert res.ok and res.resumed_from.endswith("checkpoint-4") and res.global_step == 8
    said = (workspace / "resume.log").read_text()
    assert re.search(r"train\.py: resuming from \S*checkpoint-4 at step 4 ", said), said[-2000:]
    again = [r for r in records(out)[len(first) - 1:] if "dynamic_sampling/rounds_used" in r and r["step"] == 5]
    assert again, "the resumed run logged no generation at step 5"
    step5 = again[-1]
    # the resumed stream starts where checkpoint-4 left it: neither from 0 nor past it
    assert step5["dynamic_sampling/refill_prompts_total"] - step5["dynamic_sampling/refill_prompts"] == \
        saved["position"]
    check_batches(out)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.e2e
def test_two_processes_agree_move_rows_and_fill(workspace):
    """Two ranks over gloo, started with torchrun on the rendered train.py (accelerate's launcher starts a single
    process for a MULTI_CPU config without mpirun), 16 rows = two groups per rank, one refill round allowed. The
    reward gives signal only to rank 0's refill completions, so every step goes the same way: round 0 has none,
    the refill round keeps rank 0's two groups, rank 1's slots take dropped groups as filler (advantage 0), and
    rank 0's kept rows move to rank 1 to even the shares. Ranks that disagreed would hang in a collective."""
    path = ds_brief(workspace, "refills_on_rank0", {"max_rounds": 1}, {"accelerator": "cpu", "cpu_processes": 2},
                    per_device_train_batch_size=16, max_steps=3, save_strategy="steps", save_steps=2)
    run = render(path).dir
    out = run / "output"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
           "--master_port", str(free_port()), str(run / "train.py")]
    res = subprocess.run(cmd, cwd=run, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"})
    assert res.returncode == 0, res.stderr[-3000:]
    metrics = check_batches(out)
    assert [r["step"] for r in metrics] == [1, 2, 3]
    for r in metrics:
        got = {k.split("/")[1]: v for k, v in r.items() if k.startswith("dynamic_sampling/")}
        # 4 groups × 8 per round, two rounds: 64 completions means both ranks generated
        assert got == {"groups_dropped": 6.0, "zero_signal_frac": 0.75, "rounds_used": 1.0, "generations_spent": 64.0,
                       "refill_prompts": 4.0, "refill_prompts_total": 4.0 * r["step"], "filler_groups": 2.0,
                       "surplus_groups": 0.0, "rows_moved": 16.0}, r["step"]

    # the checkpoint holds the stream's position (2 steps × 4 refill prompts). Resuming two CPU processes fails
    # inside transformers 5.17 before this code runs (the optimizer loads with map_location "cpu:0"), so the
    # resume itself is checked in one process above.
    assert json.loads((out / "checkpoint-2" / STATE_FILE).read_text())["position"] == 8
