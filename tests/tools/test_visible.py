"""Tools made visible: ``validate`` prints the tools the model will be offered (name, source, arguments from the
schema it is shown), the environment's state and the template check; an unknown tool is named against the person's
file with the closest name; ``preflight`` reports how often samples called a tool and says to warm up when they
(almost) never do; ``diagnose`` prints a tool run's calls a rollout and failing calls."""

from __future__ import annotations

import json
import subprocess

import pytest

from grpo_rlvr.diagnosis import diagnose
from grpo_rlvr.errors import ConfigError
from grpo_rlvr.preflight.success_rate import PreflightResult, _verdict, tool_use
from grpo_rlvr.tools.loading import load_tools
from histories import HEALTHY, history, write_state
from paths import CLI
from tool_briefs import TOOLS_PY, tool_brief


def test_validate_shows_the_tools_offered_their_arguments_the_state_and_the_template_check(workspace, tiny_model_dir):
    p = tool_brief(workspace, tiny_model_dir, tools={"functions": ["tools.py:add"], "environment": "envs.py:Abacus",
                                                     "python": {"timeout_s": 5}})
    out = subprocess.run([*CLI, "validate", str(p)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    said = out.stdout
    assert "  tools        add(a: integer, b: integer)  ← tools.py:add\n" in said, said
    assert "push(n: integer)  ← envs.py:Abacus (a method; one instance per rollout)" in said, said
    assert "python(code: string)  ← built in: the code reward's sandbox (timeout_s 5, memory_mb 512)" in said, said
    assert "environment state: Abacus.state (what rewards read; stored with each trajectory)" in said, said
    assert "chat template: TRL's checks pass" in said, said
    js = json.loads(subprocess.run([*CLI, "validate", str(p), "--json"], capture_output=True, text=True,
                                   timeout=300).stdout)
    assert [t["name"] for t in js["tools"]["offered"]] == ["add", "push", "python"]


@pytest.mark.parametrize("ref,said", [
    ("abacus_tools.py:ad", "no function 'ad' in {file} (did you mean 'add'?)"),
    ("abacus_tools:ad", "no function 'ad' in module abacus_tools ({file}) (did you mean 'add'?)")])
def test_an_unknown_tool_is_named_against_the_persons_file(tmp_path, monkeypatch, ref, said):
    (tmp_path / "abacus_tools.py").write_text(TOOLS_PY)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigError) as e:
        load_tools({"functions": [ref]}, tmp_path)
    text = str(e.value)
    assert said.format(file=tmp_path / "abacus_tools.py") in text and "grpo_rlvr_user" not in text, text


def result(calls: list[int]) -> PreflightResult:
    r = PreflightResult("", 4, 2, 0.25, 0.5, 0.5, 0.0, 0.5, 0.5, 0.0, 0.0, 30, 20.0, None, tool_use=tool_use(calls))
    r.verdict, r.evidence = _verdict(r, {"temperature": 1.0, "max_completion_length": 64})
    return r


def test_preflight_reports_the_tool_call_rate_and_says_to_warm_up_when_none():
    none, some = result([0] * 8), result([0, 1, 2, 0, 1, 0, 0, 3])
    assert "tool calls: 0% of samples called a tool (0.00 calls a sample)" in none.format()
    assert any("warm it up on demonstrations that call the tools" in e for e in none.evidence), none.evidence
    assert "tool calls: 50% of samples called a tool (0.88 calls a sample)" in some.format()
    assert not any("warm it up" in e for e in some.evidence)


def test_diagnose_prints_a_tool_runs_calls_and_failures(tmp_path):
    (tmp_path / "brief.lock.json").write_text(json.dumps({"resolved": {"tools": {"functions": ["tools.py:add"]}}}))
    recs = history(**HEALTHY, tools__call_frequency=lambda i: 0.5 + 0.02 * i,
                   tools__failure_frequency=lambda i: 0.1)
    res = diagnose(write_state(tmp_path, recs), out_dir=tmp_path)
    assert ("  tools (tools.py:add): calls a rollout 0.5 → 0.88; share of calls that failed 0.1 → 0.1"
            in res.format()), res.format()
    assert res.data["tools"]["calls_per_rollout"] == {"first": 0.5, "last": 0.88}
    (tmp_path / "plain").mkdir()   # no lock naming tools, no tool metrics: no tools line
    plain = diagnose(write_state(tmp_path / "plain", history(**HEALTHY)), out_dir=tmp_path / "plain")
    assert plain.data["tools"] is None and "tools" not in plain.format().replace("tools/", "")
