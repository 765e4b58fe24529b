"""``grpo-rlvr validate``: load the brief (every check), check that this machine can run it, and report the
resolved config with where each value came from (recipe, method, hardware, variant, brief), the model's facts
and their sources, and the memory estimate.

The machine checks (QLoRA: bitsandbytes and a CUDA GPU) are errors by default; ``remote=True`` (``--remote``:
the brief is for another machine) reports them as warnings. ``render`` never runs them: a run directory is
often rendered at a desk for a GPU box.
"""

from __future__ import annotations

from pathlib import Path

from grpo_rlvr.brief import brief_warnings, load_brief
from grpo_rlvr.brief.methods import SOURCES
from grpo_rlvr.brief.model_probe import human_params
from grpo_rlvr.cli.memory import brief_memory
from grpo_rlvr.errors import ConfigError, MachineError


def machine_problems(brief) -> list[str]:
    """What stops this machine from running the brief's method (QLoRA: bitsandbytes and a CUDA GPU)."""
    if brief.method != "qlora":
        return []
    from grpo_rlvr.runtime.model_loading import quantization_problems

    return [f"method: 'qlora' cannot run on this machine: {p}" for p in quantization_problems()]


def validate_report(brief_path: str | Path, remote: bool = False) -> dict:
    """Validate a brief and describe what it resolves to.

    Args:
        remote: the brief is for another machine; this machine's missing packages or GPU are warnings.
    Raises:
        ConfigError: every problem in the brief, or a memory estimate that does not fit.
        MachineError: this machine cannot run the brief (and ``remote`` is False).
    """
    brief = load_brief(brief_path)
    facts = brief.model.facts
    machine = machine_problems(brief)
    if machine and not remote:
        raise MachineError("\n".join([*machine, "(validating for another machine? pass --remote)"]))
    origins = {k: brief.origin.get(k, "brief") for k in brief.grpo}
    report = {
        "brief": str(brief.path),
        "name": brief.name,
        "fingerprint": brief.fingerprint,
        "model": {"name_or_path": brief.model.name_or_path, "resolved": brief.model.resolved,
                  "mixture_of_experts": brief.model.is_moe, "context_length": brief.model.context_length,
                  "params_b": None if facts.params is None else round(facts.params / 1e9, 3),
                  "params_from": facts.params_from, "moe_from": facts.moe_from, "vision": facts.vision,
                  "vision_from": facts.vision_from, "config": facts.config_path},
        "dataset": {"path": brief.dataset.resolved, "local": brief.dataset.is_local,
                    "prompt_column": brief.dataset.prompt_column, "columns": dict(brief.dataset.columns),
                    "prompt": dict(brief.dataset.prompt)},
        "rewards": [{"name": r.name, "weight": r.weight, "params": dict(r.params)} for r in brief.rewards],
        "hardware": {"accelerator": brief.hardware.accelerator, "num_gpus": brief.hardware.num_gpus,
                     "num_nodes": brief.hardware.num_nodes, "vllm_gpus": brief.hardware.vllm_gpus,
                     "training_processes": brief.hardware.num_processes, "sharding": brief.hardware.sharding},
        "method": brief.method,
        "lora": {k: {"value": v, "from": brief.lora_origin.get(k, "brief")} for k, v in brief.lora.items()},
        "variant": None if brief.variant is None else {"name": brief.variant.name,
                                                        "automatic": brief.variant.automatic,
                                                        "diagnosis": brief.variant.diagnosis},
        "dynamic_sampling": None if brief.dynamic_sampling is None else {
            **brief.dynamic_sampling.to_dict(), "from": brief.dynamic_sampling.origin},
        "grpo_config": {k: {"value": v, "from": origins[k]} for k, v in brief.grpo.items()},
        "sources": {o: SOURCES[o] for o in sorted({*origins.values(), *brief.lora_origin.values()}) if o in SOURCES},
        "warnings": [*brief_warnings(brief), *machine],
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
    return report


def _memory_lines(m: dict) -> list[str]:
    terms = ", ".join(f"{k} {v:.1f}" for k, v in m["terms"].items() if v >= 0.05)
    return [f"Memory: ~{m['total_gib']} GiB peak per GPU on {m['gpu']} ({m['gpu_gib']} GiB): fits",
            f"  sized for {m['params_b']:g}B parameters from {m['size_from']} (shape {m['shape']})",
            f"  terms (GiB): {terms}"] + ([f"  {m['caveat']}"] if m.get("caveat") else [])


def format_validate_report(r: dict) -> str:
    mdl = r["model"]
    size = human_params(mdl["params_b"] * 1e9) + " params" if mdl["params_b"] else "size unknown"
    moe, vision = f"MoE {'yes' if mdl['mixture_of_experts'] else 'no'}", f"vision {'yes' if mdl['vision'] else 'no'}"
    sources = {mdl["params_from"], mdl["moe_from"], mdl["vision_from"]}
    facts = f"{size}, {moe}, {vision}; from {mdl['params_from']}" if len(sources) == 1 else \
        f"{size} from {mdl['params_from']}; {moe} from {mdl['moe_from']}; {vision} from {mdl['vision_from']}"
    lines = [f"Brief {r['brief']} is valid.", f"  fingerprint  {r['fingerprint'][:16]}",
             f"  model        {mdl['name_or_path']}" + ("  (MoE: GSPO applied)" if mdl["mixture_of_experts"] else ""),
             f"               {facts}",
             f"  dataset      {r['dataset']['path']}" + ("" if r["dataset"]["local"] else "  (hub; columns not checked)"),
             "  rewards      " + ", ".join(f"{x['name']}×{x['weight']:g}" for x in r["rewards"]),
             f"  hardware     {r['hardware']['accelerator']}, {r['hardware']['training_processes']} training process(es)"
             + (f", {r['hardware']['vllm_gpus']} vLLM GPU(s)" if r["hardware"]["vllm_gpus"] else ""),
             f"  method       {r['method']}",
             f"  variant      {r['variant']['name'] if r['variant'] else 'none (plain GRPO)'}",
             "  dynamic sampling  " + (f"on: up to {ds['max_rounds']} refill round(s), tolerance {ds['tolerance']:g}"
                                       f" ← {ds['from']}" if (ds := r.get("dynamic_sampling")) else "off")]
    for key, text in r["dataset"]["prompt"].items():
        lines.append(f"  {'prompt.' + key:<12} {text!r}"[:116])
    if r["lora"]:
        lines.append("  lora         " + ", ".join(f"{k} {v['value']!r} ← {v['from']}" for k, v in r["lora"].items()))
    lines += ["", "Resolved GRPOConfig (value  ← where it came from):"]
    width = max(len(k) for k in r["grpo_config"])
    for k, v in r["grpo_config"].items():
        lines.append(f"  {k:<{width}}  {v['value']!r:<24} ← {v['from']}")
    for origin, text in r["sources"].items():
        lines.append(f"  [{origin}] {text}")
    if r.get("memory"):
        lines += _memory_lines(r["memory"])
    for w in r["warnings"]:
        lines.append(f"Warning: {w}")
    return "\n".join(lines)
