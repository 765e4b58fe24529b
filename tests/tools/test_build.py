"""The brief's tools reach TRL's trainer on every road, bound by the review: an environment that fails on a share
of rollouts leaves those rollouts out of the advantage (read back from TRL's logged completions and metrics), and a
tool edited after the review is refused by the gate, by `grpo-rlvr train` and by the rendered train.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from artifacts import make_artifact
from grpo_rlvr.gate.check import check_gate
from grpo_rlvr.run.render import render
from paths import CLI
from tool_briefs import TOOLS_PY, tool_brief


def test_a_tool_edited_after_the_review_is_refused_everywhere(workspace, tiny_model_dir):
    p = tool_brief(workspace, tiny_model_dir)
    art = make_artifact(p, workspace / "out" / "inspection")
    assert check_gate(art).passed
    manifest = json.loads((art / "manifest.json").read_text())
    assert list(manifest["tools"]["sources"]) == ["tools.py"]
    assert manifest["bound_settings"]["tools"]["functions"] == ["tools.py:add"]
    run = render(p).dir
    assert "TOOLS = {'functions': ['tools.py:add']" in (run / "train.py").read_text()
    (workspace / "tools.py").write_text(TOOLS_PY.replace("return a + b", "return a + b + 1"))
    want = "tools: their code or their folder's files changed since the inspection in tools.py"
    gate = subprocess.run([*CLI, "gate", str(art)], capture_output=True, text=True, timeout=300)
    assert gate.returncode == 1 and want in gate.stdout + gate.stderr, gate.stdout + gate.stderr
    launched = subprocess.run([*CLI, "train", str(run)], capture_output=True, text=True, timeout=300)
    assert launched.returncode == 1 and want in launched.stdout + launched.stderr, launched.stderr[-2000:]
    itself = subprocess.run([sys.executable, "train.py"], cwd=run, capture_output=True, text=True, timeout=300)
    assert itself.returncode == 1 and want in itself.stderr, itself.stderr[-2000:]


def test_a_tool_set_changed_after_the_review_fails_rule_4(workspace, tiny_model_dir):
    p = tool_brief(workspace, tiny_model_dir)
    art = make_artifact(p, workspace / "out" / "inspection")
    tool_brief(workspace, tiny_model_dir, tools={"functions": ["tools.py:add"], "python": True})
    result = check_gate(art, brief=p)
    assert not result.passed and "tools changed since the review" in result.format(), result.format()


@pytest.mark.e2e
def test_an_environment_failing_on_a_share_of_rollouts_leaves_them_out_of_the_advantage(workspace, tiny_model_dir):
    """The environment's reset fails on rows whose answer is even (a service down, not the model's doing). TRL is
    given None from every reward for those rollouts: their advantage is 0 and their rewards are left out of the
    group statistics, and tools/unavailable counts them."""
    import pyarrow.parquet as pq

    from grpo_rlvr.run.launch import train

    p = tool_brief(workspace, tiny_model_dir, tools={"environment": "envs.py:Abacus"},
                   grpo={"log_completions": True, "logging_steps": 1, "save_strategy": "no"})
    make_artifact(p, workspace / "out" / "inspection")
    run = render(p).dir
    with (workspace / "train.log").open("w") as fh:
        assert train(run, max_steps=2, stream=fh).ok
    # TRL's own warning (a dump of the sample's columns with the environment's repr) is said in our words, once
    said = (workspace / "train.log").read_text()
    assert "All reward functions returned None" not in said and " object at 0x" not in said, said[-3000:]
    (line,) = [x for x in said.splitlines() if x.startswith("  not scored: ")]
    assert re.fullmatch(r"  not scored: \d+ of \d+ samples in step 1: their environment could not start or a tool was "
                        r"unavailable \(first on dataset row \d+ \(.*train\.jsonl:\d+\): environment reset failed: "
                        r"ConnectionError: the abacus service is down \(at .*envs\.py:\d+ in reset\)\); left out of "
                        r"their steps \(no reward\), counted as tools/unavailable; said once", line), line
    rows = [r for f in sorted((run / "output" / "completions").glob("*.parquet")) for r in pq.read_table(f).to_pylist()]
    assert rows
    failed = [r for r in rows if sum(map(int, re.findall(r"\d", str(r["prompt"])))) % 2 == 0]
    served = [r for r in rows if r not in failed]
    assert failed and served
    # TRL logs an unscored reward as NaN, which parquet reads back as null
    assert all(r["advantage"] == 0.0 and r["exact_match"] is None and r["format"] is None for r in failed)
    assert all(r["exact_match"] is not None and r["format"] is not None for r in served)
    metrics = [json.loads(line) for line in (run / "output" / "metrics.jsonl").read_text().splitlines()]
    unavailable = [m["tools/unavailable"] for m in metrics if "tools/unavailable" in m]
    assert unavailable and max(unavailable) > 0
