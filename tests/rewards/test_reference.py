"""The rewards' reference page (skills/grpo-rlvr-training/references/rewards.md) is the registry's,
and what it says holds: every param has a meaning, every example builds, every reason the rewards give is
listed, and ``score --list-params`` prints the same params."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from grpo_rlvr.rewards import REGISTRY, build_reward
from grpo_rlvr.rewards.reference import params_of, render_reference
from paths import REPO

PAGE = REPO / "skills" / "grpo-rlvr-training" / "references" / "rewards.md"


def test_the_page_is_the_registrys():
    assert PAGE.read_text(encoding="utf-8") == render_reference(), (
        f"{PAGE.relative_to(PAGE.parents[3])} is stale: run "
        f"`python -m grpo_rlvr.rewards.reference > {PAGE.relative_to(PAGE.parents[3])}`")


@pytest.mark.parametrize("name", REGISTRY)
def test_every_param_is_on_the_page_with_its_default(name):
    text = PAGE.read_text(encoding="utf-8").split(f"\n## {name}\n", 1)[1].split("\n## ", 1)[0]
    for p in params_of(name):
        assert f"| `{p.name}` | `{json.dumps(p.default, ensure_ascii=False)}` |" in text, p.name
    for col in REGISTRY[name].columns:
        assert col in [p.name for p in params_of(name)], f"{name}: column param {col} is not a param"
        assert f"- `{col}`" in text


@pytest.mark.parametrize("name", REGISTRY)
def test_every_example_builds(name):
    assert build_reward(name, REGISTRY[name].example).name == name


def _matches(reason: str, templates: tuple[str, ...]) -> bool:
    for t in templates:
        rx = ".+".join(re.escape(piece) for piece in re.split(r"\{[a-z_ ]+\}", t))  # {placeholder}: any text
        if re.fullmatch(rx, reason, re.S):
            return True
    return False


TOOL = {"name": "f", "arguments": {"a": 1, "b": "x"}}
CORPUS = {
    "format": (["<answer>1</answer>", "1", "<answer>1", "<answer>1</answer><answer>2</answer>", "x <answer>1</answer>",
                "<answer>1</answer> x", "</answer>1<answer>", "<answer>1</answer></answer>"], {}),
    "exact_match": (["<answer>7</answer>", "#### 8", "a\nb", "x <answer>7</answer>"], {"answer": ["7"] * 4}),
    "json_schema": (["{}", "nothing", '{"a": }', '{"a": "x"}', '{"a": 1, "a": 2}', '{"a": 1} more'],
                    {"schema": [{"properties": {"a": {"type": "integer"}}}] * 6}),
    "tool_call": (["none here", '{"x": 1}', '{"name": "g", "arguments": {}}', json.dumps(TOOL),
                   '{"name": "f", "arguments": {"a": 2}}', '{"name": "f", "arguments": "{a}"}',
                   '{"name": "f", "arguments": {"a": 1, "a": 1, "b": "x"}}', f"[{json.dumps(TOOL)}, {json.dumps(TOOL)}]",
                   "```json\n{\"name\": \n```"],
                  {"tool": [TOOL] * 9}),
    "length_penalty": (["<answer>1</answer>", "<answer>" + "1" * 40 + "</answer>"], {}),
}


@pytest.mark.parametrize("name", CORPUS)
def test_every_reason_given_is_listed(name):
    texts, columns = CORPUS[name]
    params = {"budget": 24, "unit": "chars", "reward": "format"} if name == "length_penalty" else {}
    for s in build_reward(name, params).explain(texts, **columns):
        assert _matches(s.reason, REGISTRY[name].reasons), f"{name}: reason {s.reason!r} is not on the page"
    extra = {"tag": "exact_match", "boxed": "exact_match"}
    for mode, reward in extra.items():
        for s in build_reward(reward, {"extract": mode}).explain(["a\nb"], answer=["1"]):
            assert _matches(s.reason, REGISTRY[reward].reasons), s.reason


def test_math_reasons_are_listed():
    got = build_reward("math", {"timeout_s": 1, "workers": 1}).explain(
        ["#### 3", "#### 4", "a\nb", "#### \\frac{", "\\boxed{2^{2^{2^{2^{2^{2^{99}}}}}}}", "#### 2 +", "#### x"],
        answer=["3", "3", "3", "3", "4", "2", "C"])
    for s in got:
        assert _matches(s.reason, REGISTRY["math"].reasons), s.reason


def test_score_lists_one_rewards_params():
    cmd = [sys.executable, "-m", "grpo_rlvr", "score", "--reward", "tool_call", "--list-params"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    for p in params_of("tool_call"):
        assert f"  {p.name} = {json.dumps(p.default)}" in out.stdout
    as_json = subprocess.run(cmd + ["--json"], capture_output=True, text=True, timeout=120)
    assert [p["name"] for p in json.loads(as_json.stdout)] == [p.name for p in params_of("tool_call")]
    bad = subprocess.run(cmd[:5] + ["nope", "--list-params"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "not a built-in reward" in bad.stderr and "Traceback" not in bad.stderr
    no_input = subprocess.run(cmd[:6], capture_output=True, text=True, timeout=120)
    assert no_input.returncode == 2 and "--input FILE.jsonl is required" in no_input.stderr
