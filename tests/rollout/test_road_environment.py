"""An environment the rollout road cannot start: its ``reset`` raises. Preflight and inspect roll it out exactly as
training does (TRL's own loop, the same guarded reset) and refuse, exit 2, naming the exception, where it was
raised and the first row it failed on as training names rows (``FILE:LINE``), instead of scoring samples that
training would leave unscored. (Training's own handling of a reset that fails on some rows:
tests/tools/test_build.py.)"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tool_briefs import tool_brief

CLI = [sys.executable, "-m", "grpo_rlvr"]

BROKEN_ENV = '''
class Ledger:
    """A ledger whose database is not there."""

    def reset(self, **row):
        self.rows = open_table(row["answer"])

    @property
    def state(self):
        return {"rows": 0}

    def read(self, n: int) -> int:
        """Read an entry.

        Args:
            n: the entry.
        """
        return n


def open_table(name):
    raise LookupError(f"no table {name!r} in ledger.db")
'''


@pytest.mark.parametrize("command", [["preflight", "--prompts", "4", "--k", "8"], ["inspect"]])
def test_an_environment_whose_reset_raises_is_refused_before_anything_is_scored(workspace, tiny_model_dir, command):
    p = tool_brief(workspace, tiny_model_dir, tools={"environment": "ledger.py:Ledger"})
    (workspace / "ledger.py").write_text(BROKEN_ENV)
    out = subprocess.run([*CLI, command[0], str(p), *command[1:]], capture_output=True, text=True, timeout=600,
                         cwd=workspace)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr[-3000:]
    err = " ".join(out.stderr.split())
    assert re.search(r"Error: tools\.environment 'ledger\.py:Ledger': reset\(\*\*row\) raised in (\d+) of \1 rollouts "
                     r"so far", err), err
    assert f"(first on the row {workspace / 'data' / 'train.jsonl'}:" in err
    assert "LookupError: no table " in err and f"in ledger.db (at {workspace / 'ledger.py'}:" in err
    assert "in open_table)" in err and "fix reset so it starts for every row of the data" in err
    assert not (workspace / "out" / "inspection").exists()


def test_a_progress_line_with_no_scored_sample_prints_n_a():
    """A step where every rollout was left unscored: TRL logs the reward as None (NaN in places); the progress
    line says n/a instead of crashing the run (it once raised TypeError in the format)."""
    import io
    from types import SimpleNamespace

    from grpo_rlvr.trainer.training_callbacks import ProgressLine

    out = io.StringIO()
    line, state = ProgressLine(out), SimpleNamespace(is_world_process_zero=True, global_step=1, max_steps=10)
    line.on_train_begin(None, state, None)
    line.on_log(None, state, None, logs={"reward": None, "rewards/exact_match/mean": float("nan"),
                                         "unscorable/frac": 1.0})
    line.on_log(None, state, None, logs={"eval_reward": None, "eval_rewards/exact_match/mean": None})
    assert out.getvalue() == ("  step 1/10 | reward n/a | exact_match n/a | ETA n/a | unscored 1.000\n"
                              "  held-out at step 1 | reward n/a | exact_match n/a\n")
