"""Benchmark: plain GRPO against DAPO's dynamic sampling (the brief's ``dynamic_sampling`` section,
``trainer/dynamic_sampling.py``), side by side in one run: the same task, model, seed, config and wall-clock budget.

Run: ``python benchmarks/bench_dynamic_sampling.py [--budget-s 60] [--steps 20] [--max-rounds 3]`` (from the
repository root, ``PYTHONPATH=src HF_HUB_OFFLINE=1``; nothing is downloaded). A few minutes on 2 CPU cores.

The task state: the demo's tiny model after a shortened SFT warmup (``demo/pipeline.py``'s WARMUP, 125 steps
instead of 150: ``--warmup-steps``), on the demo's single-digit additions, rewarded by ``exact_match`` alone
(weight 1), 8 generations a prompt, 8 prompts a step. A group then carries no signal when all 8 answers are wrong
(or all right): about half of them (0.515 of the plain arm's 336 trained groups in a 60 s run). Everything else
is the demo brief's GRPOConfig as ``render`` resolves it (lr 3e-4, constant), built into the same trainer class
the rendered train.py builds for each arm.

Each arm runs in its own process (plain first, then dynamic), until it has passed both the budget and
``--steps`` steps. Kept from each: the weights at the last step that ended within the budget ("equal wall
time": the clock starts when training starts, after the model loads) and at step ``--steps`` ("equal steps").
Printed per arm and as ratios dynamic / plain:
- the zero-signal share of the trained groups, recounted from the logged completions (``completions/*.parquet``,
  ``logging_steps`` 1, so each step's trained batch): groups whose rewards all lie within 1e-6;
- the completions generated (counted by the reward, which scores each once) and the steps done in the budget;
- sampled accuracy (temperature 1, the demo's oracle, 4 samples on each of 100 held-out prompts) at equal wall
  time and at equal steps.
Limits: one seed, one repeat; CPU time is shared with whatever else runs (the printed load says how much).
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOLERANCE = 1e-6
WARMUP_STEPS = 125   # the demo's warmup (label smoothing 0.075, lr 1e-3, batch 32), shortened from its 150
ARMS = ("plain", "dynamic")


# --- the table (pure: tested in tests/test_bench_dynamic_sampling.py) -------------------------------------------

def zero_signal_share(rows: list[dict], weights: dict[str, float], num_generations: int, last_step: int,
                      tolerance: float = TOLERANCE) -> tuple[float, int]:
    """Share of the trained groups, steps 1..``last_step``, whose combined rewards all lie within ``tolerance``,
    and how many groups that was. ``rows`` are the logged completions (step, prompt, one column per reward);
    a group is ``num_generations`` consecutive rows of one prompt at one step, as TRL logs them."""
    groups: dict[tuple[int, int], list[float]] = {}
    position: dict[int, int] = {}
    for r in rows:
        step = int(r["step"])
        if step > last_step:
            continue
        i = position.get(step, 0)
        position[step] = i + 1
        total = sum(w * (r.get(name) or 0.0) for name, w in weights.items())
        groups.setdefault((step, i // num_generations), []).append(total)
    if not groups:
        return float("nan"), 0
    flat = sum(max(g) - min(g) <= tolerance for g in groups.values())
    return flat / len(groups), len(groups)


def ratio(dynamic: float, plain: float) -> str:
    """dynamic / plain, to 2 decimals; "n/a" when plain is zero or a value is missing."""
    if plain in (None, 0) or dynamic is None or plain != plain or dynamic != dynamic:
        return "n/a"
    return f"{dynamic / plain:.2f}"


ROWS = (  # (label, key in an arm's result, format)
    ("zero-signal share of trained groups (in budget)", "zero_signal_share", "{:.3f}"),
    ("completions generated (in budget)", "generations_in_budget", "{:.0f}"),
    ("steps done in budget", "steps_in_budget", "{:.0f}"),
    ("sampled accuracy at equal wall time", "accuracy_at_budget", "{:.3f}"),
    ("completions generated (equal steps)", "generations_at_steps", "{:.0f}"),
    ("sampled accuracy at equal steps", "accuracy_at_steps", "{:.3f}"),
    ("wall s to reach equal steps", "wall_at_steps", "{:.1f}"),
)


def format_table(plain: dict, dynamic: dict) -> str:
    width = max(len(label) for label, _, _ in ROWS) + 2
    lines = [f"{'':<{width}}{'plain':>10}{'dynamic':>10}{'dyn/plain':>11}"]
    for label, key, fmt in ROWS:
        p, d = plain.get(key), dynamic.get(key)
        cells = [fmt.format(v) if v is not None else "—" for v in (p, d)]
        lines.append(f"{label:<{width}}{cells[0]:>10}{cells[1]:>10}{ratio(d, p):>11}")
    return "\n".join(lines)


EVAL_PER_PROMPT = 4


def accuracy(model_dir: Path, sampling: dict, seed: int) -> float:
    """Sampled accuracy on the demo's held-out prompts (oracle-checked), the same draw for every model."""
    from grpo_rlvr.demo import arithmetic_task as task
    from grpo_rlvr.demo.pipeline import EVAL_PROMPTS, sampled_accuracy

    rows = task.make_rows(EVAL_PROMPTS, seed=seed + 99)
    return sampled_accuracy(model_dir, rows, EVAL_PER_PROMPT, sampling["temperature"], seed + 7,
                            sampling["max_completion_length"])["accuracy"]


# --- one arm (a worker process) ---------------------------------------------------------------------------------

def run_arm(arm: str, work: Path, budget_s: float, steps: int, seed: int) -> dict:
    import pyarrow.parquet as pq
    import torch
    from transformers import TrainerCallback
    from trl import GRPOConfig

    from grpo_rlvr.brief import load_brief
    from grpo_rlvr.dataset.rows import load_split
    from grpo_rlvr.rewards import build_reward
    from grpo_rlvr.rollout.trainer_setup import grpo_config_dict
    from grpo_rlvr.run.render import _split_spec

    torch.manual_seed(seed)
    brief = load_brief(work / f"brief-{arm}.yaml")
    cfg = grpo_config_dict(brief)
    out = work / f"out-{arm}"
    cfg.update(output_dir=str(out), max_steps=100_000, logging_steps=1, log_completions=True, save_strategy="no",
               report_to=[], disable_tqdm=True, seed=seed)
    config = GRPOConfig(**cfg)
    scorer = build_reward("exact_match", {}, base_dir=work, kind="correctness")
    spent = [0]

    def exact_match(completions, **kw):  # the brief's reward, counting what it scores: one per generation
        spent[0] += len(completions)
        return scorer(completions=completions, **kw)

    kept: dict[str, dict] = {}

    class Budget(TrainerCallback):
        def on_train_begin(self, args, state, control, **kw):
            self.t0 = time.perf_counter()

        def on_step_end(self, args, state, control, model=None, **kw):
            elapsed = time.perf_counter() - self.t0
            snap = {"step": state.global_step, "wall_s": elapsed, "generations": spent[0],
                    "weights": {k: v.detach().clone() for k, v in model.state_dict().items()}}
            if elapsed <= budget_s:
                kept["budget"] = snap
            if state.global_step == steps:
                kept["steps"] = snap
            if elapsed > budget_s and state.global_step >= steps:
                control.should_training_stop = True

    if arm == "dynamic":
        from grpo_rlvr.trainer.trainers import GRPOTrainerWithDynamicSampling

        cls = functools.partial(GRPOTrainerWithDynamicSampling, **brief.dynamic_sampling.to_dict())
    else:
        from grpo_rlvr.trainer.trainers import GRPOTrainerWithHeldOut

        cls = GRPOTrainerWithHeldOut
    ds = brief.dataset
    trainer = cls(model=brief.model.resolved, reward_funcs=[exact_match], args=config,
                  train_dataset=load_split(_split_spec(ds.resolved, ds.is_local, ds.split, "dataset.path", ds.subset),
                                           ds.prompt_column, dict(ds.columns), dict(ds.prompt) or None),
                  callbacks=[Budget()])
    trainer.train()
    rows = [r for f in sorted((out / "completions").glob("completions_*.parquet")) for r in pq.read_table(f).to_pylist()]
    s = brief.sampling()
    result = {"arm": arm, "steps_total": trainer.state.global_step}
    for name, snap in kept.items():
        trainer.model.load_state_dict(snap["weights"])
        d = work / f"{arm}-{name}"
        trainer.model.save_pretrained(d)
        trainer.processing_class.save_pretrained(d)
        acc = accuracy(d, s, seed)
        result |= {f"accuracy_at_{name}": acc, f"generations_{'in_budget' if name == 'budget' else 'at_steps'}":
                   snap["generations"], f"wall_at_{name}": snap["wall_s"]}
        if name == "budget":
            result["steps_in_budget"] = snap["step"]
            result["zero_signal_share"], result["groups_in_budget"] = zero_signal_share(
                rows, {"exact_match": 1.0}, config.num_generations, snap["step"])
    ds_keys = [h for h in trainer.state.log_history if "dynamic_sampling/filler_groups" in h]
    if ds_keys:
        result["filler_logs"] = sum(h["dynamic_sampling/filler_groups"] > 0 for h in ds_keys) / len(ds_keys)
    return result


# --- the whole benchmark ----------------------------------------------------------------------------------------

def setup(work: Path, seed: int, max_rounds: int, warmup_steps: int) -> None:
    from importlib import resources

    import yaml
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from grpo_rlvr.demo import arithmetic_task as task
    from grpo_rlvr.demo import tiny_model
    from grpo_rlvr.demo.pipeline import TRAIN_ROWS, WARMUP, _build_base_model
    from grpo_rlvr.demo.warmup import sft_warmup
    from grpo_rlvr.files import write_jsonl_atomic

    rows = task.make_rows(TRAIN_ROWS, seed=seed + 1)
    base, _ = _build_base_model(seed, fresh=False)
    tok, model = AutoTokenizer.from_pretrained(base), AutoModelForCausalLM.from_pretrained(base)
    sft_warmup(model, tok, rows, [task.target_completion(r["answer"]) for r in rows], seed=seed,
               **{**WARMUP, "steps": warmup_steps})
    tiny_model.save_pretrained(model, tok, work / "model", {"seed": seed, "kind": "sft-warmup", **WARMUP,
                                                            "steps": warmup_steps})
    write_jsonl_atomic(work / "data" / "train.jsonl", rows)
    brief = yaml.safe_load(resources.files("grpo_rlvr.examples.arithmetic").joinpath("brief.yaml").read_text())
    brief["rewards"] = [{"name": "exact_match", "weight": 1.0}]
    (work / "brief-plain.yaml").write_text(yaml.safe_dump(brief))
    (work / "brief-dynamic.yaml").write_text(yaml.safe_dump({**brief, "dynamic_sampling": {"max_rounds": max_rounds}}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--budget-s", type=float, default=60.0, help="wall-clock budget per arm, seconds (default 60)")
    ap.add_argument("--steps", type=int, default=20, help="the step count compared at equal steps (default 20)")
    ap.add_argument("--max-rounds", type=int, default=3, help="dynamic_sampling.max_rounds (default 3)")
    ap.add_argument("--warmup-steps", type=int, default=WARMUP_STEPS,
                    help=f"SFT warmup steps before GRPO (default {WARMUP_STEPS}: about half the groups zero-signal)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--worker", choices=ARMS, help=argparse.SUPPRESS)
    ap.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        res = run_arm(args.worker, args.work, args.budget_s, args.steps, args.seed)
        (args.work / f"result-{args.worker}.json").write_text(json.dumps(res))
        return
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        setup(work, args.seed, args.max_rounds, args.warmup_steps)
        from grpo_rlvr.brief import load_brief
        from grpo_rlvr.demo.pipeline import EVAL_PROMPTS

        before = accuracy(work / "model", load_brief(work / "brief-plain.yaml").sampling(), args.seed)
        results = {}
        for arm in ARMS:
            cmd = [sys.executable, __file__, "--worker", arm, "--work", str(work), "--budget-s", str(args.budget_s),
                   "--steps", str(args.steps), "--seed", str(args.seed)]
            with open(work / f"{arm}.log", "w") as log:
                rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=os.environ).returncode
            if rc:
                sys.exit(f"the {arm} arm failed (exit {rc}):\n{(work / f'{arm}.log').read_text()[-3000:]}")
            results[arm] = json.loads((work / f"result-{arm}.json").read_text())
    plain, dynamic = results["plain"], results["dynamic"]
    print(f"plain GRPO vs dynamic sampling (max_rounds {args.max_rounds}): budget {args.budget_s:g} s, equal steps "
          f"{args.steps}, seed {args.seed}; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print(format_table(plain, dynamic))
    n = EVAL_PROMPTS * EVAL_PER_PROMPT
    print(f"sampled accuracy before GRPO: {before:.3f}; each accuracy is over {n} samples (standard error about "
          f"{math.sqrt(max(before, 0.01) * (1 - before) / n):.3f} at that level)")
    if "filler_logs" in dynamic:
        print(f"dynamic: the refill ran out of rounds in {dynamic['filler_logs']:.0%} of its steps")
    print(f"wall s at the budget point: plain {plain['wall_at_budget']:.1f}, dynamic {dynamic['wall_at_budget']:.1f}")


if __name__ == "__main__":
    main()
