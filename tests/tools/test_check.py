"""TRL's own checks of a tokenizer for its tool loop, said before anything samples."""

from __future__ import annotations

import subprocess

from grpo_rlvr.tools.check import template_problems
from paths import CLI
from tool_briefs import tool_brief, tool_model


def test_the_tiny_models_own_template_cannot_render_a_call(tiny_model_dir):
    from transformers import AutoTokenizer

    [problem] = template_problems(AutoTokenizer.from_pretrained(tiny_model_dir))
    assert "cannot render a tool call and its reply" in problem


def test_a_template_that_renders_and_parses_calls_passes(tiny_model_dir, tmp_path):
    from transformers import AutoTokenizer

    assert template_problems(AutoTokenizer.from_pretrained(tool_model(tiny_model_dir, tmp_path / "m"))) == []


def test_validate_refuses_tools_on_a_model_that_cannot_call_them(workspace, tiny_model_dir):
    import yaml

    p = tool_brief(workspace, tiny_model_dir)
    data = yaml.safe_load(p.read_text())
    data["model"] = {"name_or_path": "./model"}   # the plain tiny model
    p.write_text(yaml.safe_dump(data))
    out = subprocess.run([*CLI, "validate", str(p)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 2 and "cannot render a tool call" in out.stderr and "Traceback" not in out.stderr
    ok = subprocess.run([*CLI, "validate", str(tool_brief(workspace, tiny_model_dir, name="ok.yaml")), "--json"],
                        capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0, ok.stderr
