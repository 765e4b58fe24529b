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
            r = logs["eval_reward"]
            parts = [f"held-out at step {state.global_step}",
                     f"reward {r:.3f}" if isinstance(r, (int, float)) else "reward n/a"]
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
    """Keep held-out completions out of the training completions files that `grpo-rlvr diagnose` reads.

    TRL 1.16 writes ``completions/completions_<step>.parquet`` on every log, so a second log at a step
    overwrites the first: an evaluation at a logging step would replace that step's training completions, and
    the end-of-training summary writes the buffer once more. Within a step the order is: the training log writes
    its file; each later log calls ``on_log`` here before TRL writes, and ends with ``on_evaluate``
    (evaluations) or ``on_train_end`` (the summary). So the training file is set aside on those logs and put
    back afterwards. The evaluation's file moves to ``completions/eval/``. The summary's file is a duplicate
    when the step had a training log (dropped), else the only record of the last steps' completions (kept):
    ``held_out_trainer`` gives each evaluation its own buffer, so the summary holds training completions.
    """

    def __init__(self, completions_dir: Path):
        self.dir = Path(completions_dir)

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

    def _put_back(self, step: int, move_new_to: Path | None) -> None:
        """After a non-training log at ``step``: move what it wrote to ``move_new_to`` (else the step's own
        training file replaces it), and put the training file back."""
        current, aside, _ = self._names(step)
        if move_new_to is not None and current.is_file():
            move_new_to.parent.mkdir(parents=True, exist_ok=True)
            current.replace(move_new_to)
        if aside.is_file():
            aside.replace(current)

    def on_evaluate(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            self._put_back(state.global_step, move_new_to=self._names(state.global_step)[2])

    def on_train_end(self, args, state, control, **kwargs):
        if state.is_world_process_zero:  # the step's own training file wins over the summary's copy
            self._put_back(state.global_step, move_new_to=None)
