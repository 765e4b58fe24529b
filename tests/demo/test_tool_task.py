"""The tool demo's task, brief and oracle (``grpo-rlvr demo --task tool``), without training: its rows and
demonstrations are right by the oracle, the shipped brief (with its ``tools`` section) validates and renders
offline beside a tool-calling tiny model, and the oracle judges multi-turn completions as the brief's real rewards
score them while reading neither the reward code nor the tool's reply."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import resources

import pytest

from grpo_rlvr.demo import tool_task as task
from grpo_rlvr.messages import final_text

CLI = [sys.executable, "-m", "grpo_rlvr"]


def _called(a: int, b: int, reply: str, answer: str) -> list[dict]:
    """A completion that calls add(a, b), reads ``reply`` back and answers ``answer``."""
    return [{"role": "assistant", "content": "",
             "tool_calls": [{"type": "function", "function": {"name": "add", "arguments": {"a": a, "b": b}}}]},
            {"role": "tool", "name": "add", "content": reply},
            {"role": "assistant", "content": answer}]


# (completion, well_formed, correct) for the prompt "123+456="
JUDGED = [
    (_called(123, 456, "579", "<answer>579</answer>"), True, True),
    ([{"role": "assistant", "content": "<answer>579</answer>"}], True, True),    # right without the tool
    ([{"role": "assistant", "content": "<answer>578</answer>"}], True, False),
    (_called(123, 456, "579", "<answer>597</answer>"), True, False),            # miscopied the reply
    (_called(123, 465, "588", "<answer>588</answer>"), True, False),            # miscopied an operand
    (_called(123, 456, "600", "<answer>600</answer>"), True, False),            # a wrong reply is not the sum
    (_called(123, 456, "579", "<answer>579</answer>>"), False, False),          # text after the tag
    (_called(123, 456, "579", "<answer>579.</answer>"), True, True),            # a full stop ends the sentence
    (_called(123, 456, "579", "<answer> 0579 </answer>"), True, True),
    (_called(123, 456, "579", "<answer>579.5</answer>"), True, False),
    (_called(123, 456, "579", "<answer>579,</answer>"), True, False),
    (_called(123, 456, "579", "579"), False, False),                            # no tag
    (_called(123, 456, "579", "<answer>579</answer><answer>579</answer>"), False, False),
    ([{"role": "assistant", "content": "",
       "tool_calls": [{"type": "function", "function": {"name": "add", "arguments": {"a": 123, "b": 456}}}]}],
     False, False),                                                             # called, never answered
]


def test_rows_and_their_demonstrations_are_right_by_the_oracle():
    rows = task.make_rows(50, seed=3)
    assert rows == task.make_rows(50, seed=3) and len({r["prompt"][0]["content"] for r in rows}) > 40
    demos = task.demonstrations(rows, seed=0)
    called = [d for d in demos if any(m.get("tool_calls") for m in d)]
    assert 0 < len(called) < len(demos)                                # some call the tool, some answer directly
    for row, conv in zip(rows, demos, strict=True):
        assert conv[: len(row["prompt"])] == row["prompt"]
        assert task.oracle_judgement(row["prompt"][0]["content"], final_text(conv[len(row["prompt"]):])) \
            == (True, True)


@pytest.fixture(scope="module")
def tool_folder(tmp_path_factory):
    """The shipped tool brief beside an untrained tiny model with the tool-calling format, and rows, as the demo
    lays them out."""
    from grpo_rlvr.demo import tiny_model, tool_chat
    from grpo_rlvr.files import write_jsonl_atomic

    d = tmp_path_factory.mktemp("tool")
    (d / "brief.yaml").write_text(resources.files("grpo_rlvr.examples.tool").joinpath("brief.yaml").read_text())
    tok = tool_chat.build_tokenizer()
    tiny_model.save_pretrained(tiny_model.build_model(tok, seed=0), tok, d / "model", {"seed": 0})
    write_jsonl_atomic(d / "data" / "train.jsonl", task.make_rows(100, seed=0))
    return d


def test_the_shipped_tool_brief_validates_and_renders_offline(tool_folder):
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    v = subprocess.run([*CLI, "validate", "brief.yaml", "--json"], cwd=tool_folder, capture_output=True, text=True,
                       env=env)
    assert v.returncode == 0, v.stdout[-2000:] + v.stderr[-2000:]
    r = subprocess.run([*CLI, "render", "brief.yaml", "--out", str(tool_folder / "run"), "--json"], cwd=tool_folder,
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    rendered = "".join(p.read_text() for p in (tool_folder / "run").iterdir() if p.is_file())
    assert "grpo_rlvr.examples.tool.tools:add" in rendered    # the run passes the tool to TRL
    assert "max_completion_length: 48" in (tool_folder / "run" / "grpo_config.yaml").read_text()


def test_a_brief_whose_model_cannot_call_tools_is_refused_with_the_fix(tool_folder, tmp_path):
    """The same brief beside the tiny model's plain chat format (no tool calls): exit 2, naming tools and the fix."""
    import shutil

    from grpo_rlvr.demo import tiny_model

    shutil.copytree(tool_folder / "data", tmp_path / "data")
    shutil.copy(tool_folder / "brief.yaml", tmp_path / "brief.yaml")
    tok = tiny_model.build_tokenizer()
    tiny_model.save_pretrained(tiny_model.build_model(tok, seed=0), tok, tmp_path / "model", {"seed": 0})
    v = subprocess.run([*CLI, "validate", "brief.yaml"], cwd=tmp_path, capture_output=True, text=True,
                       env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert v.returncode == 2, v.stdout[-2000:] + v.stderr[-2000:]
    assert "tools:" in v.stdout + v.stderr and "chat template" in v.stdout + v.stderr


def test_the_oracle_agrees_with_the_briefs_rewards_run_for_real(tool_folder):
    """The shipped brief's rewards (format, exact_match on the last assistant message) score each multi-turn
    completion as the oracle judges it; the oracle recomputes the sum from the prompt, so a wrong reply from the
    tool is wrong for both."""
    from grpo_rlvr.brief import load_brief
    from grpo_rlvr.rewards import combine, from_brief

    brief = load_brief(tool_folder / "brief.yaml")
    completions = [c for c, _, _ in JUDGED]
    scored = combine(from_brief(brief), brief.reward_weights, completions, answer=["579"] * len(JUDGED))
    for (completion, well_formed, correct), s in zip(JUDGED, scored, strict=True):
        assert task.oracle_judgement("123+456=", final_text(completion)) == (well_formed, correct), completion
        assert (s["scores"]["format"].score == 1.0) == well_formed, (completion, s["scores"]["format"])
        assert (s["scores"]["exact_match"].score == 1.0) == correct, (completion, s["scores"]["exact_match"])


def test_the_oracle_reads_neither_the_reward_code_nor_the_tool():
    """The oracle's module imports no reward and calls no tool: its sum is its own arithmetic on the prompt."""
    import ast
    from pathlib import Path

    tree = ast.parse(Path(task.__file__).read_text())
    oracle = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "oracle_judgement")
    called = {n.func.id for n in ast.walk(oracle) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert "add" not in called
    imported = {a.name if isinstance(n, ast.Import) else n.module for n in ast.walk(tree)
                if isinstance(n, ast.Import | ast.ImportFrom) for a in n.names}
    assert not any(m.startswith("grpo_rlvr.rewards") for m in imported if m)
    assert task.oracle_judgement("123+456=", "<answer>579</answer>") == (True, True)
