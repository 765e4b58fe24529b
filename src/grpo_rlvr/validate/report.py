"""The report behind ``grpo-rlvr validate``: load the brief (every check), check that this machine can run it, and
report the resolved config with where each value came from (recipe, method, hardware, variant, brief), the
model's facts and their sources, and the memory estimate. The CLI prints it as text with
``cli.validate.format_validate_report``.

Every row of a local dataset (and held-out set) goes through the prompt and every reward's own column check, in
one pass (``validate/rows.py``): a row a reward could not score is refused here by file, line and column, not hours into
training. The GRPO settings are built into TRL's own GRPOConfig, optimizer and schedule (``trainer/trl_refusals``):
what TRL would refuse at the first step is refused here, naming the field. The machine checks (QLoRA: bitsandbytes and a CUDA GPU) are errors by default; ``remote=True`` (``--remote``:
the brief is for another machine) reports them as warnings. ``render`` never runs them: a run directory is
often rendered at a desk for a GPU box. A brief with ``prompt.examples`` also has its example contract checked
(``brief.contract``): its rewards must rank the correct example above the wrong one above the malformed one.
"""

from __future__ import annotations

from pathlib import Path

from grpo_rlvr.brief import load_brief
from grpo_rlvr.brief.bound_settings import UNBOUND
from grpo_rlvr.brief.contract import contract_problems
from grpo_rlvr.brief.deviations import as_json, override_variants, recipe_deviations
from grpo_rlvr.brief.layout import describe_layout
from grpo_rlvr.brief.methods import SOURCES
from grpo_rlvr.brief.recipe import RECIPE, hardware_defaults
from grpo_rlvr.errors import ConfigError, MachineError
from grpo_rlvr.memory.report import brief_memory
from grpo_rlvr.rollout.trainer_setup import grpo_config_dict
from grpo_rlvr.tools.check import brief_tool_problems
from grpo_rlvr.validate.accepted_settings import trl_refusals_remembered
from grpo_rlvr.validate.rows import check_rows


def machine_problems(brief) -> list[str]:
    """What stops this machine from running the brief's method (QLoRA: bitsandbytes and a CUDA GPU)."""
    if brief.method != "qlora":
        return []
    from grpo_rlvr.trainer.model_loading import quantization_problems

    return [f"method: 'qlora' cannot run on this machine: {p}" for p in quantization_problems()]


def validate_report(brief_path: str | Path, remote: bool = False) -> dict:
    """Validate a brief and describe what it resolves to.

    Args:
        remote: the brief is for another machine; this machine's missing packages or GPU are warnings.
    Raises:
        ConfigError: every problem in the brief, an example contract that fails, or a memory estimate that does
            not fit.
        MachineError: this machine cannot run the brief (and ``remote`` is False).
    """
    brief = load_brief(brief_path)
    rows = check_rows(brief)   # every row through the prompt and every reward's column check (the loader: one row)
    facts = brief.model.facts
    refused, missing = trl_refusals_remembered(grpo_config_dict(brief))   # TRL's own GRPOConfig, optimizer, schedule
    if refused:
        raise ConfigError(refused, source=str(brief.path))
    machine = machine_problems(brief) + missing
    if machine and not remote:
        raise MachineError("\n".join([*machine, "(validating for another machine? pass --remote)"]))
    contract, broken = contract_problems(brief)
    if broken:
        raise ConfigError(broken, source=str(brief.path))
    tool_problems = brief_tool_problems(brief)
    if tool_problems:
        raise ConfigError(tool_problems, source=str(brief.path))
    origins = {k: brief.origin.get(k, "brief") for k in brief.grpo}
    deviations, deviation_warnings = recipe_deviations(brief, RECIPE, hardware_defaults(brief.hardware))
    report = {
        "brief": str(brief.path),
        "name": brief.name,
        "fingerprint": brief.fingerprint,
        "model": {"name_or_path": brief.model.name_or_path, "resolved": brief.model.resolved,
                  "mixture_of_experts": brief.model.is_moe, "context_length": brief.model.context_length,
                  "params_b": None if facts.params is None else round(facts.params / 1e9, 3),
                  "params_from": facts.params_from, "moe_from": facts.moe_from, "vision": facts.vision,
                  "vision_from": facts.vision_from, "config": facts.config_path, "adapter": _adapter_report(brief)},
        "dataset": {"path": brief.dataset.resolved, "local": brief.dataset.is_local, "rows_checked": rows,
                    "prompt_column": brief.dataset.prompt_column, "columns": dict(brief.dataset.columns),
                    "prompt": dict(brief.dataset.prompt)},
        "rewards": [{"name": r.name, "weight": r.weight, "params": dict(r.params)} for r in brief.rewards],
        "hardware": _hardware_report(brief),
        "method": brief.method,
        "lora": {k: {"value": v, "from": brief.lora_origin.get(k, "brief")} for k, v in brief.lora.items()},
        "variant": _variant_report(brief),
        "tools": _tools_report(brief),
        "dynamic_sampling": None if brief.dynamic_sampling is None else {
            **brief.dynamic_sampling.to_dict(), "from": brief.dynamic_sampling.origin},
        "grpo_config": {k: {"value": v, "from": origins[k], "bound": k not in UNBOUND} for k, v in brief.grpo.items()},
        "recipe_deviations": as_json(deviations),
        "sources": {o: SOURCES[o] for o in sorted({*origins.values(), *brief.lora_origin.values()}) if o in SOURCES},
        "output_dir": str(brief.output_dir),
        "inspection_dir": str(brief.output_dir / "inspection"),
        "run_dir": str(brief.output_dir / "run"),
        "contract": [r.to_dict() for r in contract],
        "warnings": [*brief.warnings, *deviation_warnings, *machine, *adapter_warnings(brief)],
        "memory": brief_memory(brief),
        "valid": True,
    }
    mem = report["memory"]
    if mem is not None and not mem["fits"]:
        fix = "; ".join(f"{t['description']} → {t['changes']}" for t in mem.get("tactics", [])) or \
            "use more GPUs (hardware.num_gpus with sharding: zero3) or a smaller model"
        guess = (f" (sized for {mem['params_b']:g}B parameters guessed from the model's name; if that is wrong, "
                 "state model.params or put its config.json in the Hugging Face cache)"
                 if mem["size_from"] == "name" else "")
        raise ConfigError(f"hardware.gpu_type: the estimated peak memory {mem['total_gib']} GiB per GPU does not fit "
                          f"{mem['gpu']} ({mem['gpu_gib']} GiB){guess}; what makes it fit: {fix}",
                          source=str(brief.path))
    server = (mem or {}).get("vllm_server")
    if server is not None and not server["fits"]:
        hw = brief.hardware
        raise ConfigError(f"hardware.vllm_tensor_parallel: at tensor parallel {hw.vllm_tensor_parallel} the vLLM "
                          f"server needs ~{server['needed_gib_one_sequence']} GiB per GPU to start, more than the "
                          f"{server['usable_gib_per_gpu']} GiB it may use of a {mem['gpu']} GPU; {server['fix']}",
                          source=str(brief.path))
    return report


# What brief_tool_problems checked when it found nothing (tools/check.py: TRL's own checks)
TEMPLATE_CHECKED = ("TRL's checks pass: it renders a tool call and its reply, keeps earlier turns as they were (or TRL "
                    "has a training template for it), and a generated call parses back")


def _tools_report(brief) -> dict | None:
    """The brief's tools section, the tools the model will be offered (name, source, arguments) and the template
    check that passed."""
    if brief.tools is None:
        return None
    from grpo_rlvr.tools.describe import describe_tools

    return {**brief.tools.to_dict(), **describe_tools(brief.tools.to_dict(), brief.base_dir),
            "template": TEMPLATE_CHECKED}


def _hardware_report(brief) -> dict:
    hw = brief.hardware
    return {"accelerator": hw.accelerator, "num_gpus": hw.num_gpus, "num_nodes": hw.num_nodes,
            "vllm_gpus": hw.vllm_gpus, "vllm_tensor_parallel": hw.vllm_tensor_parallel,
            "vllm_data_parallel": hw.vllm_data_parallel, "generation_node": hw.generation_node,
            "training_nodes": hw.training_nodes, "training_processes": hw.num_processes, "sharding": hw.sharding,
            "layout": describe_layout(hw, brief.vllm_mode)}


def _adapter_report(brief) -> dict | None:
    base = brief.model.adapter_base
    if base is None:
        return None
    return {"base": base.resolved, "base_as_written": base.name, "peft_type": base.peft_type,
            "training": "merged into the base; every weight trains" if brief.method == "full"
            else "continued with its own LoRA settings"}


def adapter_warnings(brief) -> list[str]:
    """What an adapter folder as the model changes: vLLM loads merged weights only, and LoRA training continues the
    adapter with its own settings, not the brief's ``lora`` section."""
    base = brief.model.adapter_base
    if base is None:
        return []
    out = []
    merge = f"grpo-rlvr merge {brief.model.resolved} --out DIR"
    if brief.grpo.get("use_vllm"):
        mode = brief.grpo.get("vllm_mode")
        out.append(f"model.name_or_path is a PEFT adapter and use_vllm is on: vLLM loads one model folder, not base + "
                   f"adapter, so its engine starts from the base ({base.resolved})"
                   + (" and the server serves the base" if mode == "server" else "")
                   + " until TRL's first weight sync merges the adapter in. Merged weights are the sure path: "
                   f"`{merge}`, then point model.name_or_path at DIR")
    if brief.method != "full" and brief.lora_section:
        out.append("lora: the model is a LoRA adapter, which training continues with its own settings (from its "
                   "adapter_config.json); this section is not used. To train a new adapter instead, merge this one "
                   f"first (`{merge}`) and point model.name_or_path at DIR")
    return out


def _variant_report(brief) -> dict | None:
    """The variant the brief runs: declared (``variant:``), automatic (GSPO on MoE), or set by hand through
    ``grpo:`` overrides that match a variant's delta (``set_by``: those overrides, ``missing``: the rest of the
    delta, which the override does not apply)."""
    hand = override_variants(brief)
    if brief.variant is not None:
        v = brief.variant
        return {"name": v.name, "automatic": v.automatic, "diagnosis": v.diagnosis, "declared": not v.automatic,
                "set_by": {}, "missing": {}, "also_set_by_hand": [h for h in hand if h["name"] != v.name]}
    if not hand:
        return None
    first = hand[0]
    diag = brief.base_run_diagnosis
    return {"name": first["name"], "automatic": False, "diagnosis": diag, "declared": False,
            "set_by": first["matched"], "missing": first["missing"], "also_set_by_hand": hand[1:]}
