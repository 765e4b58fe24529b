"""validate warns when vLLM's importance-sampling correction (on by default in TRL 1.16) meets truncated sampling
(top_p < 1, top_k > 0, min_p > 0, in grpo: or grpo.generation_kwargs): the correction is then biased (trl#6789)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml
from trl import GRPOConfig

from briefs import example_brief_text
from grpo_rlvr.brief.loader import load_brief
from grpo_rlvr.brief.sampling_bias import TRL_IS_CORRECTION_DEFAULT, truncated_sampling_warnings


def test_the_default_is_trls():
    fields = GRPOConfig.__dataclass_fields__
    assert fields["vllm_importance_sampling_correction"].default is TRL_IS_CORRECTION_DEFAULT is True
    assert (fields["top_p"].default, fields["top_k"].default, fields["min_p"].default) == (1.0, 0, None)


def gpu_brief(workspace, **grpo):
    data = yaml.safe_load(example_brief_text())
    data["hardware"] = {"accelerator": "gpu", "num_gpus": 1}
    data["grpo"].update(grpo)
    p = workspace / "gpu.yaml"
    p.write_text(yaml.safe_dump(data))
    return p


def bias_warnings(workspace, **grpo) -> list[str]:
    return [w for w in load_brief(gpu_brief(workspace, **grpo)).warnings if "trl#6789" in w]


@pytest.mark.parametrize("grpo,named", [
    ({"top_p": 0.9}, "grpo.top_p: 0.9"),
    ({"top_k": 50}, "grpo.top_k: 50"),
    ({"min_p": 0.05}, "grpo.min_p: 0.05"),
    ({"generation_kwargs": {"top_k": 20}}, "grpo.generation_kwargs.top_k: 20"),
    ({"top_p": 0.95, "generation_kwargs": {"min_p": 0.1}}, "grpo.top_p: 0.95, grpo.generation_kwargs.min_p: 0.1"),
])
def test_truncated_sampling_with_the_correction_on_is_named_with_the_fix(workspace, grpo, named):
    found = bias_warnings(workspace, **grpo)
    assert len(found) == 1 and found[0].startswith(named + ": truncated sampling"), found
    assert "biased" in found[0] and "vllm_importance_sampling_correction: false" in found[0]
    assert "top_p: 1.0, top_k: 0, min_p unset" in found[0]


@pytest.mark.parametrize("grpo", [{}, {"top_p": 1.0, "top_k": 0}, {"top_p": 0.9,
                                                                   "vllm_importance_sampling_correction": False},
                                  {"generation_kwargs": {"top_p": 1.0}, "min_p": 0.0}])
def test_no_warning_without_truncation_or_without_the_correction(workspace, grpo):
    assert bias_warnings(workspace, **grpo) == []


def test_no_warning_without_vllm():
    assert truncated_sampling_warnings({"use_vllm": False, "top_p": 0.5}) == []
    assert truncated_sampling_warnings({"use_vllm": True, "generation_kwargs": '{"top_k": 5}'})[0].startswith(
        "grpo.generation_kwargs.top_k: 5")   # TRL also takes generation_kwargs as a JSON string


def test_validate_prints_it(workspace):
    out = subprocess.run([sys.executable, "-m", "grpo_rlvr", "validate", str(gpu_brief(workspace, top_p=0.9)),
                          "--json"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr          # a warning, not a refusal
    report = json.loads(out.stdout)
    assert any("grpo.top_p: 0.9: truncated sampling" in w for w in report["warnings"]), report["warnings"]
