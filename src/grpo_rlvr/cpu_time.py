"""Time before cost: how long sampling or training would take on this CPU, asked before it starts.

The estimate is rough on purpose: ``parameters × tokens / rate``, where ``rate`` (parameter-tokens per second) is
measured once per machine by generating with a ~50M-parameter calibration model built from a config (nothing is
downloaded), and kept in the user's cache (``$GRPO_RLVR_CACHE/cpu_speed.json``, default
``~/.cache/grpo-rlvr``). Generation of a large model on a CPU is compute-bound, so parameters × tokens is the
work; real runs also pay for prompt prefill, padding and Python overhead, and a bf16 model on a CPU without
bf16 units runs slower than the fp32 calibration. Treat the figure as an order of magnitude.

Tokens counted: sampling, every completion to ``max_completion_length``; training, per optimizer step the
completions of the step × ``max_completion_length`` × (1 to generate + 3 for forward and backward + 1 for the
reference model when ``beta > 0``). Above ``CPU_LIMIT_S`` the command refuses unless ``--allow-cpu`` is given,
and names the GPU path. A job so small that even ``FLOOR_RATE`` would finish it under the limit (the tiny demo
model) is let through without measuring anything.
"""

from __future__ import annotations

import json
import logging
import math
import platform
import time
from dataclasses import dataclass
from pathlib import Path

from grpo_rlvr.errors import MachineError

log = logging.getLogger(__name__)

CPU_LIMIT_S = 30 * 60          # estimated seconds above which a CPU job needs --allow-cpu
FLOOR_RATE = 1e9               # parameter-tokens/s far below any machine this runs on (2 idle cores measure ~3e10)
SPEED_FILE = "cpu_speed.json"
# The calibration model: wide enough that matrix products, not Python per-token overhead, dominate its time.
CALIBRATION_SHAPE = {"hidden_size": 1024, "intermediate_size": 2816, "num_hidden_layers": 4,
                     "num_attention_heads": 8, "num_key_value_heads": 8, "vocab_size": 1024,
                     "max_position_embeddings": 128}
CALIBRATION_BATCH, CALIBRATION_NEW_TOKENS, CALIBRATION_RUNS = 16, 16, 3  # ≈ 0.5 s per run on 2 idle cores


class CpuTimeRefused(MachineError):
    """A CPU job whose estimated time is above the limit, started without ``--allow-cpu``."""


@dataclass(frozen=True)
class CpuSpeed:
    param_tokens_per_s: float
    source: str               # the cache file it was read from or written to


def _cache_file() -> Path:
    from grpo_rlvr.user_cache import cache_root

    return cache_root() / SPEED_FILE


def machine_key() -> dict:
    """What the measurement depends on: the CPU model, the threads torch uses, the torch version."""
    import torch

    cpu = platform.processor()
    try:
        cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                    if line.startswith("model name")), cpu)
    except OSError:
        pass
    return {"cpu": cpu, "threads": torch.get_num_threads(), "torch": torch.__version__}


def calibrate() -> float:
    """Parameter-tokens per second of ``generate`` on this machine, measured on the calibration model (≈2 s idle)."""
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    model = Qwen2ForCausalLM(Qwen2Config(**CALIBRATION_SHAPE, tie_word_embeddings=True)).eval()
    params = sum(p.numel() for p in model.parameters())
    ids = torch.randint(4, CALIBRATION_SHAPE["vocab_size"], (CALIBRATION_BATCH, 8))
    gen = GenerationConfig(max_new_tokens=CALIBRATION_NEW_TOKENS, min_new_tokens=CALIBRATION_NEW_TOKENS,
                           do_sample=False, pad_token_id=0, eos_token_id=None)
    seconds = []
    with torch.no_grad():
        model.generate(input_ids=ids[:2, :4], generation_config=GenerationConfig(max_new_tokens=2, do_sample=False,
                                                                                 pad_token_id=0))  # warm-up
        for _ in range(CALIBRATION_RUNS):  # the fastest run: other work on the machine only ever slows a run down
            t0 = time.perf_counter()
            model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), generation_config=gen)
            seconds.append(time.perf_counter() - t0)
    return params * CALIBRATION_BATCH * CALIBRATION_NEW_TOKENS / min(seconds)


def measured_speed() -> CpuSpeed:
    """This machine's rate from the cache, measured (and cached) when the cache has none for this machine."""
    path = _cache_file()
    key = machine_key()
    try:
        cached = json.loads(path.read_text())
        if cached.get("key") == key and float(cached["param_tokens_per_s"]) > 0:
            return CpuSpeed(float(cached["param_tokens_per_s"]), str(path))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    rate = calibrate()
    from grpo_rlvr.files import write_json_atomic

    try:
        write_json_atomic(path, {"param_tokens_per_s": rate, "key": key, "measured": time.strftime("%Y-%m-%d %H:%M"),
                                 "how": "grpo_rlvr.cpu_time.calibrate: greedy generate, calibration Qwen2 model"})
    except OSError as e:  # a read-only cache costs a re-measure next time, nothing else
        log.warning("could not keep the CPU speed in %s: %s", path, e)
    return CpuSpeed(rate, str(path))


# ---------------------------------------------------------------------------- the work a job does


def sampling_tokens(samples: int, max_completion_length: int) -> int:
    """Tokens generated when every completion runs to ``max_completion_length`` (the upper bound)."""
    return samples * max_completion_length


def training_tokens(grpo: dict, processes: int, rows: int | None) -> tuple[int, int]:
    """(optimizer steps, token work) of a training run from its resolved GRPOConfig kwargs.

    Steps are ``max_steps`` when positive, else ``num_train_epochs`` passes over ``rows`` prompts × generations.
    """
    completions = grpo.get("per_device_train_batch_size", 8) * grpo.get("gradient_accumulation_steps", 1) * processes
    steps = int(grpo.get("max_steps") or -1)
    if steps <= 0:
        per_epoch = math.ceil((rows or 0) * grpo.get("num_generations", 8) / max(completions, 1))
        steps = max(1, math.ceil(per_epoch * float(grpo.get("num_train_epochs", 1))))
    passes = 1 + 3 + (1 if grpo.get("beta", 0.0) else 0)
    return steps, steps * completions * grpo.get("max_completion_length", 256) * passes


def human_seconds(s: float) -> str:
    if s < 90:
        return f"{s:.0f} s"
    if s < 5400:
        return f"{s / 60:.0f} min"
    if s < 2 * 86400:
        return f"{s / 3600:.1f} h"
    return f"{s / 86400:.1f} days"


def check_cpu_time(what: str, params: float | None, tokens: int, allow_cpu: bool, gpu_path: str,
                   estimate_only: bool = False) -> float | None:
    """Refuse a CPU job estimated above ``CPU_LIMIT_S`` unless ``allow_cpu``; return the estimate in seconds
    (None when the job is too small to need one, or nothing was measured). ``estimate_only`` (a dry run):
    estimate without refusing and without claiming to go ahead.

    Args:
        what: the job in words ("preflight would sample 512 completions of up to 256 tokens").
        params: the model's parameter count (None: unknown).
        tokens: the token work of the job (``sampling_tokens`` / ``training_tokens``).
        gpu_path: what to do instead, on a GPU.
    Raises:
        CpuTimeRefused: above the limit, or the size is unknown, without ``allow_cpu``.
    """
    flag = "pass --allow-cpu to run it here anyway"
    if params is None:
        if allow_cpu or estimate_only:
            return None
        raise CpuTimeRefused(f"{what} on this CPU, but the model's size is unknown, so the time cannot be estimated. "
                             f"State model.params in the brief, {gpu_path}, or {flag}")
    if params * tokens / FLOOR_RATE <= CPU_LIMIT_S:
        return None
    speed = measured_speed()
    seconds = params * tokens / speed.param_tokens_per_s
    estimate = (f"{what} from a {params / 1e9:.3g}B-parameter model on this CPU: about {human_seconds(seconds)} by a "
                f"rough estimate (parameters × tokens at {speed.param_tokens_per_s:.2g} parameter-tokens/s, measured "
                f"once on this machine and kept in {speed.source})")
    if seconds <= CPU_LIMIT_S or estimate_only:
        log.info("%s", estimate)
        return seconds
    if allow_cpu:
        log.warning("%s; going ahead (--allow-cpu)", estimate)
        return seconds
    raise CpuTimeRefused(f"{estimate}, over the {CPU_LIMIT_S // 60} min this command runs on a CPU without asking. "
                         f"{gpu_path[0].upper() + gpu_path[1:]}; or {flag}")


def on_cpu() -> bool:
    """Sampling here would run on the CPU (no CUDA device visible to torch)."""
    import torch

    return not torch.cuda.is_available()


SAMPLING_GPU_PATH = ("run it on a machine with a CUDA GPU, where it samples with vLLM when installed "
                     "(`pip install 'grpo-rlvr[vllm]'`)")
TRAINING_GPU_PATH = ("set hardware.accelerator: gpu (with gpu_type) and render, then `grpo-rlvr train` on the GPU "
                     "machine (`grpo-rlvr validate BRIEF --remote` checks the brief for it here)")


def check_sampling_time(brief, samples: int, allow_cpu: bool, command: str) -> float | None:
    """The CPU time guard for ``preflight`` and ``inspect`` (nothing to check on a GPU)."""
    if not on_cpu():
        return None
    length = brief.sampling()["max_completion_length"]
    return check_cpu_time(f"{command} would sample {samples} completions of up to {length} tokens",
                          brief.model.facts.params if brief.model.facts else None,
                          sampling_tokens(samples, length), allow_cpu, SAMPLING_GPU_PATH)


def check_training_time(brief, max_steps: int | None, allow_cpu: bool, estimate_only: bool = False,
                        count_rows=None) -> float | None:
    """The CPU time guard for ``train`` on a ``hardware.accelerator: cpu`` brief (a GPU brief is not checked);
    ``estimate_only``: the estimate for ``train --dry-run``, never a refusal. ``count_rows()`` gives the training
    set's size, asked only when the run is sized in epochs (no ``max_steps``)."""
    if brief.hardware.accelerator != "cpu":
        return None
    grpo = {**brief.grpo, **({"max_steps": max_steps} if max_steps is not None else {})}
    rows = None
    if int(grpo.get("max_steps") or -1) <= 0 and count_rows is not None:
        rows = count_rows()
    steps, tokens = training_tokens(grpo, brief.hardware.num_processes, rows)
    return check_cpu_time(f"training would run {steps} steps of up to {grpo.get('max_completion_length', 256)}-token "
                          "completions", brief.model.facts.params if brief.model.facts else None, tokens, allow_cpu,
                          TRAINING_GPU_PATH, estimate_only)
