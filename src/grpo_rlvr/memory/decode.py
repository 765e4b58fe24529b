"""How long the generation phase of a GRPO step takes when decoding is memory-bandwidth bound.

Each decode step of a batch reads the weights once and the KV cache of every running sequence, so one
step takes ``(weight_bytes + running_seqs × context × kv_bytes_per_token) / bandwidth``. This is a lower
bound on time: it ignores prefill, compute limits (which bind at large batches), scheduling and Python
overhead (large for HF ``generate``). Every completion is assumed to run to ``max_completion_length``.
For MoE models only the experts the batch touches are read.
"""

from __future__ import annotations

import math

from grpo_rlvr.memory.estimate import (
    VLLM_RUNTIME_GIB,
    VLLM_SERVER_UTILIZATION,
    MemoryInputs,
    param_counts,
    vllm_kv_bytes_per_token,
    vllm_weight_bytes,
)
from grpo_rlvr.memory.hardware import GIB, Device, resolve_devices


def _weights_read(inp: MemoryInputs, batch: int) -> float:
    """Weight bytes one decode step reads on one GPU; for MoE, the expected share of experts touched."""
    shape = inp.model_shape
    full = vllm_weight_bytes(inp)
    if not shape.is_moe:
        return full
    touched = 1 - (1 - shape.experts_per_token / shape.num_experts) ** batch
    routed = shape.num_moe_layers * shape.num_experts * 3 * shape.hidden_size * shape.moe_intermediate_size
    share = routed / shape.total_params()
    return full * (1 - share * (1 - touched))


def _kv_capacity_seqs(inp: MemoryInputs, device: Device) -> float:
    """Full-length sequences one vLLM engine can keep running at once."""
    if not inp.use_vllm:
        return math.inf
    util = inp.vllm_gpu_memory_utilization if inp.vllm_mode == "colocate" else VLLM_SERVER_UTILIZATION
    pool = util * device.memory_gib * GIB - vllm_weight_bytes(inp) - VLLM_RUNTIME_GIB * GIB
    return max(pool / (inp.seq_len * vllm_kv_bytes_per_token(inp)), 0.0)


def decode_time(inputs: MemoryInputs, gpu: str, num_prompts: int, batch_size: int | None = None) -> dict:
    """Bandwidth-bound decode speed and generation-phase time for each device of a GPU class.

    Args:
        inputs: the configuration (model, lengths, num_generations, vLLM mode and tensor parallelism).
        gpu: a GPU class (``"80GB"``: every device in it) or one device (``"h100"``, ``"dgx-spark"``).
        num_prompts: prompts per generation round over all GPUs; ``num_prompts × num_generations``
            completions are decoded.
        batch_size: cap on sequences decoded together per engine (default: as many as the KV cache holds).

    Returns:
        ``{"num_sequences", "engines", "devices": {device: {...}}}``; per device: bandwidth, tokens/s of a
        single sequence, the concurrent batch, tokens/s for that batch, and the phase time in seconds.
    """
    seqs = num_prompts * inputs.num_generations
    tp = inputs.vllm_tensor_parallel_size if inputs.use_vllm else 1
    gpus = inputs.vllm_gpus if inputs.use_vllm and inputs.vllm_mode == "server" else inputs.num_gpus
    engines = max(gpus // tp, 1)
    per_engine = math.ceil(seqs / engines)
    context = inputs.max_prompt_length + inputs.max_completion_length / 2  # mean context while decoding
    kv_tok = vllm_kv_bytes_per_token(inputs) if inputs.use_vllm else inputs.model_shape.kv_bytes_per_token(2.0)
    out: dict = {"num_sequences": seqs, "engines": engines, "tensor_parallel_size": tp,
                 "params_b": round(param_counts(inputs).total / 1e9, 3), "devices": {}}
    for dev in resolve_devices(gpu):
        bw = dev.bandwidth_tbs * 1e12
        capacity = _kv_capacity_seqs(inputs, dev)
        running = max(int(min(per_engine, capacity, batch_size or math.inf)), 1)
        step_s = (_weights_read(inputs, running) + running * context * kv_tok) / bw
        single_s = (_weights_read(inputs, 1) + context * kv_tok) / bw
        waves = math.ceil(per_engine / running)
        out["devices"][dev.key] = {
            "device": dev.name, "bandwidth_tbs": dev.bandwidth_tbs,
            "tokens_per_s_single": round(1 / single_s, 1),
            "concurrent_sequences": running,
            "tokens_per_s_batch": round(running / step_s, 1),
            "generation_phase_s": round(waves * inputs.max_completion_length * step_s, 2),
        }
        if capacity < 1:
            out["devices"][dev.key]["note"] = ("vLLM cannot start at this vllm_gpu_memory_utilization; "
                                               "figures assume one sequence at a time")
    return out
