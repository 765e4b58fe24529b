"""Where a brief's resolved GRPO settings leave the skill's recipe, and whether a run has earned each change.

The recipe (``RECIPE`` in ``brief.recipe``, the method's defaults, the vLLM mode the hardware implies) is where every
run starts. The skill allows changing it only once a base run is stable and its reward was inspected, so each
departure is listed with where it came from and what grounds it:

- ``method``: the method's own default, with its source (LoRA's 1e-5 learning rate);
- ``hardware``: what the machine forces (no vLLM and no bf16 on CPU);
- ``variant``: a variant's delta, backed by its diagnosis (or GSPO, which a mixture-of-experts model requires);
- ``brief``: the brief's own ``grpo:`` value. Such a change to a *training* setting (anything that alters
  what is learned: rate, KL, group size, loss, clipping, sampling, schedule) is grounded only when the brief
  names the ``diagnosis.json`` of an earlier run (``variant.diagnosis`` or ``base_run.diagnosis``) that was
  not an unreviewed smoke test, or says why in its ``deviations:`` section (a deliberate change, such as a tiny
  model's learning rate; never a variant, which needs its diagnosis); otherwise ``validate`` warns. *Setup* settings (batch split, lengths, vLLM
  memory, run length, logging, saving) size or book-keep a run, so they are listed but not warned about.

Limits: "stable and inspected" is known only through that diagnosis file: the diagnosis says the run trained
(behind the gate, unless its smoke-test finding says otherwise); this module does not re-check that run's
inspection. Imports no torch.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from grpo_rlvr.brief import methods
from grpo_rlvr.brief.variants import VARIANTS, variants_in

# Keys that size or book-keep a run without changing what it learns (prefixes end with "_").
SETUP_KEYS = {"per_device_train_batch_size", "gradient_accumulation_steps", "generation_batch_size",
              "steps_per_generation", "max_completion_length", "gradient_checkpointing", "bf16", "fp16", "tf32",
              "use_vllm", "vllm_mode", "use_cpu", "seed", "data_seed", "max_steps", "num_train_epochs",
              "log_completions", "num_completions_to_print", "report_to", "run_name", "disable_tqdm",
              "per_device_eval_batch_size", "num_generations_eval", "reward_weights", "torch_compile",
              "cast_lm_head_to_fp32", "shuffle_dataset", "wandb_log_unique_prompts", "log_unique_prompts"}
SETUP_PREFIXES = ("vllm_", "save_", "logging_", "eval_", "dataloader_", "ddp_", "hub_", "push_to_hub",
                  "gradient_checkpointing_", "log_level")
SMOKE_FINDING = "unreviewed_smoke_test"


@dataclass(frozen=True)
class Deviation:
    key: str
    value: object
    recipe: object          # the recipe's value; None when the recipe leaves the key to TRL's default
    origin: str             # "brief" | "method:<m>" | "hardware" | "variant:<v>"
    kind: str               # "training" | "setup"
    grounded_by: str | None  # what justifies it, or None


def is_setup(key: str) -> bool:
    return key in SETUP_KEYS or key.startswith(SETUP_PREFIXES)


def recipe_values(recipe: dict, hardware_defaults: dict) -> dict:
    """The skill's recipe as this hardware would run it (vLLM colocate on one GPU, server on several; bf16)."""
    return {**recipe, "use_vllm": True, "bf16": True,
            "vllm_mode": hardware_defaults.get("vllm_mode", "colocate")}


def base_run_diagnosis(brief) -> str | None:
    """The diagnosis.json the brief names for its base run: ``variant.diagnosis``, else ``base_run.diagnosis``."""
    diag = (brief.variant.diagnosis if brief.variant else None) or brief.base_run_diagnosis
    if not diag:
        return None
    p = Path(diag).expanduser()
    return str(p if p.is_absolute() else brief.base_dir / p)


def diagnosis_problem(path: str | None) -> str | None:
    """Why the named diagnosis does not show a base run that trained behind the gate (None when it does)."""
    if path is None:
        return ("no earlier run is named: there is no variant chosen from a diagnosis and no "
                "base_run.diagnosis")
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return f"{path} (the base run's diagnosis) does not exist"
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        return f"{path} is not a readable diagnosis.json ({type(e).__name__})"
    findings = data.get("findings") if isinstance(data, dict) else None
    if not isinstance(findings, list):
        return f"{path} is not a diagnosis.json written by `grpo-rlvr diagnose` (no findings list)"
    if any(isinstance(f, dict) and f.get("id") == SMOKE_FINDING for f in findings):
        return f"{path} diagnoses an unreviewed smoke test, which skipped the inspection gate"
    return None


def recipe_deviations(brief, recipe: dict, hardware_defaults: dict) -> tuple[list[Deviation], list[str]]:
    """Every resolved GRPO setting that differs from the recipe, and a warning for each ungrounded training one.

    Args:
        recipe: ``brief.recipe.RECIPE``; hardware_defaults: what the hardware sets (``recipe.hardware_defaults``).
    Returns:
        (deviations, warnings). A key the brief adds that the recipe leaves to TRL counts as a deviation
        (``recipe`` None); the held-out evaluation settings a ``dataset.eval_path`` turns on do not.
    """
    base = recipe_values(recipe, hardware_defaults)
    diag_path = base_run_diagnosis(brief)
    diag_issue = diagnosis_problem(diag_path)
    out, ungrounded = [], []
    for key, value in brief.grpo.items():
        origin = brief.origin.get(key, "brief")
        if origin in ("eval", "rewards") or (key in base and base[key] == value and type(base[key]) is type(value)):
            continue
        if key not in base and origin != "brief" and not origin.startswith("variant:"):
            continue  # the hardware's own additions (use_cpu, gradient checkpointing off on CPU)
        kind = "setup" if is_setup(key) else "training"
        if origin.startswith("method:"):
            grounded = methods.SOURCES.get(origin, origin)
        elif origin == "hardware":
            grounded = f"hardware.accelerator {brief.hardware.accelerator!r}"
        elif origin.startswith("variant:"):
            v = brief.variant
            grounded = ("the model is mixture-of-experts, which requires GSPO" if v and v.automatic
                        else f"variant.diagnosis {v.diagnosis}" if v else origin)
        elif kind == "setup":
            grounded = "a setup setting (sizing or bookkeeping)"
        elif not diag_issue:
            grounded = f"the base run's diagnosis {diag_path}"
        else:
            reason = brief.stated_deviations.get(key) if origin == "brief" else None
            grounded = f"the brief's stated reason (deviations.{key}): {reason}" if reason else None
        out.append(Deviation(key, value, base.get(key), origin, kind, grounded))
        if grounded is None:
            ungrounded.append(key)
    warnings = []
    if ungrounded:
        shown = ", ".join(f"{d.key} {d.value!r} (recipe {'TRL default' if d.recipe is None else repr(d.recipe)})"
                          for d in out if d.key in ungrounded)
        warnings.append(f"grpo: {shown} departs from the recipe before a stable, inspected base run: "
                        f"{diag_issue}. The skill changes these only after a base-recipe run was gated and "
                        "diagnosed: remove the override(s) for the first run, name that run's diagnosis.json "
                        "as base_run.diagnosis, or, for a deliberate change, say why in the brief: "
                        f"deviations: {{{ungrounded[0]}: <a sentence saying why>}}")
    return out, warnings


def override_variants(brief) -> list[dict]:
    """The variants a brief's ``grpo:`` overrides set by hand: each with the keys that match its delta and the
    delta keys it leaves out (``variants.variants_in``)."""
    overrides = brief.overrides
    out = []
    for name, matched in variants_in(overrides).items():
        delta = VARIANTS[name].delta
        missing = {k: v for k, v in delta.items() if k not in overrides and brief.grpo.get(k) != v
                   and not isinstance(v, dict)}
        out.append({"name": name, "matched": matched, "missing": missing})
    return out


def as_json(devs: list[Deviation]) -> list[dict]:
    return [asdict(d) for d in devs]
