"""Trainer callbacks used by the rendered ``train.py``: metrics to ``metrics.jsonl`` as they are logged, a live
progress line (step / total, reward, per-reward means, ETA), held-out completions kept apart from the training
ones, Ctrl-C as a stop with a checkpoint, and each saved checkpoint recorded in the run's checkpoint ledger.
Imported only inside training."""

from __future__ import annotations

import json
import math
import signal
import sys
import threading
import time
from pathlib import Path

from transformers import TrainerCallback

from grpo_rlvr.records.checked_run import RunCheck


class MetricsJsonl(TrainerCallback):
    """Append every log record (with its step) to a JSONL file, flushed at once: a crash loses nothing logged."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def on_train_begin(self, args, state, control, **kwargs):
        if state.is_world_process_zero and state.max_steps:   # `grpo-rlvr watch` reads the steps this start runs to
            from grpo_rlvr.records.watch_log import write_plan

            write_plan(self.path.parent, state.max_steps)

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


class CheckpointLedger(TrainerCallback):
    """Records each checkpoint the trainer saves (on the main process) in ``output``'s ledger, proven by the start
    ``check`` carries (``records.checkpoint_ledger.record``)."""

    def __init__(self, output: Path, check: RunCheck | None):
        self.output, self.check = Path(output), check

    def on_save(self, args, state, control, **kwargs):
        from grpo_rlvr.records.checkpoint_ledger import record

        _every_rank_saved()
        if state.is_world_process_zero:
            ckpt = Path(args.output_dir) / f"checkpoint-{state.global_step}"
            if ckpt.is_dir():
                record(self.output, ckpt, self.check)


def _every_rank_saved() -> None:
    """Wait until every rank has returned from its part of the save (called from ``on_save``, which each rank
    reaches after its own writes): rank 1's random state may land after rank 0's ``on_save`` otherwise."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
        dist.barrier()


def _num(v) -> str:
    """A logged value for the progress line: ``n/a`` where TRL logged None or NaN (a step no reward scored)."""
    return f"{v:.3f}" if isinstance(v, (int, float)) and math.isfinite(v) else "n/a"


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
            parts = [f"held-out at step {state.global_step}", f"reward {_num(r)}"]
            parts += [f"{k.split('/')[1]} {_num(v)}" for k, v in logs.items()
                      if k.startswith("eval_rewards/") and k.endswith("/mean")]
            self.stream.write("  " + " | ".join(parts) + "\n")
            self.stream.flush()
            return
        if "reward" not in logs:
            return
        done = state.global_step - self.step0
        elapsed = time.monotonic() - (self.t0 or time.monotonic())
        eta = elapsed / done * (state.max_steps - state.global_step) if done else float("nan")
        parts = [f"step {state.global_step}/{state.max_steps}", f"reward {_num(logs['reward'])}"]
        parts += [f"{k.split('/')[1]} {_num(v)}" for k, v in logs.items() if k.startswith("rewards/") and k.endswith("/mean")]
        parts.append(f"ETA {eta:.0f}s" if math.isfinite(eta) else "ETA n/a")
        if isinstance(logs.get("unscorable/frac"), (int, float)) and logs["unscorable/frac"] > 0:
            parts.append(f"unscored {_num(logs['unscorable/frac'])}")   # left out: no reward could score them
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
    ``held_out_buffer`` gives each evaluation its own buffer, so the summary holds training completions.
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


class StoppedByUser(KeyboardInterrupt):
    """Raised out of ``trainer.train()`` once a Ctrl-C's checkpoint is saved; ``checkpoint`` names it (None when
    the run saves none). ``crash_record.recorded_crash`` records it as a stop, with the resume command."""

    def __init__(self, checkpoint: str | None):
        super().__init__(checkpoint)
        self.checkpoint = checkpoint


class StopOnCtrlC(TrainerCallback):
    """The first Ctrl-C (SIGINT) ends the run at the end of the step it interrupts, with a checkpoint saved there
    (none when the run saves none: an unreviewed smoke test), then raises :class:`StoppedByUser`; a second Ctrl-C
    stops at once (KeyboardInterrupt), without one. Listed after the checkpoint ledger, whose ``on_save`` records
    the checkpoint first. One process only: under torchrun or accelerate launch the launcher stops its processes
    itself (Python's own Ctrl-C stays there), since one rank alone must not leave the step."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.requested = False
        self.saves = True
        self._previous = None

    def on_train_begin(self, args, state, control, **kwargs):
        self.saves = args.save_strategy != "no"
        if args.world_size == 1 and threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._interrupted)

    def _interrupted(self, signum, frame):
        if self.requested:   # the second Ctrl-C: now
            self._restore()
            raise KeyboardInterrupt
        self.requested = True
        self.stream.write("\ntrain.py: Ctrl-C: stopping at the end of this step, "
                          + ("with a checkpoint (Ctrl-C again stops at once, without one)\n" if self.saves else
                             "without a checkpoint: this run saves none (Ctrl-C again stops at once)\n"))
        self.stream.flush()

    def _restore(self) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None

    def on_step_end(self, args, state, control, **kwargs):
        if self.requested:
            control.should_training_stop = True
            if args.save_strategy == "no":
                self._restore()
                raise StoppedByUser(None)
            control.should_save = True

    def on_save(self, args, state, control, **kwargs):
        if self.requested:
            self._restore()
            raise StoppedByUser(f"checkpoint-{state.global_step}")

    def on_train_end(self, args, state, control, **kwargs):
        self._restore()


def resuming_line(checkpoint: str | Path) -> str:
    """What a resumed training says first: the checkpoint and the step it continues from (``trainer_state.json``),
    and that transformers' "missing keys" warning about a tied ``lm_head.weight`` is expected."""
    try:
        step = json.loads((Path(checkpoint) / "trainer_state.json").read_text(encoding="utf-8")).get("global_step")
    except (OSError, ValueError, AttributeError):
        step = None
    at = f" at step {step}" if isinstance(step, int) else ""
    return (f"train.py: resuming from {checkpoint}{at} (weights, optimizer, scheduler, random state; a 'missing "
            "keys' warning naming lm_head.weight is a model whose output layer shares the input embedding's weights)")
