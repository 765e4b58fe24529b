"""``grpo-rlvr validate`` as text: the report that ``grpo_rlvr.validate.report.validate_report`` builds, printed."""

from __future__ import annotations

from grpo_rlvr.brief.model_probe import human_params
from grpo_rlvr.tools.describe import tool_lines


def _variant_line(v: dict | None) -> str:
    if v is None:
        return "none (plain GRPO)"
    if v["automatic"]:
        return f"{v['name']} (automatic: the model is mixture-of-experts)"
    text = v["name"] + (f" (diagnosis {v['diagnosis']})" if v["diagnosis"] else "")
    if not v["declared"]:
        text = (f"{v['name']} set by hand through grpo: "
                + ", ".join(f"{k}={val!r}" for k, val in v["set_by"].items())
                + (f"; the variant's delta also has {', '.join(f'{k}={val!r}' for k, val in v['missing'].items())},"
                   " which this brief does not set" if v["missing"] else "")
                + (f" (base run diagnosis {v['diagnosis']})" if v["diagnosis"] else ""))
    for h in v["also_set_by_hand"]:
        text += f"; also {h['name']} set by hand (" + ", ".join(f"{k}={val!r}" for k, val in h["matched"].items()) + ")"
    return text


def _deviation_lines(devs: list[dict]) -> list[str]:
    if not devs:
        return ["Recipe deviations: none (the skill's recipe as it stands)"]
    lines = ["Recipe deviations (value vs the recipe's; what grounds it):"]
    width = max(len(d["key"]) for d in devs)
    for d in devs:
        recipe = "TRL default" if d["recipe"] is None else repr(d["recipe"])
        why = d["grounded_by"] or "NOTHING YET: before a stable, inspected base run"
        lines.append(f"  ≠ {d['key']:<{width}}  {d['value']!r} vs {recipe}  [{d['kind']}, from {d['origin']}] {why}")
    return lines


def _memory_lines(m: dict) -> list[str]:
    terms = ", ".join(f"{k} {v:.1f}" for k, v in m["terms"].items() if v >= 0.05)
    return [f"Memory: ~{m['total_gib']} GiB peak per GPU on {m['gpu']} ({m['gpu_gib']} GiB): fits",
            f"  sized for {m['params_b']:g}B parameters from {m['size_from']} (shape {m['shape']})",
            f"  terms (GiB): {terms}"] + ([f"  {m['caveat']}"] if m.get("caveat") else []) + (
        [f"  vLLM server: {s['vllm_gpus']} GPU(s), tensor parallel {s['tensor_parallel_size']}: "
         f"~{s['needed_gib_one_sequence']} GiB per GPU to start, {s['needed_gib_whole_batch']} GiB for the whole "
         f"batch, {s['usable_gib_per_gpu']} GiB usable"] if (s := m.get("vllm_server")) else [])


def format_validate_report(r: dict) -> str:
    mdl = r["model"]
    size = human_params(mdl["params_b"] * 1e9) + " params" if mdl["params_b"] else "size unknown"
    moe, vision = f"MoE {'yes' if mdl['mixture_of_experts'] else 'no'}", f"vision {'yes' if mdl['vision'] else 'no'}"
    sources = {mdl["params_from"], mdl["moe_from"], mdl["vision_from"]}
    facts = f"{size}, {moe}, {vision}; from {mdl['params_from']}" if len(sources) == 1 else \
        f"{size} from {mdl['params_from']}; {moe} from {mdl['moe_from']}; {vision} from {mdl['vision_from']}"
    lines = [f"Brief {r['brief']} is valid.", f"  fingerprint  {r['fingerprint'][:16]}",
             f"  model        {mdl['name_or_path']}" + (f"  (MoE per {mdl['moe_from']}: GSPO applied)" if mdl["mixture_of_experts"] else ""),
             f"               {facts}",
             *([f"               a PEFT {a['peft_type']} adapter on {a['base']} (its adapter_config.json); "
                f"training: {a['training']}"] if (a := mdl.get("adapter")) else []),
             f"  dataset      {r['dataset']['path']}" + ("" if r["dataset"]["local"] else "  (hub; columns not checked)"),
             "  rewards      " + ", ".join(f"{x['name']}×{x['weight']:g}" for x in r["rewards"]),
             f"  hardware     {r['hardware']['accelerator']}, {r['hardware']['training_processes']} training process(es)"
             + (f", {r['hardware']['vllm_gpus']} vLLM GPU(s)" if r["hardware"]["vllm_gpus"] else ""),
             *[f"    {line}" for line in r["hardware"]["layout"]],
             f"  method       {r['method']}",
             f"  variant      {_variant_line(r['variant'])}",
             "  dynamic sampling  " + (f"on: up to {ds['max_rounds']} refill round(s), tolerance {ds['tolerance']:g}"
                                       f" ← {ds['from']}" if (ds := r.get("dynamic_sampling")) else "off"),
             *tool_lines(r.get("tools") or {}),
             f"  output_dir   {r['output_dir']}"]
    for key, text in r["dataset"]["prompt"].items():
        lines.append(f"  {'prompt.' + key:<12} {text!r}"[:116])
    if r["lora"]:
        lines.append("  lora         " + ", ".join(f"{k} {v['value']!r} ← {v['from']}" for k, v in r["lora"].items()))
    lines += ["", "Resolved GRPOConfig (value  ← where it came from):"]
    width = max(len(k) for k in r["grpo_config"])
    changed = {d["key"] for d in r["recipe_deviations"]}
    for k, v in r["grpo_config"].items():
        mark = "≠" if k in changed else " "
        lines.append(f" {mark}{k:<{width}}  {v['value']!r:<24} ← {v['from']}")
    for origin, text in r["sources"].items():
        lines.append(f"  [{origin}] {text}")
    unbound = [k for k, v in r["grpo_config"].items() if not v.get("bound", True)]
    if unbound:
        lines.append("  Not bound to the review (change them without re-inspecting): " + ", ".join(unbound))
    lines += _deviation_lines(r["recipe_deviations"])
    for c in r.get("contract", []):
        t = c["totals"]
        lines.append(f"Example contract [{c['index']}]: correct {t['correct']:.3f} > wrong {t['wrong']:.3f} > "
                     f"malformed {t['malformed']:.3f}")
    if r.get("memory"):
        lines += _memory_lines(r["memory"])
    for w in r["warnings"]:
        lines.append(f"Warning: {w}")
    return "\n".join(lines)
