"""The callbacks inside the rendered train.py, driven in the order transformers 5.17's Trainer calls them and
TRL 1.16's GRPOTrainer writes completions (the e2e held-out run in tests/diagnosis/test_runs.py checks a real one)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from grpo_rlvr.trainer.training_callbacks import HeldOutCompletionsApart


def state(step):
    return SimpleNamespace(global_step=step, is_world_process_zero=True)


class FakeTrl:
    """TRL's habit: every log dumps its buffer of recent completions to completions_<step>.parquet."""

    def __init__(self, tmp_path):
        self.dir = tmp_path / "completions"
        self.dir.mkdir()
        self.cb = HeldOutCompletionsApart(self.dir)
        self.args = SimpleNamespace()

    def log(self, step, logs, buffer):
        self.cb.on_log(self.args, state(step), None, logs=logs)       # callbacks run inside super().log ...
        (self.dir / f"completions_{step:05d}.parquet").write_text(buffer)   # ... then TRL writes

    def evaluate(self, step):
        self.log(step, {"eval_reward": 0.1}, "held-out")
        self.cb.on_evaluate(self.args, state(step), None)

    def end(self, step, buffer):
        self.log(step, {"train_runtime": 1.0}, buffer)
        self.cb.on_train_end(self.args, state(step), None)


def test_evaluation_at_a_logging_step_keeps_both(tmp_path):
    t = FakeTrl(tmp_path)
    t.evaluate(0)                                          # eval_on_start
    t.log(10, {"reward": 0.3}, "train@10")
    t.evaluate(10)
    t.end(10, "held-out")                                   # the summary dumps the buffer once more
    assert (t.dir / "completions_00010.parquet").read_text() == "train@10"
    assert (t.dir / "eval" / "completions_00010.parquet").read_text() == "held-out"
    assert (t.dir / "eval" / "completions_00000.parquet").is_file()
    assert not (t.dir / "completions_00000.parquet").exists()
    assert sorted(p.name for p in t.dir.iterdir()) == ["completions_00010.parquet", "eval"]


def test_summary_dump_is_kept_when_it_is_the_only_record(tmp_path):
    t = FakeTrl(tmp_path)
    t.end(2, "train@2")                                     # max_steps below logging_steps: no training log
    assert (t.dir / "completions_00002.parquet").read_text() == "train@2"


def test_summary_after_an_evaluation_keeps_the_training_buffer(tmp_path):
    t = FakeTrl(tmp_path)
    t.log(5, {"reward": 0.3}, "train@5")
    t.evaluate(8)
    t.end(9, "train@9")          # held_out_buffer gave the evaluation its own buffer: this is training data
    assert (t.dir / "completions_00009.parquet").read_text() == "train@9"
    assert (t.dir / "completions_00005.parquet").read_text() == "train@5"


def test_each_evaluation_gets_an_empty_buffer_of_the_same_shape():
    from collections import defaultdict, deque

    from grpo_rlvr.trainer.held_out_buffer import empty_like

    logs = {"prompt": deque(["p"], maxlen=64), "rewards": defaultdict(lambda: deque(maxlen=64)),
            "advantages": deque([0.5], maxlen=64)}
    logs["rewards"]["format"].append(1.0)
    fresh = empty_like(logs)
    assert not fresh["prompt"] and fresh["prompt"].maxlen == 64 and not fresh["rewards"]
    assert fresh["rewards"]["format"].maxlen == 64                   # the factory is kept
    assert list(logs["prompt"]) == ["p"] and logs["rewards"]["format"][0] == 1.0   # the original is untouched


def test_the_first_ctrl_c_saves_at_the_end_of_the_step_and_the_second_stops_at_once(capsys):
    """StopOnCtrlC in a process of its own (one rank): the first SIGINT only asks; the step's end asks the trainer
    for a save and a stop, and the save raises StoppedByUser with the checkpoint; a second SIGINT raises at once."""
    import os
    import signal
    import time

    from transformers import TrainerControl

    from grpo_rlvr.trainer.training_callbacks import StopOnCtrlC, StoppedByUser

    before = signal.getsignal(signal.SIGINT)
    args, state = SimpleNamespace(world_size=1, save_strategy="steps"), SimpleNamespace(global_step=6)
    cb, control = StopOnCtrlC(), TrainerControl()
    cb.on_train_begin(args, state, control)
    try:
        os.kill(os.getpid(), signal.SIGINT)
        assert cb.requested and "stopping at the end of this step, with a checkpoint" in capsys.readouterr().err
        cb.on_step_end(args, state, control)
        assert control.should_save and control.should_training_stop
        with pytest.raises(StoppedByUser) as e:
            cb.on_save(args, state, control)
        assert e.value.checkpoint == "checkpoint-6" and signal.getsignal(signal.SIGINT) is before

        cb, control = StopOnCtrlC(), TrainerControl()
        cb.on_train_begin(args, state, control)
        os.kill(os.getpid(), signal.SIGINT)
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)   # the handler raises before this returns
        assert signal.getsignal(signal.SIGINT) is before

        smoke = SimpleNamespace(world_size=1, save_strategy="no")   # a run that saves nothing stops at the step end
        cb, control = StopOnCtrlC(), TrainerControl()
        cb.on_train_begin(smoke, state, control)
        capsys.readouterr()
        os.kill(os.getpid(), signal.SIGINT)
        said = capsys.readouterr().err   # it promises no checkpoint it will not save
        assert "without a checkpoint: this run saves none" in said and "with a checkpoint" not in said, said
        with pytest.raises(StoppedByUser) as e:
            cb.on_step_end(smoke, state, control)
        assert e.value.checkpoint is None
    finally:
        signal.signal(signal.SIGINT, before)


def test_several_processes_keep_pythons_own_ctrl_c():
    import signal

    from transformers import TrainerControl

    from grpo_rlvr.trainer.training_callbacks import StopOnCtrlC

    before = signal.getsignal(signal.SIGINT)
    StopOnCtrlC().on_train_begin(SimpleNamespace(world_size=2, save_strategy="steps"), None, TrainerControl())
    assert signal.getsignal(signal.SIGINT) is before


def test_a_resume_says_its_checkpoint_and_step(tmp_path):
    """What a resumed train.py prints first: the checkpoint and the step read from its trainer_state.json; a
    checkpoint without one is still named, without a step."""
    from grpo_rlvr.trainer.training_callbacks import resuming_line

    ckpt = tmp_path / "checkpoint-40"
    ckpt.mkdir()
    assert "at step" not in resuming_line(ckpt) and str(ckpt) in resuming_line(ckpt)
    (ckpt / "trainer_state.json").write_text('{"global_step": 40}')
    line = resuming_line(ckpt)
    assert line.startswith(f"train.py: resuming from {ckpt} at step 40 ") and "lm_head.weight" in line
