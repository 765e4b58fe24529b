"""Dynamic sampling in real tiny CPU runs (TRL's GRPOTrainer, the rendered train.py): one process with
steps_per_generation and num_iterations > 1 and a resume, and two processes (accelerate, gloo) that run out of
refill rounds and train filler. The reward (tests/data/signal_reward.py) makes about half of the groups, or nine
in ten, carry no signal; the checks read the run's completions log and metrics.jsonl."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from artifacts import make_artifact
from conftest import example_brief_text
from grpo_rlvr.launch import train
from grpo_rlvr.run_dir import render
from grpo_rlvr.runtime.dynamic_sampling import STATE_FILE
from grpo_rlvr.runtime.group_filter import groups_with_signal

DATA = Path(__file__).parent / "data"
GENS = 8
METRICS = ("groups_dropped", "zero_signal_frac", "rounds_used", "generations_spent", "refill_prompts",
           "refill_prompts_total", "filler_groups", "surplus_groups")


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
    res = train(run, resume=True)
    assert res.ok and res.resumed_from.endswith("checkpoint-4") and res.global_step == 8
    again = [r for r in records(out)[len(first) - 1:] if "dynamic_sampling/rounds_used" in r and r["step"] == 5]
    assert again, "the resumed run logged no generation at step 5"
    step5 = again[-1]
    # the resumed stream starts where checkpoint-4 left it: neither from 0 nor past it
    assert step5["dynamic_sampling/refill_prompts_total"] - step5["dynamic_sampling/refill_prompts"] == \
        saved["position"]
    check_batches(out)


@pytest.mark.e2e
def test_two_processes_agree_and_fill_when_rounds_run_out(workspace):
    """Two ranks (gloo), 9 groups in 10 without signal and one refill round: the batch cannot fill, so filler
    groups (advantage 0) make up the rest; both ranks train the same number of rows and the run completes."""
    path = ds_brief(workspace, "mostly_flat", {"max_rounds": 1}, {"accelerator": "cpu", "cpu_processes": 2},
                    per_device_train_batch_size=16, max_steps=3)
    run = render(path).dir
    log = workspace / "train.log"
    with log.open("w") as fh:
        res = train(run, stream=fh)
    assert res.ok and res.global_step == 3, log.read_text()[-3000:]
    metrics = check_batches(run / "output")
    assert len(metrics) == 3
    assert all(r["dynamic_sampling/rounds_used"] == 1 for r in metrics)
    assert sum(r["dynamic_sampling/filler_groups"] for r in metrics) > 0
    assert all(r["dynamic_sampling/generations_spent"] == 64 for r in metrics)
    assert all(r["dynamic_sampling/refill_prompts"] == 4 for r in metrics)
    assert metrics[-1]["dynamic_sampling/refill_prompts_total"] == 12
