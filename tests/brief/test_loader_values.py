"""Values in a brief are checked for sense, not only shape, and every refusal names the field and the fix;
files that YAML itself cannot take (bad bytes, non-text keys, deep nesting, an alias bomb) are exit 2 with
`Error:`, never a traceback or a hang."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

from briefs import example_brief_text
from grpo_rlvr.brief import load_brief
from grpo_rlvr.errors import ConfigError
from hostile_yaml import BILLION_LAUGHS


def brief_with(workspace, grpo=None, hardware=None, text=None):
    data = yaml.safe_load(example_brief_text())
    data["grpo"].update(grpo or {})
    if hardware is not None:
        data["hardware"] = hardware
    p = workspace / "b.yaml"
    p.write_text(text if text is not None else yaml.safe_dump(data))
    return p


@pytest.mark.parametrize("grpo, expect", [
    ({"max_steps": -5}, "grpo.max_steps: -5 must be ≥ 1 (or -1"),
    ({"max_steps": 0}, "grpo.max_steps: 0 must be ≥ 1"),
    ({"save_steps": 5.5}, "grpo.save_steps: 5.5 is neither a number of steps"),
    ({"logging_steps": 0}, "grpo.logging_steps: 0 is neither"),
    ({"disable_tqdm": "yes"}, "grpo.disable_tqdm: expected true or false, got 'yes'"),
    ({"max_steps": "1e400"}, "grpo.max_steps: '1e400' is text, and beyond any number a run can use"),
    ({"max_steps": "100"}, "grpo.max_steps: '100' is text, not a number (it is quoted); write max_steps: 100"),
    ({"max_steps": "2.5"}, "max_steps takes an integer, e.g. max_steps: 2"),
    ({"max_steps": "1e3"}, "needs a dot and a signed exponent, as in 1.0e+3); write max_steps: 1000"),
    ({"learning_rate": "5e-7"}, "write learning_rate: 5.0e-7"),
    # PyYAML (YAML 1.1) reads 1.0e6 as text too: the exponent needs its sign. Not "quoted", and the fix is not
    # the input itself
    ({"temperature": "1.0e6"}, "'1.0e6' is text, not a number (YAML reads 1.0e6 as text: a number with an exponent "
                               "needs a dot and a signed exponent, as in 1.0e+6); write temperature: 1.0e+6"),
    ({"learning_rate": "2.0e5"}, "write learning_rate: 2.0e+5"),
    ({"learning_rate": float("inf")}, "grpo.learning_rate: inf is not a finite number"),
    ({"num_iterations": 0}, "grpo.num_iterations: 0 must be ≥ 1"),
    ({"seed": -1}, "grpo.seed: -1 must be ≥ 0"),
    ({"per_device_train_batch_size": 8.5}, "grpo.per_device_train_batch_size: expected an integer, got 8.5"),
    ({"num_generations": None}, "grpo.num_generations: null; GRPO compares a group of completions per prompt"),
    ({"report_to": 3}, "grpo.report_to: 3 is neither a dashboard's name nor a list"),  # a union field (str | list)
    ({"report_to": "tensorboard"}, None),
])
def test_grpo_values_are_checked_with_the_fix(workspace, grpo, expect):
    if expect is None:
        load_brief(brief_with(workspace, grpo))
        return
    with pytest.raises(ConfigError) as e:
        load_brief(brief_with(workspace, grpo))
    assert expect in str(e.value)
    assert str(e.value).count(f"grpo.{next(iter(grpo))}") == 1  # said once, not again by later rules


def test_learning_rate_as_yaml_reads_it(workspace):
    text = example_brief_text().replace("learning_rate: 2.0e-4", "learning_rate: 2e-4")
    assert "learning_rate: 2e-4" in text
    with pytest.raises(ConfigError, match=r"'2e-4' is text, not a number .* write learning_rate: 2.0e-4"):
        load_brief(brief_with(workspace, text=text))


def test_the_suggested_rewrite_reads_as_the_number(workspace):
    from grpo_rlvr.brief.grpo_rules import as_number_text

    for text in ("1e6", "1.0e6", "5e-7", "1e+6", "2.5E3", "7"):
        assert isinstance(yaml.safe_load(f"x: {text}")["x"], str) or text == "7"
        fixed = yaml.safe_load(f"x: {as_number_text(text)}")["x"]
        assert isinstance(fixed, (int, float)) and fixed == float(text), (text, as_number_text(text))


@pytest.mark.parametrize("hardware, expect", [
    ({"accelerator": "gpu", "num_gpus": 10**30}, "hardware.num_gpus"),
    ({"accelerator": "gpu", "num_gpus": 8, "num_nodes": 100000}, "hardware.num_nodes"),
    ({"accelerator": "gpu", "num_gpus": "8"}, "hardware.num_gpus: '8' is text, not a number (it is quoted); "
                                              "write num_gpus: 8"),
])
def test_absurd_hardware_is_refused(workspace, hardware, expect):
    with pytest.raises(ConfigError) as e:
        load_brief(brief_with(workspace, hardware=hardware))
    assert expect in str(e.value) and "999999" not in str(e.value).replace(str(10**30), "")


def validate(path, timeout=120):
    return subprocess.run([sys.executable, "-m", "grpo_rlvr", "validate", str(path)], capture_output=True,
                          text=True, timeout=timeout)  # the timeout only guards against a hang


@pytest.mark.parametrize("content, expect", [
    (b"model: caf\xe9\n", "not UTF-8 text (byte 0xe9"),
    (b"1: 2\n", "key '1' is read as a number, not text; quote it"),
    (b"[" * 5000 + b"]" * 5000, "nested deeper than 100 levels"),
    (BILLION_LAUGHS.encode(), "aliases expand to more than"),
    (example_brief_text().replace("rewards:", "rewards: []\nrewards:").encode(), "duplicate key 'rewards'"),
    (b"", "expected a mapping of keys"),
])
def test_validate_on_files_yaml_cannot_take(tmp_path, content, expect):
    p = tmp_path / "brief.yaml"
    p.write_bytes(content)
    out = validate(p)
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith("Error: ") and "Traceback" not in out.stderr
    assert expect in out.stderr and str(p) in out.stderr
    assert len(out.stderr) < 2000  # nothing expanded is printed
