"""Trainer callbacks used by the rendered ``train.py``: metrics to ``metrics.jsonl`` as they are logged, a live
progress line (step / total, reward, per-reward means, ETA), and held-out completions kept apart from the
training ones. Imported only inside training."""

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
        if not state.is_world_process_zero or not logs:
            return
        if "eval_reward" in logs:
            parts = [f"held-out at step {state.global_step}", f"reward {logs['eval_reward']:.3f}"]
            parts += [f"{k.split('/')[1]} {v:.3f}" for k, v in logs.items()
                      if k.startswith("eval_rewards/") and k.endswith("/mean") and isinstance(v, (int, float))]
            self.stream.write("  " + " | ".join(parts) + "\n")
            self.stream.flush()
            return
        if "reward" not in logs:
            return
        done = state.global_step - self.step0
        elapsed = time.monotonic() - (self.t0 or time.monotonic())
        eta = elapsed / done * (state.max_steps - state.global_step) if done else float("nan")
        parts = [f"step {state.global_step}/{state.max_steps}", f"reward {logs['reward']:.3f}"]
        parts += [f"{k.split('/')[1]} {v:.3f}" for k, v in logs.items() if k.startswith("rewards/") and k.endswith("/mean")]
        parts.append(f"ETA {eta:.0f}s")
        self.stream.write("  " + " | ".join(parts) + "\n")
        self.stream.flush()


class HeldOutCompletionsApart(TrainerCallback):
    """Keep held-out completions out of the training completions that `grpo-rlvr diagnose` reads.

    TRL 1.16 writes ``completions/completions_<step>.parquet`` from its buffer of recent completions on every
    log, so two logs at one step overwrite each other: an evaluation at a logging step replaces that step's
    training completions with held-out ones, and the end-of-training summary log writes the buffer once more
    (held-out completions again when the run ended on an evaluation). Within a step the order is: the training
    log writes its file; then each later log calls ``on_log`` here before TRL writes, and ends with
    ``on_evaluate`` (evaluations) or ``on_train_end`` (the summary). So the training file is set aside on those
    logs and put back afterwards; the evaluation's file goes to ``completions/eval/``, the summary's is dropped.
    """

    def __init__(self, completions_dir: Path):
        self.dir = Path(completions_dir)
        self.last_eval_step: int | None = None

    def _names(self, step: int) -> tuple[Path, Path, Path]:
        name = f"completions_{step:05d}.parquet"
        return self.dir / name, self.dir / f".{name}.train", self.dir / "eval" / name

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not state.is_world_process_zero or not logs:
            return
        if "train_runtime" in logs or any(k.startswith("eval_") for k in logs):
            current, aside, _ = self._names(state.global_step)
            if current.is_file() and not aside.exists():
                current.replace(aside)

    def _restore(self, step: int, dump: str) -> None:
        """After a non-training log at ``step``: file what it wrote (``dump``: "eval", "drop" or "keep") and
        put the step's training file back."""
        current, aside, held_out = self._names(step)
        if current.is_file() and (aside.is_file() or dump != "keep"):
            if dump == "eval":
                held_out.parent.mkdir(parents=True, exist_ok=True)
                current.replace(held_out)
            else:
                current.unlink()
        if aside.is_file():
            aside.replace(current)

    def on_evaluate(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            self.last_eval_step = state.global_step
            self._restore(state.global_step, "eval")

    def on_train_end(self, args, state, control, **kwargs):
        if not state.is_world_process_zero:
            return
        # The summary re-writes TRL's buffer. Without a training log at this step it is the only record of the
        # last steps' completions, worth keeping, unless an evaluation refilled the buffer since the last
        # generation (one generation per steps_per_generation steps).
        per_generation = getattr(args, "steps_per_generation", None) or 1
        refilled = self.last_eval_step is not None and state.global_step - self.last_eval_step < per_generation
        self._restore(state.global_step, "drop" if refilled else "keep")
