"""``grpo-rlvr validate``: load the brief (every check), and report the resolved config with where each value
came from (recipe, hardware, variant, brief)."""

from __future__ import annotations

from pathlib import Path

from grpo_rlvr.brief import brief_warnings, load_brief
from grpo_rlvr.errors import ConfigError
from grpo_rlvr.memory_cli import brief_memory


def validate_report(brief_path: str | Path) -> dict:
    """Validate a brief and describe what it resolves to. Raises ConfigError listing every problem."""
    brief = load_brief(brief_path)
    report = {
        "brief": str(brief.path),
        "name": brief.name,
        "fingerprint": brief.fingerprint,
        "model": {"name_or_path": brief.model.name_or_path, "resolved": brief.model.resolved,
                  "mixture_of_experts": brief.model.is_moe, "context_length": brief.model.context_length},
        "dataset": {"path": brief.dataset.resolved, "prompt_column": brief.dataset.prompt_column,
                    "columns": dict(brief.dataset.columns)},
        "rewards": [{"name": r.name, "weight": r.weight, "params": dict(r.params)} for r in brief.rewards],
        "hardware": {"accelerator": brief.hardware.accelerator, "num_gpus": brief.hardware.num_gpus,
                     "num_nodes": brief.hardware.num_nodes, "vllm_gpus": brief.hardware.vllm_gpus,
                     "training_processes": brief.hardware.num_processes, "sharding": brief.hardware.sharding},
        "method": brief.method,
        "variant": None if brief.variant is None else {"name": brief.variant.name,
                                                        "automatic": brief.variant.automatic,
                                                        "diagnosis": brief.variant.diagnosis},
        "grpo_config": {k: {"value": v, "from": brief.origin.get(k, "brief")} for k, v in brief.grpo.items()},
        "warnings": list(brief_warnings(brief)),
        "memory": brief_memory(brief),
        "valid": True,
    }
    mem = report["memory"]
    if mem is not None and not mem["fits"]:
        fix = "; ".join(f"{t['description']} → {t['changes']}" for t in mem.get("tactics", [])) or \
            "use more GPUs (hardware.num_gpus with sharding: zero3) or a smaller model"
        raise ConfigError(f"hardware.gpu_type: the estimated peak memory {mem['total_gib']} GiB per GPU does not fit "
                          f"{mem['gpu']} ({mem['gpu_gib']} GiB); what makes it fit: {fix}", source=str(brief.path))
    return report


def format_validate_report(r: dict) -> str:
    lines = [f"Brief {r['brief']} is valid.", f"  fingerprint  {r['fingerprint'][:16]}",
             f"  model        {r['model']['name_or_path']}" + ("  (MoE: GSPO applied)" if r["model"]["mixture_of_experts"] else ""),
             f"  dataset      {r['dataset']['path']}",
             "  rewards      " + ", ".join(f"{x['name']}×{x['weight']:g}" for x in r["rewards"]),
             f"  hardware     {r['hardware']['accelerator']}, {r['hardware']['training_processes']} training process(es)"
             + (f", {r['hardware']['vllm_gpus']} vLLM GPU(s)" if r["hardware"]["vllm_gpus"] else ""),
             f"  method       {r['method']}",
             f"  variant      {r['variant']['name'] if r['variant'] else 'none (plain GRPO)'}",
             "", "Resolved GRPOConfig (value  ← where it came from):"]
    width = max(len(k) for k in r["grpo_config"])
    for k, v in r["grpo_config"].items():
        lines.append(f"  {k:<{width}}  {v['value']!r:<24} ← {v['from']}")
    if r.get("memory"):
        m = r["memory"]
        lines.append(f"Memory: ~{m['total_gib']} GiB peak per GPU on {m['gpu']} ({m['gpu_gib']} GiB): fits")
    for w in r["warnings"]:
        lines.append(f"Warning: {w}")
    return "\n".join(lines)
