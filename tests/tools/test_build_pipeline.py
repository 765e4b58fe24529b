"""A tool-use brief through every phase on CPU: validate, preflight and inspect sample through TRL's tool loop on
the rollout road, the artifact stores each trajectory whole, the review binds it, the gate passes, training runs
with the same tools, and diagnose reads the run. The model is the warmed tiny model given a template that renders
and parses tool calls (a stand-in for an instruct model's)."""

from __future__ import annotations

import json
import subprocess

import pytest

from artifacts import review_all
from paths import CLI
from tool_briefs import tool_brief, tool_model


def cli(*args, timeout=900):
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, timeout=timeout)


@pytest.mark.e2e
def test_a_tool_brief_goes_through_every_phase(workspace, warm_model_dir):
    tool_model(warm_model_dir, workspace / "model-tools")
    p = tool_brief(workspace, warm_model_dir, tools={"functions": ["tools.py:add"], "environment": "envs.py:Abacus"},
                   inspection={"samples": 50, "prompts": 25}, preflight={"prompts": 16},
                   grpo={"logging_steps": 1})   # a record a step: diagnose reads the tool metrics off them
    (workspace / "envs.py").write_text((workspace / "envs.py").read_text().replace(
        'raise ConnectionError("the abacus service is down")', "pass"))   # a healthy environment here
    assert cli("validate", p).returncode == 0
    pre = cli("preflight", p, "--json")
    assert pre.returncode in (0, 1), pre.stderr[-3000:]
    assert json.loads(pre.stdout)["engine"]["name"] == "transformers"
    assert 0.0 <= json.loads(pre.stdout)["tool_use"]["rate"] <= 1.0   # how often the samples called a tool
    out = workspace / "out" / "inspection"
    ins = cli("inspect", p)
    assert ins.returncode == 0, ins.stderr[-3000:]
    samples = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert all(isinstance(s["completion"], list) and s["completion_ids"] and isinstance(s["environment_state"], dict)
               and isinstance(s["environment_state"]["total"], int) for s in samples)
    manifest = json.loads((out / "manifest.json").read_text())
    assert sorted(manifest["tools"]["sources"]) == ["envs.py", "tools.py"]
    review_all(out)
    gate = cli("gate", out)
    assert gate.returncode == 0, gate.stdout + gate.stderr
    run = workspace / "out" / "run"
    assert cli("render", p).returncode == 0
    trained = cli("train", run, "--max-steps", "2", timeout=1800)
    assert trained.returncode == 0, trained.stderr[-3000:]
    metrics = [json.loads(line) for line in (run / "output" / "metrics.jsonl").read_text().splitlines()]
    assert any("tools/call_frequency" in m for m in metrics), "TRL ran its tool loop in training"
    diag = cli("diagnose", run, "--json")
    assert diag.returncode in (0, 1) and "findings" in json.loads(diag.stdout), diag.stderr[-2000:]
    assert json.loads(diag.stdout)["tools"]["calls_per_rollout"] is not None   # the tool run's calls, first → last
