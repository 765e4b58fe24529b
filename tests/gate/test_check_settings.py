"""Rule 4 binds a review to the whole sampling setting (``brief/bound_settings.py``): every GRPOConfig key but the
allow-listed ones, and the model-loading settings around it. A bound key changed after the review fails the gate,
``grpo-rlvr train`` and the rendered ``train.py``, naming the key, its reviewed and current value and the fix; an
allow-listed key (the optimisation, logging, saving) does not."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

from artifacts import make_artifact
from grpo_rlvr.gate.check import check_gate
from grpo_rlvr.run.render import render

CLI = [sys.executable, "-m", "grpo_rlvr"]


def rule4(result) -> tuple[bool, str]:
    r = next(r for r in result.rules if r.id == 4)
    return r.passed, " | ".join(r.problems)


def edit_brief(path, section: str, **values) -> None:
    data = yaml.safe_load(path.read_text())
    data.setdefault(section, {}).update(values)
    path.write_text(yaml.safe_dump(data))


@pytest.fixture
def reviewed(workspace):
    brief = workspace / "brief.yaml"
    art = make_artifact(brief, workspace / "out" / "inspection")
    assert check_gate(art, brief=brief).passed
    return brief, art


@pytest.mark.parametrize("key, value, shown", [
    ("generation_kwargs", {"temperature": 4.0}, "grpo.generation_kwargs changed since the review (unset → "
                                                "{'temperature': 4.0})"),
    ("top_k", 5, "grpo.top_k changed since the review (unset → 5)"),
    ("min_p", 0.2, "grpo.min_p changed since the review (unset → 0.2)"),
    ("repetition_penalty", 1.5, "grpo.repetition_penalty changed since the review (unset → 1.5)"),
    ("chat_template_kwargs", {"enable_thinking": True}, "grpo.chat_template_kwargs changed since the review"),
    ("temperature", 0.5, "grpo.temperature changed since the review (1.0 → 0.5)"),
])
def test_a_sampling_key_added_after_the_review_fails_rule_4_naming_it(reviewed, key, value, shown):
    brief, art = reviewed
    edit_brief(brief, "grpo", **{key: value})
    passed, problems = rule4(check_gate(art, brief=brief))
    assert not passed and shown in problems and "re-inspect and review" in problems, problems


def test_a_model_loading_setting_changed_after_the_review_fails_rule_4(reviewed):
    brief, art = reviewed
    edit_brief(brief, "model", dtype="bfloat16")
    passed, problems = rule4(check_gate(art, brief=brief))
    # the model section's loading settings reach TRL as model_init_kwargs, so that is the bound key that changed
    assert not passed and ("grpo.model_init_kwargs changed since the review (unset → {'dtype': 'bfloat16'})"
                           in problems), problems


def test_allow_listed_keys_changed_after_the_review_keep_the_gate_passing(reviewed):
    brief, art = reviewed
    edit_brief(brief, "grpo", learning_rate=1e-5, loss_type="dr_grpo", beta=0.0, logging_steps=1, save_steps=5,
               max_steps=3)
    edit_brief(brief, "base_run", diagnosis="diag.json")   # a hand-set variant needs the diagnosis behind it
    (brief.parent / "diag.json").write_text('{"findings": [{"id": "length_reward_coupling"}]}')
    result = check_gate(art, brief=brief)
    assert result.passed, result.format()


def test_grpo_rlvr_train_and_train_py_refuse_a_run_whose_sampling_changed_after_the_review(reviewed):
    brief, art = reviewed
    edit_brief(brief, "grpo", generation_kwargs={"temperature": 4.0})
    run = render(brief).dir    # rendered after the change: the run folder itself is consistent
    want = "grpo.generation_kwargs changed since the review (unset → {'temperature': 4.0})"
    cli = subprocess.run([*CLI, "train", str(run), "--dry-run"], capture_output=True, text=True, timeout=300)
    assert cli.returncode == 1 and want in cli.stderr + cli.stdout, cli.stderr
    itself = subprocess.run([sys.executable, "train.py"], cwd=run, capture_output=True, text=True, timeout=300)
    assert itself.returncode == 1 and want in itself.stderr, itself.stderr
