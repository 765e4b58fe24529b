"""The rollout road: the one piece of code that turns prompts into trajectories, for preflight, inspect and the
demo's evaluations. It is built on the trainer the run trains with, not beside it.

``roll_out`` builds TRL's trainer from the two values ``render`` writes into the run folder (the GRPOConfig kwargs
and the trainer setup, ``rollout.trainer_setup``) through the one builder the rendered ``train.py`` calls
(``trainer.trainer_build.build_trainer``), as a ``trainer.rollout_trainer.RolloutTrainer``, and asks it to generate
as a training step does. So the model load (``model_init_kwargs``: dtype, attention, remote code; an adapter; the
4-bit base), the tokenizer and chat template with ``chat_template_kwargs``, the sampling settings with
``generation_kwargs`` over them, the stop tokens and the engine are the trainer's by construction.

What the rollout changes in the config, and why none of it reaches what is sampled:

- ``beta`` 0: the reference model only weighs the loss, and building it would hold a second copy of the weights;
- no logging, reporting, saving, evaluation or pushing, and a temporary ``output_dir``;
- ``seed`` (the phase's own), and ``temperature`` when a phase samples at another on purpose (preflight's low
  temperature pass; each is recorded);
- the engine, when this machine cannot run training's (``choose_engine``): transformers generation where training
  would use vLLM on a GPU this machine lacks; TRL's colocated engine for a server-mode brief (the server is started
  by ``launch.sh`` only; the colocated engine samples with the same settings in this process). The manifest records
  the engine that sampled.

One trainer is kept per process (``release`` frees it): preflight and inspect in one process (the demo) load the
model once when nothing but the seed differs.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import json
import logging
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from grpo_rlvr.errors import ConfigError, InputFileError, MachineError
from grpo_rlvr.rollout.trainer_setup import grpo_config_dict, trainer_setup
from grpo_rlvr.rollout.trajectory import Trajectory

log = logging.getLogger(__name__)

ENGINES = ("auto", "vllm", "transformers")
# GRPOConfig keys the rollout sets, whatever the brief says (see the module docstring)
_QUIET = {"beta": 0.0, "report_to": "none", "log_completions": False, "logging_strategy": "no",
          "save_strategy": "no", "eval_strategy": "no", "push_to_hub": False, "load_best_model_at_end": False,
          "disable_tqdm": True}


@dataclass(frozen=True)
class Engine:
    """The engine that sampled, as the inspection manifest and ``--json`` record it."""

    name: str                 # "vllm" | "transformers"
    settings: dict

    def to_dict(self) -> dict:
        return {"name": self.name, **self.settings}

    def format(self) -> str:
        if self.name == "vllm":
            return f"vLLM ({self.settings.get('package')}, {self.settings.get('mode')})"
        return f"transformers ({self.settings.get('device')})"


@dataclass
class Rollout:
    """Trajectories, prompt-major (prompt 0's ``n``, then prompt 1's), each with its prompt's index and row."""

    trajectories: list[Trajectory]
    prompt_index: list[int]
    rows: list[dict]            # each trajectory's dataset row (prompt and mapped columns)
    engine: Engine
    tokenizer: object
    rewards: list               # the brief's reward objects the trainer was built with


def choose_engine(brief) -> str:
    """``"vllm"`` or ``"transformers"``: what samples here for the brief's ``sampling.engine``.

    ``auto`` samples with training's engine where it runs: vLLM when the brief trains with it and vLLM's platform
    here is a GPU; else TRL's transformers generation. ``vllm`` asks for TRL's colocated vLLM engine wherever vLLM is
    installed (its CPU build included); ``transformers`` never starts vLLM.

    Raises:
        MachineError: ``vllm`` was asked for and vLLM is not installed here.
    """
    requested = brief.sampling_engine
    if requested == "transformers":
        return "transformers"
    from grpo_rlvr.trainer.vllm_cpu import vllm_platform

    platform = vllm_platform()
    if requested == "vllm":
        if platform is None:
            raise MachineError("sampling.engine: 'vllm', but vLLM is not installed here; install it (pip install "
                               "'grpo-rlvr[vllm]' on a GPU machine; on CPU, vLLM's CPU build: see docs/ci.md's "
                               "vLLM lane), or set sampling.engine: auto")
        return "vllm"
    return "vllm" if brief.grpo.get("use_vllm") and platform not in (None, "cpu") else "transformers"


def rollout_config(brief, seed: int, engine: str, temperature: float | None = None) -> dict:
    """The GRPOConfig kwargs the rollout trainer is built with: the run's (``grpo_config.yaml``), with the changes
    the module docstring lists."""
    import torch

    cfg = {**grpo_config_dict(brief), **_QUIET, "seed": seed}
    if temperature is not None:
        cfg["temperature"] = temperature
    if engine == "vllm":
        cfg.update(use_vllm=True, vllm_mode="colocate")
    else:
        cfg["use_vllm"] = False
    if not torch.cuda.is_available():   # a GPU brief read on a CPU: TrainingArguments refuses fp16 there
        cfg.update(use_cpu=True, fp16=False)
    return cfg


_kept: tuple[str, object] | None = None   # (key, trainer): the trainer kept for this process
_owns_process_group = False               # the kept trainer started torch.distributed here (TRL's colocated vLLM)
builds = 0                                # trainers built in this process (tests read it)


def _trainer(brief, setup: dict, cfg: dict, rewards: list | None):
    """The kept rollout trainer when it was built from the same setup and config (the seed aside), else a new one
    (the old one released first)."""
    global _kept, builds, _owns_process_group
    key = json.dumps({"setup": setup, "config": {k: v for k, v in cfg.items() if k != "seed"},
                      "rewards": [(r.name, dict(r.params)) for r in brief.rewards], "brief": str(brief.path),
                      "tools": None if brief.tools is None else brief.tools.to_dict()},
                     sort_keys=True, default=str)
    if _kept is not None and _kept[0] == key:
        return _kept[1]
    release()
    from grpo_rlvr.tools.check import brief_tool_problems

    problems = brief_tool_problems(brief)
    if problems:
        raise ConfigError(problems, source=str(brief.path))
    import torch.distributed as dist
    from datasets import Dataset

    from grpo_rlvr.rewards import from_brief
    from grpo_rlvr.tools.build import trainer_tools
    from grpo_rlvr.trainer.rollout_trainer import RolloutTrainer
    from grpo_rlvr.trainer.trainer_build import build_trainer, grpo_config

    grouped = dist.is_available() and dist.is_initialized()
    out = tempfile.mkdtemp(prefix="grpo-rlvr-rollout-")
    atexit.register(shutil.rmtree, out, True)   # TRL writes nothing there; a kept trainer's goes when we exit
    config = grpo_config({**cfg, "output_dir": out})
    rewards = rewards if rewards is not None else from_brief(brief)
    tools, environment_factory = trainer_tools(None if brief.tools is None else brief.tools.to_dict(), brief.base_dir)
    # The trainer takes its prompts from roll_out; its dataset only has to exist.
    try:
        trainer = build_trainer(setup, config, rewards, Dataset.from_list([{"prompt": ""}]), cls=RolloutTrainer,
                                tools=tools, environment_factory=environment_factory,
                                tool_concurrency=brief.tools.concurrency if brief.tools is not None else 1)
    except OSError as e:   # TRL's load of a model folder or hub id that is not here
        raise InputFileError(f"model.name_or_path: cannot load {brief.model.name_or_path!r} "
                             f"({setup['model']}): {e}") from None
    builds += 1
    _kept = (key, trainer)
    _owns_process_group = not grouped and dist.is_available() and dist.is_initialized()
    return trainer


def release() -> None:
    """Free the kept rollout trainer (its model and any vLLM engine): before training in the same process, or
    before another model."""
    global _kept, _owns_process_group
    if _kept is None:
        return
    trainer = _kept[1]
    _kept = None
    owned, _owns_process_group = _owns_process_group, False
    shutil.rmtree(trainer.args.output_dir, ignore_errors=True)   # the temporary output_dir it was built with
    llm = getattr(getattr(trainer, "vllm_generation", None), "llm", None)
    core = getattr(getattr(llm, "llm_engine", None), "engine_core", None)
    if core is not None and hasattr(core, "shutdown"):
        core.shutdown()
    del trainer, llm, core
    gc.collect()
    import torch

    if owned:   # the port TRL's colocated engine bound (MASTER_PORT, 29500 by default) is free for a training after
        with contextlib.suppress(Exception):
            from vllm.distributed.parallel_state import (
                destroy_distributed_environment,
                destroy_model_parallel,
            )

            destroy_model_parallel()
            destroy_distributed_environment()
        if torch.distributed.is_initialized():
            torch.distributed.destroy_process_group()

    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def roll_out(brief, rows: Sequence[dict], n: int, seed: int, temperature: float | None = None,
             model: str | Path | None = None, progress: Callable[[int, int], None] | None = None,
             batch_size: int = 64, rewards: list | None = None) -> Rollout:
    """``n`` trajectories for each of ``rows`` (dataset rows as ``dataset.rows.load_rows`` gives them), sampled by
    the run's own trainer.

    Args:
        brief: the validated Brief.
        rows: the prompts' rows (``prompt`` and the mapped columns).
        n: trajectories per prompt.
        seed: the phase's seed.
        temperature: sample at this temperature instead of the brief's (recorded by the caller).
        model: a model folder to sample instead of the brief's model (the demo's trained ``final/``), loaded the
            way the brief's model would be.
        progress: called with (done, total) trajectories.
        batch_size: trajectories per generation call (rounded to whole groups of ``num_generations``).
        rewards: the brief's reward objects, when the caller built them already.
    Raises:
        MachineError: ``sampling.engine: vllm`` without vLLM; a 4-bit base without CUDA.
        InputFileError: the model cannot load (a folder or hub id that is not here).
    """
    from transformers import set_seed

    engine = choose_engine(brief)
    setup = trainer_setup(brief)
    if model is not None:
        setup = {**setup, "model": str(model), "model_revision": None, "adapter": None}
    if engine == "vllm" and setup.get("vllm_cpu_kv_cache_gib") is None:
        from grpo_rlvr.trainer.vllm_cpu import vllm_platform

        if vllm_platform() == "cpu":   # training would not colocate on this CPU; the road does, sized alike
            from grpo_rlvr.rollout.vllm_engine import cpu_kv_cache_gib

            setup = {**setup, "vllm_cpu_kv_cache_gib": cpu_kv_cache_gib(brief)}
    cfg = rollout_config(brief, seed, engine, temperature)
    trainer = _trainer(brief, setup, cfg, rewards)
    set_seed(seed)
    group = trainer.num_generations
    jobs = [(i, row) for i, row in enumerate(rows) for _ in range(n)]
    step = max(group, batch_size - batch_size % group)
    trajectories, index, kept_rows = [], [], []
    for start in range(0, len(jobs), step):
        chunk = jobs[start:start + step]
        pad = (-len(chunk)) % group   # TRL groups rewards by num_generations: whole groups only
        batch = [dict(row) for _, row in chunk] + [dict(chunk[-1][1]) for _ in range(pad)]
        records = trainer.roll_out(batch)[:len(chunk)]
        for (i, row), rec in zip(chunk, records, strict=True):
            trajectories.append(Trajectory(rec["prompt"], rec["completion"], tuple(rec["prompt_ids"]),
                                           tuple(rec["completion_ids"]),
                                           None if rec["loss_mask"] is None else tuple(rec["loss_mask"]), rec["stop"],
                                           rec["unavailable"], rec["environment_state"]))
            index.append(i)
            kept_rows.append(row)
        refuse_unstartable_environment(brief, trajectories, kept_rows)
        if progress:
            progress(len(trajectories), len(jobs))
    return Rollout(trajectories, index, kept_rows, _engine(trainer, engine), trainer.processing_class,
                   list(trainer.reward_funcs))


def refuse_unstartable_environment(brief, trajectories: Sequence[Trajectory], rows: Sequence[dict]) -> None:
    """Refuse (bad input, exit 2) a rollout whose environment's ``reset`` raised: training would leave every such
    rollout unscored (``tools/unavailable``), so the environment must start for the rows before its samples are
    scored, reviewed or trained on. Names how many, the first row (as training names it) and the exception.

    Raises:
        ConfigError: a reset raised (``tools.environment``).
    """
    from grpo_rlvr.tools.build import RESET_FAILED

    failed = [i for i, t in enumerate(trajectories) if (t.unavailable or "").startswith(RESET_FAILED)]
    if not failed:
        return
    first = failed[0]
    where = getattr(rows[first], "source", None) or f"prompt {first}"
    ref = (brief.tools.environment if brief.tools is not None else None) or "the environment"
    why = str(trajectories[first].unavailable).removeprefix(RESET_FAILED + ": ")
    raise ConfigError(f"tools.environment {ref!r}: reset(**row) raised in {len(failed)} of {len(trajectories)} "
                      f"rollouts so far (first on the row {where}): {why}. "
                      "Training would leave each such rollout unscored, so nothing is sampled past it: fix reset so "
                      "it starts for every row of the data (call it yourself with a row's columns), then run this "
                      "again")


def _engine(trainer, engine: str) -> Engine:
    import torch
    import transformers
    import trl

    if engine == "vllm":
        from grpo_rlvr.rollout.vllm_engine import vllm_package

        return Engine("vllm", {"package": vllm_package(), "mode": "colocate (TRL's engine in this process)",
                               "trl": trl.__version__})
    device = next(trainer.model.parameters()).device
    return Engine("transformers", {"package": f"transformers {transformers.__version__}", "device": str(device),
                                   "torch": torch.__version__, "trl": trl.__version__,
                                   "dtype": str(next(trainer.model.parameters()).dtype).removeprefix("torch.")})
