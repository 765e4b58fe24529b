"""The arithmetic task's oracle, which reviews the demo's inspection in place of a person: it must judge every
sample as the brief's rewards score it where both are right, or the demo's gate fails on a draw that happens to
show such a sample (inspect draws with fresh randomness: any candidate can be shown)."""

from __future__ import annotations

import json

import pytest

from briefs import shipped_example_text
from grpo_rlvr.demo import arithmetic_task as task


@pytest.mark.parametrize("written, correct", [
    ("7", True), ("7.", True), ("7.0", True), ("07", True), ("+7", True), ("7..", True),
    ("8", False), ("7.5", False), ("7,", False), ("x7", False), ("", False), ("-7", False),
    ("7" + "0" * 60, False), ("7e99999999", False),
])
def test_the_oracle_reads_a_number_as_a_person_does(written, correct):
    assert task.oracle_judgement("3+4=", f"<answer>{written}</answer>") == (True, correct)


def test_the_oracle_agrees_with_the_shipped_rewards_on_every_spelling(workspace):
    """Every spelling above, scored by the shipped brief's real rewards through `grpo-rlvr score`: well-formed
    exactly when format pays 1, correct exactly when exact_match pays 1 (where the oracle reads a number)."""
    import subprocess
    import sys

    spellings = ["7", "7.", "7.0", "07", "+7", "8", "7.5", "7,", "x7", "", "-7", "<answer>7", "7</answer>"]
    rows = [{"prompt": "3+4=", "completion": f"<answer>{s}</answer>" if "answer" not in s else s, "answer": "7"}
            for s in spellings]
    (workspace / "in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (workspace / "brief.yaml").write_text(shipped_example_text())   # the demo's brief (workspace: its model, data)
    out = subprocess.run([sys.executable, "-m", "grpo_rlvr", "score", "--input", str(workspace / "in.jsonl"),
                          "--brief", str(workspace / "brief.yaml"), "--json"],
                         capture_output=True, text=True, cwd=workspace)
    assert out.returncode == 0, out.stderr
    scored = [json.loads(x) for x in out.stdout.splitlines() if x.strip()]
    assert len(scored) == len(rows)
    for row, s in zip(rows, scored, strict=True):
        well_formed, correct = task.oracle_judgement(row["prompt"], row["completion"])
        scores = {name: v["score"] for name, v in s["parts"].items()}
        assert well_formed == (scores["format"] == 1.0), (row, s)
        assert correct == (scores["exact_match"] == 1.0), (row, s)
