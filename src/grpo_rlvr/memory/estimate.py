"""Peak GPU memory per training device for a GRPO run on TRL 1.16, term by term.

A GRPO step has two phases on the training GPUs: *generation* (vLLM colocated, or HF ``generate``)
and *training* (forward/backward/optimizer step on ``per_device_train_batch_size`` sequences). The
model state (weights, optimizer, master copy, reference model) is resident in both. Without vLLM sleep
mode a colocated vLLM keeps its reservation through the training phase, so the peak is the sum; with
sleep mode (or HF generate, or a vLLM server) it is the larger of the two phases.

Assumptions (each also appears in ``MemoryEstimate.notes`` when it applies):

- weights bf16 (``weight_bytes=2``); mixed-precision AdamW keeps an fp32 master copy and fp32 m and v
  (16 bytes/param with the bf16 weights and grads), as DeepSpeed and FSDP2 do. ``master_weights=False``
  models a bf16-loaded model stepped by torch AdamW on one GPU (states in bf16, 8 bytes/param).
  ``optimizer="adamw_8bit"`` keeps m and v in 8 bits (2 bytes/param).
- LoRA adapters are fp32 (PEFT ``autocast_adapter_dtype=True``); QLoRA stores decoder linear weights in
  NF4 with double quantization (~0.516 bytes/param), and the rendered train.py's
  ``peft.prepare_model_for_kbit_training`` upcasts the rest (embeddings, LM head, norms) to fp32.
- the vLLM copy: bf16; for QLoRA colocated, TRL 1.16 starts vLLM with ``quantization="bitsandbytes"`` when the
  policy has 4-bit layers, so vLLM quantizes its own copy in flight (4-bit, fp32 block scales, no double
  quantization: ~0.5625 bytes/param); a ``vllm serve`` server loads the checkpoint as it is (bf16).
- the reference model exists only when ``beta > 0`` and the method is ``full`` (with PEFT, TRL
  disables the adapter instead).
- activations: flash/SDPA attention (no seq² term), HF RMSNorm upcasting to fp32, SwiGLU MLP.
- logits: TRL 1.16 scores completions with a fused, tiled LM head (``add_fused_lm_head``: 4096-token
  × 32768-vocab tiles) and never materializes batch × seq × vocab. ``logits="materialized"`` models
  older TRL: fp32 logits for the micro-batch plus one sequence's log-softmax copy (the backward pass can
  briefly double this).
- CUDA context 1 GiB, +0.5 GiB NCCL buffers on several GPUs, +5% allocator fragmentation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

from grpo_rlvr.errors import ConfigError
from grpo_rlvr.memory.hardware import DEVICES, GIB, GpuType, resolve_gpu
from grpo_rlvr.memory.shapes import nearest_size_class, size_class
from grpo_rlvr.model_shape import ModelShape

METHODS = ("full", "lora", "qlora")
SHARDINGS = ("none", "ddp", "zero2", "zero3", "fsdp2")
OPTIMIZERS = ("adamw", "adamw_8bit")
NF4_BYTES = 0.5 * (1 + 0.127 / 4)   # 4-bit weights + double-quantized block constants (0.127 bit/param)
VLLM_BNB_BYTES = 0.5 + 4 / 64       # vLLM in-flight bitsandbytes: 4-bit weights + an fp32 scale per 64
KBIT_OTHER_BYTES = 4.0              # prepare_model_for_kbit_training: non-quantized weights upcast to fp32
VLLM_RUNTIME_GIB = 1.0               # vLLM activations, sampler and CUDA graphs beside weights and KV
VLLM_SERVER_UTILIZATION = 0.9        # `vllm serve --gpu-memory-utilization` default
CUDA_CONTEXT_GIB = 1.0
NCCL_GIB = 0.5
FRAGMENTATION = 0.05
LOGIT_TILE_TOKENS, LOGIT_TILE_VOCAB = 4096, 32768  # trl.kernels.chunked_logprob tile shape


# ---------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class MemoryInputs:
    """One GRPO configuration to size. Field names follow TRL's GRPOConfig where a field passes through.

    The model is ``size`` (a size class), or ``params_b`` (billions) with an optional ``shape``; with a
    shape only, its own parameter count is used. ``num_gpus`` counts training processes (not vLLM server
    GPUs, which are ``vllm_gpus``). ``max_prompt_length`` is the longest prompt in tokens (TRL 1.16 does
    not truncate prompts).
    """

    size: str | None = None
    params_b: float | None = None
    shape: ModelShape | None = None
    method: str = "full"
    lora_rank: int = 16
    weight_bytes: float = 2.0
    optimizer: str = "adamw"
    master_weights: bool = True
    per_device_train_batch_size: int = 8
    gradient_accumulation_steps: int = 4
    num_generations: int = 8
    max_prompt_length: int = 512
    max_completion_length: int = 1024
    gradient_checkpointing: bool = True
    beta: float = 0.01
    use_vllm: bool = True
    vllm_mode: str = "colocate"
    vllm_gpu_memory_utilization: float = 0.3
    vllm_enable_sleep_mode: bool = False
    vllm_tensor_parallel_size: int = 1
    vllm_gpus: int = 1
    sharding: str = "none"
    num_gpus: int = 1
    offload_optimizer: bool = False
    offload_params: bool = False
    logits: str = "fused"

    def __post_init__(self) -> None:
        problems = []
        if self.size is None and self.params_b is None and self.shape is None:
            problems.append("give the model as size= (e.g. '7B'), params_b= or shape=")
        if self.size is not None:
            try:
                size_class(self.size)
            except ConfigError as err:
                problems.append(str(err))
        choices = {"method": METHODS, "sharding": SHARDINGS, "optimizer": OPTIMIZERS,
                   "vllm_mode": ("colocate", "server"), "logits": ("fused", "materialized")}
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                problems.append(f"{name}={getattr(self, name)!r} is not one of {', '.join(allowed)}")
        for name in ("lora_rank", "per_device_train_batch_size", "gradient_accumulation_steps", "num_gpus",
                     "max_completion_length", "vllm_tensor_parallel_size", "vllm_gpus"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                problems.append(f"{name}={getattr(self, name)!r} must be an integer >= 1")
        if self.max_prompt_length < 0:
            problems.append(f"max_prompt_length={self.max_prompt_length} must be >= 0")
        if self.num_generations < 2:
            problems.append(f"num_generations={self.num_generations}: GRPO needs at least 2 per prompt")
        if not 0 < self.vllm_gpu_memory_utilization <= 1:
            problems.append(f"vllm_gpu_memory_utilization={self.vllm_gpu_memory_utilization} must be in (0, 1]")
        if self.params_b is not None and self.params_b <= 0:
            problems.append(f"params_b={self.params_b} must be > 0")
        if self.offload_params and self.sharding not in ("zero3", "fsdp2"):
            problems.append("offload_params=True needs sharding='zero3' or 'fsdp2'")
        if self.offload_optimizer and self.sharding not in ("zero2", "zero3", "fsdp2"):
            problems.append("offload_optimizer=True needs sharding='zero2', 'zero3' or 'fsdp2'")
        if problems:
            raise ConfigError(problems, source="MemoryInputs")

    @property
    def model_shape(self) -> ModelShape:
        if self.shape is not None:
            return self.shape
        if self.size is not None:
            return size_class(self.size)
        return nearest_size_class(self.params_b * 1e9)

    @property
    def seq_len(self) -> int:
        return self.max_prompt_length + self.max_completion_length

    @property
    def generation_seqs_per_device(self) -> int:
        """Completions each training process generates per generation round (TRL: steps_per_generation = GAS)."""
        return self.per_device_train_batch_size * self.gradient_accumulation_steps

    def to_dict(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "shape"}
        out["shape"] = self.model_shape.name
        return out


# ---------------------------------------------------------------------------- params


@dataclass(frozen=True)
class ParamCounts:
    total: float
    layer_linear: float   # decoder linear weights (quantized by QLoRA)
    other: float          # embeddings, LM head, norms (fp32 in QLoRA after k-bit preparation)
    per_layer: float      # one decoder layer (what ZeRO-3 / FSDP gather at a time)
    lm_head: float
    lora: float


def param_counts(inputs: MemoryInputs) -> ParamCounts:
    """Parameter counts from the shape, with the decoder layers rescaled when ``params_b`` overrides it."""
    shape = inputs.model_shape
    linear, embed = float(shape.layer_linear_params()), float(shape.embedding_params())
    norms = float(shape.norm_params())
    scale = 1.0
    if inputs.params_b is not None:
        wanted = inputs.params_b * 1e9
        embed = min(embed, 0.3 * wanted)  # a shape borrowed from a size class must not dominate
        scale = max(wanted - embed - norms, 0.0) / linear
    linear *= scale
    lm_head = float(shape.vocab_size * shape.hidden_size)
    # Layer weights grow with width², LoRA with width: rescale the adapters by the square root.
    return ParamCounts(total=linear + embed + norms, layer_linear=linear, other=embed + norms,
                       per_layer=linear / shape.num_layers, lm_head=lm_head,
                       lora=float(shape.lora_params(inputs.lora_rank)) * scale ** 0.5)


# ---------------------------------------------------------------------------- result


@dataclass
class MemoryEstimate:
    """Per-device peak memory. All sizes in GiB (2**30 bytes)."""

    gpu: str
    gpu_gib: float
    terms: dict[str, float]
    phases: dict[str, float]
    total_gib: float
    fits: bool
    headroom_gib: float
    notes: list[str] = field(default_factory=list)
    blocking: list[str] = field(default_factory=list)   # reasons it cannot run regardless of the total
    vllm: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict:
        r = lambda x: round(x, 2)  # noqa: E731
        return {"gpu": self.gpu, "gpu_gib": r(self.gpu_gib), "total_gib": r(self.total_gib), "fits": self.fits,
                "headroom_gib": r(self.headroom_gib), "terms": {k: r(v) for k, v in self.terms.items()},
                "phases": {k: r(v) for k, v in self.phases.items()}, "vllm": {k: r(v) for k, v in self.vllm.items()},
                "notes": list(self.notes), "blocking": list(self.blocking)}


# ---------------------------------------------------------------------------- the model


def _model_state(inp: MemoryInputs, pc: ParamCounts) -> dict[str, float]:
    """Bytes of weights, gradients, master copy, optimizer states and reference model on one device."""
    wb = inp.weight_bytes
    shard_weights = inp.sharding in ("zero3", "fsdp2")
    shard_states = inp.sharding in ("zero2", "zero3", "fsdp2")
    n = inp.num_gpus if shard_states else 1
    m_bytes = 8.0 if inp.optimizer == "adamw" else 2.0
    if inp.method == "full":
        weights, trainable = pc.total * wb, pc.total
        grads = pc.total * wb
        master = pc.total * 4.0 if inp.master_weights else 0.0
        if not inp.master_weights and inp.optimizer == "adamw":
            m_bytes = 2 * wb
    else:
        base = pc.total * wb if inp.method == "lora" else pc.layer_linear * NF4_BYTES + pc.other * KBIT_OTHER_BYTES
        weights, trainable = base + pc.lora * 4.0, pc.lora
        grads, master = pc.lora * 4.0, 0.0
    optimizer = trainable * m_bytes
    # ZeRO-3 / FSDP2 gather about two layers at a time (prefetch) plus the LM head for the fused head.
    gathered = (2 * pc.per_layer + pc.lm_head) * wb if shard_weights else 0.0
    if shard_weights:
        weights = gathered if inp.offload_params else weights / n + gathered
    bucket = 2 * pc.per_layer * wb if inp.method == "full" else 0.0
    if shard_states:
        grads = min(grads / n + bucket, grads)
        master, optimizer = master / n, optimizer / n
    if inp.offload_optimizer:
        grads, master, optimizer = min(bucket, grads), 0.0, 0.0
    reference = 0.0
    if inp.beta > 0 and inp.method == "full":
        reference = pc.total * wb
        if shard_weights:
            reference = gathered if inp.offload_params else reference / n + gathered
    return {"weights": weights, "gradients": grads, "master_weights": master, "optimizer_states": optimizer,
            "reference_model": reference}


def _activation_bytes_per_token_layer(shape: ModelShape) -> float:
    """Saved activations of one decoder layer for one token, bf16, no checkpointing.

    Two RMSNorms (fp32 input + bf16 output each: 12h), q/k/v and the attention output kept by the flash
    kernel (4·q_dim + 4·kv_dim), SwiGLU gate, up, SiLU(gate) and their product (8·i per active MLP).
    """
    h = shape.hidden_size
    attn = 12 * h + 4 * shape.q_dim + 4 * shape.kv_dim
    dense = attn + 8 * shape.intermediate_size
    if not shape.is_moe:
        return dense
    moe_i = shape.experts_per_token * shape.moe_intermediate_size + shape.shared_expert_intermediate_size
    moe = attn + 8 * moe_i + 4 * h * shape.experts_per_token + 4 * shape.num_experts
    return (shape.num_dense_layers * dense + shape.num_moe_layers * moe) / shape.num_layers


def _activations(inp: MemoryInputs) -> float:
    shape = inp.model_shape
    tokens = inp.per_device_train_batch_size * inp.seq_len
    per_layer = _activation_bytes_per_token_layer(shape)
    h = shape.hidden_size
    if inp.gradient_checkpointing:  # each layer keeps its bf16 input; one layer is recomputed at a time
        per_token = shape.num_layers * 2 * h + per_layer
    else:
        per_token = shape.num_layers * per_layer
    return tokens * (per_token + 6 * h)  # + embedding output, final norm, gradient buffers


def _logits(inp: MemoryInputs, pc: ParamCounts) -> float:
    shape = inp.model_shape
    tokens = inp.per_device_train_batch_size * inp.max_completion_length  # only completions are scored
    if inp.logits == "materialized":
        return (tokens + inp.max_completion_length) * shape.vocab_size * 4.0
    tile = min(tokens, LOGIT_TILE_TOKENS) * min(shape.vocab_size, LOGIT_TILE_VOCAB) * 2.0
    hidden = tokens * shape.hidden_size * (2.0 + 4.0)        # gathered hidden states + fp32 grad_hidden
    per_token_stats = tokens * 8 * 4.0                        # online-logsumexp statistics, fp32
    grad_head = pc.lm_head * 4.0 if inp.method == "full" else 0.0  # fp32 LM-head gradient accumulator
    return tile + hidden + per_token_stats + grad_head


def vllm_weight_bytes(inp: MemoryInputs, pc: ParamCounts | None = None) -> float:
    """Bytes of the vLLM copy of the weights on one vLLM GPU, split by tensor parallelism: bf16, or for QLoRA
    colocated vLLM's in-flight 4-bit quantization (what TRL 1.16 asks for when the policy is 4-bit)."""
    pc = pc or param_counts(inp)
    in_flight = inp.method == "qlora" and inp.vllm_mode == "colocate"
    full = pc.layer_linear * VLLM_BNB_BYTES + pc.other * 2.0 if in_flight else pc.total * 2.0
    return full / inp.vllm_tensor_parallel_size


def vllm_kv_bytes_per_token(inp: MemoryInputs) -> float:
    return inp.model_shape.kv_bytes_per_token(2.0) / inp.vllm_tensor_parallel_size


def vllm_needed_gib(inp: MemoryInputs, seqs: int) -> float:
    """GiB a vLLM engine needs to hold its weights and ``seqs`` full-length sequences at once."""
    kv = seqs * inp.seq_len * vllm_kv_bytes_per_token(inp)
    return (vllm_weight_bytes(inp) + kv) / GIB + VLLM_RUNTIME_GIB


def estimate_memory(inputs: MemoryInputs, gpu: str | GpuType) -> MemoryEstimate:
    """Estimate the peak memory per training GPU of one GRPO configuration on one GPU class.

    Args:
        inputs: the configuration.
        gpu: a GPU class key (``"80GB"``), a device key (``"h100"``) or a GpuType.

    Returns:
        A MemoryEstimate: terms and phases in GiB, the peak, the verdict and the notes behind it.

    Raises:
        ConfigError: unknown GPU.
    """
    gt = gpu if isinstance(gpu, GpuType) else resolve_gpu(gpu)
    pc = param_counts(inputs)
    shape = inputs.model_shape
    notes, blocking = [], []
    b = _model_state(inputs, pc)
    b["activations"] = _activations(inputs)
    b["logits"] = _logits(inputs, pc)
    terms = {k: v / GIB for k, v in b.items()}
    for k in ("vllm_weights", "vllm_kv_cache", "generation_kv_cache", "generation_weights_gather"):
        terms[k] = 0.0
    vllm_info: dict[str, float] = {}

    seqs = inputs.generation_seqs_per_device
    if inputs.use_vllm and inputs.vllm_mode == "colocate":
        reservation = inputs.vllm_gpu_memory_utilization * gt.memory_gib
        terms["vllm_weights"] = vllm_weight_bytes(inputs, pc) / GIB
        terms["vllm_kv_cache"] = max(reservation - terms["vllm_weights"], 0.0)
        kv_seq_gib = inputs.seq_len * vllm_kv_bytes_per_token(inputs) / GIB
        capacity = (reservation - terms["vllm_weights"] - VLLM_RUNTIME_GIB) / kv_seq_gib
        vllm_info = {"reservation_gib": reservation, "kv_capacity_seqs": max(capacity, 0.0),
                     "needed_for_generation_batch_gib": vllm_needed_gib(inputs, seqs)}
        if capacity < 1:
            need = vllm_needed_gib(inputs, 1) / gt.memory_gib   # a fraction of the GPU, in (0, 1] when it fits
            fix = (f"raise it to at least {math.ceil(need * 100) / 100:.2f}" if need <= 1 else
                   f"it does not fit even at 1.0 (all {gt.memory_gib:.1f} GiB of the GPU): use a GPU with at least "
                   f"{vllm_needed_gib(inputs, 1):.0f} GiB, vLLM's server mode on GPUs of its own with tensor "
                   "parallelism, a smaller model, or generation without vLLM")
            blocking.append(f"vLLM cannot start: vllm_gpu_memory_utilization={inputs.vllm_gpu_memory_utilization} "
                            f"reserves {reservation:.1f} GiB but its weights and one {inputs.seq_len}-token sequence "
                            f"need {vllm_needed_gib(inputs, 1):.1f} GiB; {fix}")
        elif capacity < seqs:
            notes.append(f"vLLM KV cache holds {capacity:.0f} of the {seqs} sequences per generation round; "
                         "the rest wait (slower, not an OOM)")
    elif not inputs.use_vllm:
        terms["generation_kv_cache"] = seqs * inputs.seq_len * shape.kv_bytes_per_token(inputs.weight_bytes) / GIB
        if inputs.sharding == "zero3":  # ds3_gather_for_generation gathers the whole model for generate()
            terms["generation_weights_gather"] = max(pc.total * inputs.weight_bytes / GIB - terms["weights"], 0.0)
        notes.append("HF generate keeps the KV cache of the whole generation batch in the training process")

    static = sum(terms[k] for k in ("weights", "master_weights", "optimizer_states", "reference_model"))
    train = terms["gradients"] + terms["activations"] + terms["logits"]
    vllm_res = terms["vllm_weights"] + terms["vllm_kv_cache"]
    hf_gen = terms["generation_kv_cache"] + terms["generation_weights_gather"]
    overlap = inputs.use_vllm and inputs.vllm_mode == "colocate" and not inputs.vllm_enable_sleep_mode
    dynamic = train + vllm_res if overlap else max(train, vllm_res + hf_gen)
    overhead = CUDA_CONTEXT_GIB + (NCCL_GIB if inputs.num_gpus > 1 else 0.0)
    overhead += FRAGMENTATION * (static + max(train, hf_gen))
    terms["cuda_overhead"] = overhead
    total = static + dynamic + overhead
    phases = {"training": static + train + overhead + (vllm_res if overlap else 0.0),
              "generation": static + vllm_res + hf_gen + overhead}

    notes.extend(_assumption_notes(inputs, gt))
    headroom = gt.memory_gib - total
    if 0 <= headroom < 0.05 * gt.memory_gib and not blocking:
        notes.append(f"tight: under 5% headroom ({headroom:.1f} GiB); long prompts or fragmentation may OOM")
    return MemoryEstimate(gpu=gt.key, gpu_gib=gt.memory_gib, terms=terms, phases=phases, total_gib=total,
                          fits=headroom >= 0 and not blocking, headroom_gib=headroom, notes=notes,
                          blocking=blocking, vllm=vllm_info)


def _assumption_notes(inp: MemoryInputs, gt: GpuType) -> list[str]:
    notes = []
    if inp.beta > 0 and inp.method != "full":
        notes.append("beta > 0 with LoRA/QLoRA: the reference is the base model with the adapter disabled (no copy)")
    if inp.beta == 0:
        notes.append("beta = 0: no reference model is loaded")
    if inp.use_vllm and inp.vllm_mode == "colocate":
        if inp.vllm_enable_sleep_mode:
            notes.append("vLLM sleep mode: its reservation is freed during the training phase (peak = max of phases)")
        else:
            notes.append("vLLM colocate without sleep mode: its reservation stays through training (peak = sum)")
    if inp.use_vllm and inp.vllm_mode == "server":
        notes.append(f"vLLM server mode: the training GPUs hold no vLLM memory; {inp.vllm_gpus} separate vLLM GPU(s)")
    if inp.method == "full" and inp.master_weights:
        notes.append("full fine-tuning: fp32 master weights + fp32 AdamW m, v assumed (DeepSpeed/FSDP mixed precision)")
    if (inp.per_device_train_batch_size * inp.num_gpus * inp.gradient_accumulation_steps) % inp.num_generations:
        notes.append("TRL will refuse this batch: per_device_train_batch_size × processes × "
                     "gradient_accumulation_steps must be divisible by num_generations")
    if any(DEVICES[d].unified for d in gt.devices):
        notes.append(gt.note)
        if inp.offload_optimizer or inp.offload_params:
            notes.append("offloading to CPU on unified memory only moves bytes within the same 128 GB")
    if inp.logits == "materialized":
        notes.append("materialized logits: fp32 batch × completion × vocab kept once; backward can briefly double it")
    return notes
