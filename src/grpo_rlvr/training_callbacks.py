"""Trainer callbacks used by the rendered ``train.py``: metrics to ``metrics.jsonl`` as they are logged, and a
live progress line (step / total, reward, per-reward means, ETA). Imported only inside training."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from transformers import TrainerCallback


class MetricsJsonl(TrainerCallback):
    """Append every log record (with its step) to a JSONL file, flushed at once: a crash loses nothing logged."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not state.is_world_process_zero or not logs:
            return
        import torch

        if torch.cuda.is_available():  # peak since the start of training, for the memory model's comparison
            logs = {**logs, "gpu/max_memory_allocated_gib": torch.cuda.max_memory_allocated() / 2**30,
                    "gpu/max_memory_reserved_gib": torch.cuda.max_memory_reserved() / 2**30}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"step": state.global_step, **logs}, default=float) + "\n")


class ProgressLine(TrainerCallback):
    """One status line per log: step/total, reward, per-reward means, ETA (stderr)."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.t0 = None
        self.step0 = 0

    def on_train_begin(self, args, state, control, **kwargs):
        self.t0, self.step0 = time.monotonic(), state.global_step

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not state.is_world_process_zero or not logs or "reward" not in logs:
            return
        done = state.global_step - self.step0
        elapsed = time.monotonic() - (self.t0 or time.monotonic())
        eta = elapsed / done * (state.max_steps - state.global_step) if done else float("nan")
        parts = [f"step {state.global_step}/{state.max_steps}", f"reward {logs['reward']:.3f}"]
        parts += [f"{k.split('/')[1]} {v:.3f}" for k, v in logs.items() if k.startswith("rewards/") and k.endswith("/mean")]
        parts.append(f"ETA {eta:.0f}s")
        self.stream.write("  " + " | ".join(parts) + "\n")
        self.stream.flush()
