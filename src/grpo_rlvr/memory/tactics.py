"""Tactics that make a GRPO configuration fit, each written as the brief change that applies it.

Tried cheapest first: changes that cost nothing in quality (gradient checkpointing, vLLM sleep mode,
vLLM tensor parallelism over the training GPUs, a right-sized vLLM reservation, a smaller micro-batch
with more accumulation), then ones that change the optimizer or method (8-bit AdamW, LoRA, QLoRA), then
a shorter ``max_completion_length`` (changes the task). Tactics that need more GPUs (ZeRO-3 over N, a separate vLLM server GPU) are a separate ladder.
Changes are brief deltas: ``{"method": ...}``, ``{"grpo": {<GRPOConfig field>: ...}}``,
``{"hardware": {"num_gpus": ..., "sharding": ..., "vllm_gpus": ...}}`` (``num_gpus`` counts vLLM GPUs too).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, fields, replace

from grpo_rlvr.memory.estimate import MemoryEstimate, MemoryInputs, estimate_memory, vllm_needed_gib
from grpo_rlvr.memory.hardware import DEVICES, GpuType, resolve_gpu


@dataclass
class Tactic:
    """One way to fit: what it does, the brief change, and the configuration and estimate it leads to."""

    description: str
    changes: dict
    estimate: MemoryEstimate
    inputs: MemoryInputs

    def to_dict(self) -> dict:
        return {"description": self.description, "changes": self.changes, "total_gib": round(self.estimate.total_gib, 2),
                "fits": self.estimate.fits, "headroom_gib": round(self.estimate.headroom_gib, 2)}


Step = tuple[str, dict, MemoryInputs]


def _merge(a: dict, b: dict) -> dict:
    out = dict(a)
    for k, v in b.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _brief_gpus(inp: MemoryInputs) -> int:
    server = inp.use_vllm and inp.vllm_mode == "server"
    return inp.num_gpus + (inp.vllm_gpus if server else 0)


# ---------------------------------------------------------------------------- single steps
# Each returns candidate (description, brief changes, inputs), mildest first.


def _checkpointing(inp: MemoryInputs, gt: GpuType) -> list[Step]:
    if inp.gradient_checkpointing:
        return []
    return [("turn on gradient checkpointing (recompute activations in backward)",
             {"grpo": {"gradient_checkpointing": True}}, replace(inp, gradient_checkpointing=True))]


def _sleep(inp: MemoryInputs, gt: GpuType) -> list[Step]:
    if not (inp.use_vllm and inp.vllm_mode == "colocate") or inp.vllm_enable_sleep_mode:
        return []
    return [("vLLM sleep mode: free vLLM's weights and KV cache during the training step",
             {"grpo": {"vllm_enable_sleep_mode": True}}, replace(inp, vllm_enable_sleep_mode=True))]


def _utilization(inp: MemoryInputs, gt: GpuType) -> list[Step]:
    if not (inp.use_vllm and inp.vllm_mode == "colocate"):
        return []
    out = []
    for seqs, what in ((inp.generation_seqs_per_device, "the whole generation batch"),
                       (inp.num_generations, "one group of num_generations")):
        need = vllm_needed_gib(inp, seqs) / gt.memory_gib
        util = min(max(math.ceil(need * 20) / 20, 0.05), 0.95)
        if util != inp.vllm_gpu_memory_utilization and need <= 0.95:
            out.append((f"vllm_gpu_memory_utilization {util:.2f}: room for vLLM's weights + KV of {what} "
                        f"({seqs} sequences)", {"grpo": {"vllm_gpu_memory_utilization": util}},
                        replace(inp, vllm_gpu_memory_utilization=util)))
    return out


def _tensor_parallel(inp: MemoryInputs, gt: GpuType) -> list[Step]:
    """Split the colocated vLLM engine over the training GPUs (TRL groups processes by this size)."""
    if not (inp.use_vllm and inp.vllm_mode == "colocate"):
        return []
    out, tp = [], inp.vllm_tensor_parallel_size * 2
    while tp <= inp.num_gpus and inp.num_gpus % tp == 0:
        out.append((f"vllm_tensor_parallel_size {tp}: each colocated vLLM holds 1/{tp} of the weights and KV",
                    {"grpo": {"vllm_tensor_parallel_size": tp}}, replace(inp, vllm_tensor_parallel_size=tp)))
        tp *= 2
    return out


def _micro_batch(inp: MemoryInputs, gt: GpuType) -> list[Step]:
    out, b, g = [], inp.per_device_train_batch_size, inp.gradient_accumulation_steps
    while b > 1 and b % 2 == 0:
        b, g = b // 2, g * 2
        out.append((f"per_device_train_batch_size {b} × gradient_accumulation_steps {g} (same completions per step)",
                    {"grpo": {"per_device_train_batch_size": b, "gradient_accumulation_steps": g}},
                    replace(inp, per_device_train_batch_size=b, gradient_accumulation_steps=g)))
    return out


def _adam8bit(inp: MemoryInputs, gt: GpuType) -> list[Step]:
    if inp.optimizer == "adamw_8bit" or inp.method != "full":
        return []
    return [("8-bit AdamW states (bitsandbytes)", {"grpo": {"optim": "adamw_8bit"}},
             replace(inp, optimizer="adamw_8bit"))]


def _lora(inp: MemoryInputs, gt: GpuType) -> list[Step]:
    if inp.method != "full":
        return []
    return [(f"LoRA (rank {inp.lora_rank}) instead of full fine-tuning; also drops the reference model copy",
             {"method": "lora"}, replace(inp, method="lora", optimizer="adamw"))]


def _qlora(inp: MemoryInputs, gt: GpuType) -> list[Step]:
    if inp.method == "qlora" or inp.sharding in ("zero3", "fsdp2"):  # the 4-bit base is not sharded (train.py)
        return []
    return [("QLoRA: 4-bit NF4 base weights, bf16 compute, fp32 adapters", {"method": "qlora"},
             replace(inp, method="qlora", optimizer="adamw"))]


def _completion(inp: MemoryInputs, gt: GpuType) -> list[Step]:
    out, length = [], inp.max_completion_length
    while length > 256:
        length //= 2
        out.append((f"max_completion_length {length} (shorter rollouts: changes what the model can learn)",
                    {"grpo": {"max_completion_length": length}}, replace(inp, max_completion_length=length)))
    return out


def _zero3_over(n: int) -> Callable[[MemoryInputs, GpuType], list[Step]]:
    def step(inp: MemoryInputs, gt: GpuType) -> list[Step]:
        if n <= inp.num_gpus and inp.sharding in ("zero3", "fsdp2") or inp.method == "qlora":
            return []
        new = replace(inp, sharding="zero3", num_gpus=max(n, inp.num_gpus))
        return [(f"DeepSpeed ZeRO-3 over {new.num_gpus} training GPUs (weights, grads, optimizer sharded)",
                 {"hardware": {"num_gpus": _brief_gpus(new), "sharding": "zero3"}}, new)]
    return step


def _server(inp: MemoryInputs, gt: GpuType) -> list[Step]:
    if not (inp.use_vllm and inp.vllm_mode == "colocate"):
        return []
    new = replace(inp, vllm_mode="server", vllm_gpus=1)
    return [("vLLM server mode on 1 extra GPU (training GPUs hold no vLLM memory)",
             {"grpo": {"vllm_mode": "server"}, "hardware": {"num_gpus": _brief_gpus(new), "vllm_gpus": 1}}, new)]


# The vLLM reservation is not a step of its own: it is re-sized after every combination (see _build).
SAME_HARDWARE: tuple[Callable[[MemoryInputs, GpuType], list[Step]], ...] = (
    _checkpointing, _sleep, _tensor_parallel, _micro_batch, _adam8bit, _lora, _qlora, _completion)
MORE_HARDWARE = (_zero3_over(2), _zero3_over(4), _zero3_over(8), _server)
CHEAP = (_checkpointing, _sleep, _tensor_parallel, _micro_batch)


# ---------------------------------------------------------------------------- search

Choice = tuple[str, dict, dict]  # description, brief delta, MemoryInputs field overrides


def _badness(est: MemoryEstimate) -> tuple[int, float]:
    return len(est.blocking), est.total_gib


def _overrides(old: MemoryInputs, new: MemoryInputs) -> dict:
    return {f.name: getattr(new, f.name) for f in fields(new) if getattr(new, f.name) != getattr(old, f.name)}


def _pick(cands: list[Step], gt: GpuType) -> tuple[Step, MemoryEstimate] | None:
    """The first candidate that fits, else the one with the lowest peak."""
    scored = [(c, estimate_memory(c[2], gt)) for c in cands]
    for c, est in scored:
        if est.fits:
            return c, est
    return min(scored, key=lambda ce: _badness(ce[1])) if scored else None


def _build(base: MemoryInputs, chosen: list[Choice], gt: GpuType) -> Tactic:
    """Apply the chosen changes to ``base``, then re-size the vLLM reservation when that helps."""
    inp, descriptions, changes = base, [], {}
    for desc, delta, overrides in chosen:
        inp = replace(inp, **overrides)
        descriptions.append(desc)
        changes = _merge(changes, delta)
    est = estimate_memory(inp, gt)
    picked = _pick(_utilization(inp, gt), gt)
    if picked and (picked[1].fits or _badness(picked[1]) < _badness(est)):
        (desc, delta, inp), est = picked
        descriptions.append(desc)
        changes = _merge(changes, delta)
    return Tactic("; ".join(descriptions), changes, est, inp)


def _ladder(base: MemoryInputs, gt: GpuType, steps, keep_first: bool = False) -> Tactic | None:
    """Add steps in order (each at its mildest setting that fits, else its strongest) until it fits; then
    drop, costliest first, every step the fitting combination does not need."""
    chosen: list[Choice] = []
    for step in steps:
        current = _build(base, chosen, gt)
        if current.estimate.fits:
            break
        trials = [((d, c, _overrides(current.inputs, n)), None) for d, c, n in step(current.inputs, gt)]
        trials = [(choice, _build(base, [*chosen, choice], gt)) for choice, _ in trials]
        if not trials:
            continue
        fit = next((t for t in trials if t[1].estimate.fits), None)
        best = fit or min(trials, key=lambda t: _badness(t[1].estimate))
        if fit is None and _badness(best[1].estimate) >= _badness(current.estimate):
            continue  # a step that does not help is not taken
        chosen.append(best[0])
    if not _build(base, chosen, gt).estimate.fits:
        return None
    for choice in reversed(chosen[1:] if keep_first else list(chosen)):
        trial = [c for c in chosen if c is not choice]
        if _build(base, trial, gt).estimate.fits:
            chosen = trial
    return _build(base, chosen, gt)


def right_size_vllm_utilization(inputs: MemoryInputs, gpu: str | GpuType) -> MemoryInputs:
    """The inputs with ``vllm_gpu_memory_utilization`` sized to vLLM's needs (rounded up to 0.05).

    Room for the whole generation batch if that fits, else for one group of ``num_generations``; unchanged
    when vLLM is not colocated, needs more than 95% of the GPU, or re-sizing does not help.
    """
    gt = gpu if isinstance(gpu, GpuType) else resolve_gpu(gpu)
    return _build(inputs, [], gt).inputs


def fit_tactics(inputs: MemoryInputs, gpu: str | GpuType, max_single: int = 3) -> list[Tactic]:
    """Configurations that fit, each as the brief change that gets there.

    Returns, in order: up to ``max_single`` single changes that fit on their own (cheapest first; each
    with the vLLM reservation re-sized to match); the smallest cumulative combination on the same hardware,
    if no single change suffices; the first combination that fits by adding GPUs (not for a DGX Spark).
    Empty when the configuration already fits, and when nothing in the ladders fits.
    """
    gt = gpu if isinstance(gpu, GpuType) else resolve_gpu(gpu)
    if estimate_memory(inputs, gt).fits:
        return []
    tactics: list[Tactic] = []
    alone = _build(inputs, [], gt)
    if alone.estimate.fits:
        tactics.append(alone)
    for step in SAME_HARDWARE:
        for desc, delta, new in step(inputs, gt):
            tactic = _build(inputs, [(desc, delta, _overrides(inputs, new))], gt)
            if tactic.estimate.fits:
                tactics.append(tactic)
                break
        if len(tactics) >= max_single:
            break
    if not tactics:
        combined = _ladder(inputs, gt, SAME_HARDWARE)
        if combined:
            tactics.append(combined)
    if any(DEVICES[d].unified for d in gt.devices):
        return tactics  # a DGX Spark is one GPU; more hardware means another machine
    for step in MORE_HARDWARE:
        if not step(inputs, gt):
            continue  # e.g. already sharded over that many GPUs
        found = _ladder(inputs, gt, (step, *CHEAP), keep_first=True)
        if found:
            tactics.append(found)
            break
    return tactics
