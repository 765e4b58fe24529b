"""``grpo-rlvr validate`` refuses what a later command would refuse, with the same message: a dataset line that is
not JSON (the dataset is read whole), an adapter folder without weights, a temperature out of range."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from briefs import example_brief_text

CLI = [sys.executable, "-m", "grpo_rlvr"]


def _brief(workspace, **sections):
    data = yaml.safe_load(example_brief_text())
    for key, value in sections.items():
        data[key] = {**data[key], **value} if isinstance(value, dict) and isinstance(data.get(key), dict) else value
    p = workspace / "b.yaml"
    p.write_text(yaml.safe_dump(data))
    return p


def malformed_line(workspace):
    rows = (workspace / "data" / "train.jsonl").read_text().splitlines()
    rows[150] = rows[150][:-5]                          # one torn line deep in the file (the first rows are fine)
    (workspace / "data" / "bad.jsonl").write_text("\n".join(rows) + "\n")
    return _brief(workspace, dataset={"path": "./data/bad.jsonl"}), "data/bad.jsonl, line 151"


def adapter_without_weights(workspace):
    adapter = workspace / "adapter"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 8, "lora_alpha": 16,
                                                             "base_model_name_or_path": str(workspace / "model")}))
    return _brief(workspace, model={"name_or_path": "./adapter"}), "no adapter weights (adapter_model.safetensors"


def hot_temperature(workspace):
    return _brief(workspace, grpo={"temperature": 1000000.0}), "grpo.temperature: 1000000.0 is outside (0, 10]"


@pytest.mark.parametrize("make", [malformed_line, adapter_without_weights, hot_temperature])
def test_validate_refuses_what_preflight_refuses_with_the_same_message(workspace, make):
    brief, expect = make(workspace)
    said = {}
    for cmd in ("validate", "preflight"):
        out = subprocess.run([*CLI, cmd, str(brief)], capture_output=True, text=True, timeout=300)
        assert out.returncode == 2 and "Traceback" not in out.stderr, (cmd, out.stderr[-2000:])
        said[cmd] = [line for line in out.stderr.splitlines() if line.startswith("Error:")]
        assert said[cmd] and expect in "\n".join(said[cmd]), (cmd, out.stderr[-2000:])
    assert said["validate"] == said["preflight"]


@pytest.mark.parametrize("grpo, expect", [
    ({"optim": "adamw_foo"}, "grpo.optim: TRL's GRPOConfig refuses optim: 'adamw_foo'"),
    ({"lr_scheduler_type": "cosine_with_min_lr"}, "grpo.lr_scheduler_type: 'cosine_with_min_lr' with "
                                                  "lr_scheduler_kwargs {}: the Trainer refuses the schedule")])
def test_validate_refuses_what_trl_refuses_at_the_first_step(workspace, grpo, expect):
    """validate builds TRL's own GRPOConfig, optimizer and schedule (trainer/trl_refusals): a value TRL refuses
    once the model has loaded is refused here, exit 2, naming the field and the fix."""
    out = subprocess.run([*CLI, "validate", str(_brief(workspace, grpo=grpo))], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 2 and "Traceback" not in out.stderr and expect in out.stderr, out.stderr[-2000:]


def test_a_user_reward_without_kind_is_named_with_the_key_to_add(workspace):
    """A reward of yours is custom unless it says: validate names it and the key, before the gate fails for want of
    a correctness reward."""
    (workspace / "mine.py").write_text("def score(completions, answer, **kw):\n"
                                       "    return [float(answer[i] in c) for i, c in enumerate(completions)]\n")
    brief = _brief(workspace, rewards=[{"name": "format", "weight": 0.2}, {"name": "mine.py:score", "weight": 1.0}])
    out = subprocess.run([*CLI, "validate", str(brief)], capture_output=True, text=True, timeout=300)
    said = " ".join((out.stdout + out.stderr).split())
    assert out.returncode == 0, out.stderr[-2000:]
    assert ("rewards: no correctness reward; the gate requires a composite (format + correctness): rewards[1] "
            "(mine.py:score) states no `kind:` and counts as custom; if it scores correctness, add `kind: "
            "correctness` to it") in said, said
