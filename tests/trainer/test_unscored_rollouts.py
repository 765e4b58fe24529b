"""Samples no reward scored are said in our words, once per cause: TRL's own warning (a dump of the sample's
columns with object reprs, printed once per batch) is dropped from TRL's logger while TRL scores, and nothing else
TRL logs is. The whole road (an environment whose reset fails, trained): tests/tools/test_build.py."""

from __future__ import annotations

import io
import logging

from grpo_rlvr.trainer.unscored_rollouts import Unscored, quiet_trl


def test_trls_all_none_warning_is_dropped_while_scoring_and_nothing_else(caplog):
    from accelerate import PartialState
    from trl import GRPOTrainer
    from trl.trainer import grpo_trainer

    PartialState()   # TRL's logger is accelerate's, which asks whether this is the main process
    caplog.set_level(logging.WARNING)
    with quiet_trl(GRPOTrainer.__module__):
        grpo_trainer.logger.warning("All reward functions returned None for the following kwargs:\n{'environments': "
                                    "<grpo_rlvr_user_reward_x.Ledger object at 0x7f>}\nPlease ensure ...")
        grpo_trainer.logger.warning("another warning of TRL's")
    grpo_trainer.logger.warning("All reward functions returned None, outside the scoring")
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 2 and said[0].endswith("another warning of TRL's"), said
    assert said[1].endswith("All reward functions returned None, outside the scoring")
    assert not logging.getLogger(GRPOTrainer.__module__).filters


def test_each_cause_is_said_once_in_one_line_with_the_first_row():
    out, said = io.StringIO(), Unscored()
    why = "environment reset failed: LookupError: no table '7' in ledger.db (at /w/ledger.py:20 in open_table)"
    said.say("in step 1", 8, [("dataset row 3 (/w/data/train.jsonl:4)", why)] * 8, stream=out)
    said.say("in step 2", 8, [("dataset row 5 (/w/data/train.jsonl:6)", why)] * 8, stream=out)
    said.say("in step 3", 8, [(None, None)] * 2, stream=out)
    lines = out.getvalue().splitlines()
    assert lines == [
        "  not scored: 8 of 8 samples in step 1: their environment could not start or a tool was unavailable (first "
        f"on dataset row 3 (/w/data/train.jsonl:4): {why}); left out of their steps (no reward), counted as "
        "tools/unavailable; said once",
        "  not scored: 2 of 8 samples in step 3: every reward returned None for them (first); left out of their "
        "steps (no reward); said once"]
