"""Scoring outside training names a bad row as training names it (``FILE:LINE``, from ``dataset.rows.load_rows``):
a user reward that raises on a data row, and a built-in that cannot read one, in preflight, inspect and score."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from grpo_rlvr.dataset.rows import DataRow
from grpo_rlvr.errors import BadColumn, RewardError
from grpo_rlvr.rewards import build_reward
from grpo_rlvr.rollout.scoring import score_trajectories
from grpo_rlvr.rollout.trajectory import Trajectory

RAISES_ON_A_ROW = """\
def score(completions, answer, **kwargs):
    return [1.0 if c.strip() == str(int(a)) else 0.0 for c, a in zip(completions, answer)]
"""


def rows(answers):
    out = []
    for i, a in enumerate(answers):
        row = DataRow({"prompt": "q", "answer": a})
        row.source = f"/d/train.jsonl:{i + 3}"
        out.append(row)
    return out


def trajectories(n):
    return [Trajectory("q", "12", (1,), (2,)) for _ in range(n)]


def test_a_user_reward_raising_on_a_row_names_the_row(tmp_path):
    (tmp_path / "mine.py").write_text(RAISES_ON_A_ROW)
    r = build_reward(str(tmp_path / "mine.py") + ":score", base_dir=tmp_path, kind="correctness")
    with pytest.raises(RewardError) as e:
        score_trajectories([r], [1.0], trajectories(4), rows(["12", "x7", "12", "y8"]))
    said = str(e.value)
    assert said.startswith(f"reward '{r.name}' raised on sample 1 on the data row /d/train.jsonl:4 (2 of 4 samples; "
                           "rows: /d/train.jsonl:4, /d/train.jsonl:6)"), said
    assert "ValueError" in said and "If the row is at fault" in said and "fix or drop the row" in said


def test_a_built_in_that_cannot_read_a_row_names_it():
    r = build_reward("exact_match", {"require_format": False})
    with pytest.raises(BadColumn, match="^data row /d/train.jsonl:5: reward 'exact_match': the dataset column "
                                        "'answer' holds no answer"):
        score_trajectories([r], [1.0], trajectories(3), rows(["12", "12", "  "]))


def test_score_names_the_input_line(tmp_path):
    f = tmp_path / "in.jsonl"
    f.write_text("".join(json.dumps({"completion": "12", "answer": a}) + "\n\n" for a in ("12", "", "12")))
    out = subprocess.run([sys.executable, "-m", "grpo_rlvr", "score", "--reward", "exact_match", "--option",
                          "require_format=false", "--input", str(f)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and f"Error: data row {f}:3: reward 'exact_match'" in out.stderr, out.stderr
