"""Reports over the memory model: one configuration (for ``grpo-rlvr memory``), a fit table, brief mapping.

``memory_report`` returns a JSON-serializable dict (``--json``); ``format_memory_report`` renders it as
plain text. ``memory_table`` + ``render_table_markdown`` build the published size × method × GPU table.
``brief_memory`` is the fit check of a brief that ``validate`` reports.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from grpo_rlvr.memory.decode import decode_time
from grpo_rlvr.memory.estimate import (
    VLLM_SERVER_UTILIZATION,
    MemoryInputs,
    estimate_memory,
    param_counts,
    vllm_needed_gib,
)
from grpo_rlvr.memory.hardware import DEVICES, GPU_TYPES, resolve_gpu
from grpo_rlvr.memory.tactics import fit_tactics, right_size_vllm_utilization
from grpo_rlvr.model_shape import shape_from_config

TERM_ORDER = ("weights", "gradients", "optimizer_states", "master_weights", "reference_model", "activations",
              "logits", "vllm_weights", "vllm_kv_cache", "generation_kv_cache", "generation_weights_gather",
              "cuda_overhead")


def _server_sizing(inputs: MemoryInputs, gpu: str) -> dict | None:
    """Per-GPU needs of a separate vLLM server (``vllm serve`` reserves 90% of each of its GPUs)."""
    if not (inputs.use_vllm and inputs.vllm_mode == "server"):
        return None
    gt = resolve_gpu(gpu)
    replicas = max(inputs.vllm_gpus // inputs.vllm_tensor_parallel_size, 1)
    seqs = -(-inputs.generation_seqs_per_device * inputs.num_gpus // replicas)
    usable = VLLM_SERVER_UTILIZATION * gt.memory_gib
    one = vllm_needed_gib(inputs, 1)
    return {"vllm_gpus": inputs.vllm_gpus, "tensor_parallel_size": inputs.vllm_tensor_parallel_size,
            "usable_gib_per_gpu": round(usable, 2), "needed_gib_one_sequence": round(one, 2),
            "needed_gib_whole_batch": round(vllm_needed_gib(inputs, seqs), 2), "fits": one <= usable}


def memory_report(inputs: MemoryInputs, gpu: str) -> dict:
    """Everything ``grpo-rlvr memory`` shows, as a JSON-serializable dict.

    Keys: ``inputs``, ``model`` (name, params, source of the shape), ``estimate`` (terms, phases, verdict,
    notes), ``tactics`` (when it does not fit), ``decode`` (bandwidth-bound generation time per device of
    the class, for one generation round), and ``vllm_server`` in server mode.

    Raises:
        ConfigError: unknown GPU.
    """
    est = estimate_memory(inputs, gpu)
    shape = inputs.model_shape
    prompts = max(inputs.generation_seqs_per_device * inputs.num_gpus // inputs.num_generations, 1)
    return {
        "inputs": inputs.to_dict(),
        "model": {"shape": shape.name, "params_b": round(param_counts(inputs).total / 1e9, 3),
                  "source": shape.source, "moe": shape.is_moe},
        "gpu": {"class": est.gpu, "memory_gib": round(est.gpu_gib, 2),
                "devices": [DEVICES[d].name for d in resolve_gpu(gpu).devices]},
        "estimate": est.to_dict(),
        "tactics": [t.to_dict() for t in fit_tactics(inputs, gpu)],
        "fits_unchanged_on": [g for g in GPU_TYPES if estimate_memory(inputs, g).fits],
        "decode": {"num_prompts": prompts, **decode_time(inputs, gpu, prompts)},
        "vllm_server": _server_sizing(inputs, gpu),
    }


def format_memory_report(report: Mapping[str, Any]) -> str:
    """Plain-text rendering of ``memory_report``'s dict."""
    inp, est, model, gpu = report["inputs"], report["estimate"], report["model"], report["gpu"]
    lines = [f"GRPO memory per training GPU: {model['shape']} ({model['params_b']:.2f}B params), "
             f"method {inp['method']}, {inp['num_gpus']} × {gpu['class']} ({', '.join(gpu['devices'])}: "
             f"{gpu['memory_gib']:.1f} GiB), sharding {inp['sharding']}",
             f"  micro-batch {inp['per_device_train_batch_size']} × ({inp['max_prompt_length']} prompt + "
             f"{inp['max_completion_length']} completion) tokens, num_generations {inp['num_generations']}, "
             f"beta {inp['beta']}, vLLM {inp['vllm_mode'] if inp['use_vllm'] else 'off'}", ""]
    for name in TERM_ORDER:
        value = est["terms"].get(name, 0.0)
        if value:
            lines.append(f"  {name:<26}{value:>9.2f} GiB")
    phases = est["phases"]
    lines.append(f"  {'peak':<26}{est['total_gib']:>9.2f} GiB   (training phase {phases['training']:.1f}, "
                 f"generation phase {phases['generation']:.1f})")
    verdict = "FITS" if est["fits"] else "DOES NOT FIT"
    lines += ["", f"Verdict on {gpu['class']}: {verdict} (headroom {est['headroom_gib']:+.1f} GiB)"]
    lines += [f"  ! {b}" for b in est["blocking"]] + [f"  - {n}" for n in est["notes"]]
    if report["tactics"]:
        lines += ["", "Tactics that fit (brief changes):"]
        for t in report["tactics"]:
            lines.append(f"  * {t['description']}")
            lines.append(f"      changes {t['changes']}  -> {t['total_gib']:.1f} GiB, headroom {t['headroom_gib']:+.1f}")
    if not est["fits"] and not report["tactics"]:
        lines += ["", "No tactic fits on this GPU class (tried checkpointing, sleep mode, vLLM reservation, smaller "
                  "micro-batch, 8-bit AdamW, LoRA, QLoRA, shorter completions, ZeRO-3 up to 8 GPUs, vLLM server)."]
    if not est["fits"]:
        others = ", ".join(report["fits_unchanged_on"]) or "none of " + ", ".join(GPU_TYPES)
        lines.append(f"  GPU classes where it fits unchanged: {others}")
    if report.get("vllm_server"):
        s = report["vllm_server"]
        lines += ["", f"vLLM server: {s['vllm_gpus']} GPU(s), TP {s['tensor_parallel_size']}: needs "
                  f"{s['needed_gib_one_sequence']:.1f} GiB to start, {s['needed_gib_whole_batch']:.1f} GiB for the "
                  f"whole batch; {s['usable_gib_per_gpu']:.1f} GiB usable -> {'ok' if s['fits'] else 'TOO SMALL'}"]
    dec = report["decode"]
    lines += ["", f"Generation phase, bandwidth bound ({dec['num_prompts']} prompts × {inp['num_generations']} "
              f"= {dec['num_sequences']} completions of {inp['max_completion_length']} tokens):"]
    for d in dec["devices"].values():
        lines.append(f"  {d['device']:<18}{d['bandwidth_tbs']:>6.2f} TB/s  {d['tokens_per_s_single']:>8.0f} tok/s "
                     f"single, {d['tokens_per_s_batch']:>9.0f} tok/s at {d['concurrent_sequences']} seqs, "
                     f"phase >= {d['generation_phase_s']:.0f} s" + (f"  ({d['note']})" if d.get("note") else ""))
    return "\n".join(lines)


def memory_table(sizes: Iterable[str], methods: Iterable[str], gpus: Iterable[str], *,
                 auto_vllm_utilization: bool = True, **common: Any) -> list[dict]:
    """One row per (size, method, gpu): peak GiB, fit, headroom, and the first tactic when it does not fit.

    ``common`` are MemoryInputs fields shared by every row (e.g. ``max_completion_length=2048``). With
    ``auto_vllm_utilization`` each row's colocated vLLM reservation is right-sized for that GPU (what a
    careful user sets) instead of one fraction for every GPU; the row records the value used.
    """
    rows = []
    for size in sizes:
        for method in methods:
            base = MemoryInputs(size=size, method=method, **common)
            for gpu in gpus:
                inputs = right_size_vllm_utilization(base, gpu) if auto_vllm_utilization else base
                est = estimate_memory(inputs, gpu)
                tactic = None if est.fits else next(iter(fit_tactics(inputs, gpu, max_single=1)), None)
                rows.append({"size": size, "method": method, "gpu": gpu, "total_gib": round(est.total_gib, 1),
                             "fits": est.fits, "headroom_gib": round(est.headroom_gib, 1),
                             "blocking": bool(est.blocking),
                             "vllm_gpu_memory_utilization": inputs.vllm_gpu_memory_utilization,
                             "tactic": tactic.changes if tactic else None})
    return rows


def render_table_markdown(rows: list[dict]) -> str:
    """Markdown table: one line per size × method, one column per GPU class: ``✅ 35.2`` / ``❌ 90.1`` GiB.

    ``†`` marks a configuration vLLM cannot start in (its reservation is smaller than its weights).
    """
    gpus = list(dict.fromkeys(r["gpu"] for r in rows))
    keyed = {(r["size"], r["method"], r["gpu"]): r for r in rows}
    lines = ["| size | method | " + " | ".join(gpus) + " |", "|---|---|" + "---:|" * len(gpus)]
    for size, method in dict.fromkeys((r["size"], r["method"]) for r in rows):
        cells = []
        for gpu in gpus:
            r = keyed.get((size, method, gpu))
            mark = "" if r is None or not r["blocking"] else "†"
            cells.append("" if r is None else f"{'✅' if r['fits'] else '❌'} {r['total_gib']:.1f}{mark}")
        lines.append(f"| {size} | {method} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------- from a brief

_GRPO_FIELDS = ("per_device_train_batch_size", "gradient_accumulation_steps", "num_generations",
                "max_completion_length", "gradient_checkpointing", "beta", "use_vllm", "vllm_mode",
                "vllm_gpu_memory_utilization", "vllm_enable_sleep_mode", "vllm_tensor_parallel_size")


def inputs_from_brief(brief: Any, *, size: str | None = None, params_b: float | None = None, shape=None,
                      max_prompt_length: int = 512) -> MemoryInputs:
    """MemoryInputs from a validated Brief (read by attribute: ``method``, ``lora``, ``grpo``, ``hardware``).

    The model is given separately (``shape`` from its config.json, or ``size`` / ``params_b``): the brief
    names a checkpoint, not its architecture. The training GPUs are the training world size (every training
    process on every training node: ZeRO-3 and FSDP2 shard over all of them); in server mode the server's GPUs
    and tensor parallel size are the hardware section's (TRL applies grpo.vllm_tensor_parallel_size to colocate
    only).
    """
    grpo = dict(getattr(brief, "grpo", {}) or {})
    hw = brief.hardware
    kwargs = {k: grpo[k] for k in _GRPO_FIELDS if k in grpo}
    if grpo.get("optim") in ("adamw_8bit", "adamw_bnb_8bit", "paged_adamw_8bit"):
        kwargs["optimizer"] = "adamw_8bit"
    server = grpo.get("use_vllm", True) and grpo.get("vllm_mode", "colocate") == "server"
    vllm_gpus = max(getattr(hw, "vllm_gpus", 0) or 0, 1)
    train_gpus = max(hw.num_processes, 1)
    if server:
        kwargs["vllm_tensor_parallel_size"] = hw.vllm_tensor_parallel
    rank = (getattr(brief, "lora", {}) or {}).get("r")
    inputs = MemoryInputs(size=size, params_b=params_b, shape=shape, method=brief.method,
                          max_prompt_length=max_prompt_length, num_gpus=train_gpus, vllm_gpus=vllm_gpus,
                          sharding=getattr(hw, "sharding", "none") or "none", **kwargs)
    return replace(inputs, lora_rank=rank) if rank else inputs


def brief_memory(brief) -> dict | None:
    """The memory estimate for a GPU brief with ``hardware.gpu_type`` set, sized from the model's facts
    (``config.json`` shapes; else the brief's ``model.params`` or the name's size, on a size class's shape).
    None on CPU, without a gpu_type, or when the size is unknown (``validate`` warns then)."""
    if brief.hardware.accelerator != "gpu" or not brief.hardware.gpu_type:
        return None
    facts = brief.model.facts
    if facts is None or facts.params is None:
        return None
    shape = None
    if facts.config is not None and facts.params_from.startswith("config.json"):
        shape = shape_from_config(facts.config, name=brief.model.name_or_path)
    inputs = inputs_from_brief(brief, shape=shape) if shape else inputs_from_brief(brief, params_b=facts.params / 1e9)
    est = estimate_memory(inputs, brief.hardware.gpu_type)
    out = {"gpu": brief.hardware.gpu_type, "fits": est.fits, "total_gib": round(est.total_gib, 1),
           "gpu_gib": round(est.gpu_gib, 1), "terms": {k: round(v, 2) for k, v in est.terms.items()},
           "params_b": round(facts.params / 1e9, 3), "size_from": facts.params_from,
           "shape": inputs.model_shape.name, "notes": list(est.notes)}
    if shape is None:
        out["caveat"] = (f"no config.json: sized on the {inputs.model_shape.name} shape scaled to "
                         f"{facts.params / 1e9:.3g}B" + (" (a dense stand-in for a mixture-of-experts model: activations "
                                                        "and LoRA targets are over-counted)" if facts.moe else ""))
    server = _server_sizing(inputs, brief.hardware.gpu_type)
    if server is not None:
        out["vllm_server"] = server
        if not server["fits"]:
            out["vllm_server"]["fix"] = _server_fix(inputs, brief)
    if not est.fits:
        tactics = fit_tactics(inputs, brief.hardware.gpu_type)
        if brief.hardware.num_nodes > 1:   # the tactics' GPU counts are one node's; the node count is the person's
            tactics = [t for t in tactics if "hardware" not in t.changes]
        out["tactics"] = [{"description": t.description, "changes": t.changes} for t in tactics[:3]]
    return out


def _server_fix(inputs: MemoryInputs, brief) -> str:
    """The brief change that lets the vLLM server start: the smallest tensor parallel size that holds the model
    and splits its heads, or more GPUs."""
    from grpo_rlvr.brief.layout import attention_heads, tp_fits_heads

    hw, heads = brief.hardware, attention_heads(getattr(brief.model.facts, "config", None))
    for tp in range(hw.vllm_tensor_parallel + 1, hw.vllm_gpus + 1):
        if hw.vllm_gpus % tp or not tp_fits_heads(tp, heads):
            continue
        if _server_sizing(replace(inputs, vllm_tensor_parallel_size=tp), hw.gpu_type)["fits"]:
            return (f"set hardware.vllm_tensor_parallel: {tp} (with vllm_data_parallel: {hw.vllm_gpus // tp}): each "
                    f"server GPU then holds 1/{tp} of the weights")
    return ("no split of the server's GPUs holds the model: give the server more GPUs (hardware.vllm_gpus, "
            "num_gpus) or larger ones, or use a smaller model")
