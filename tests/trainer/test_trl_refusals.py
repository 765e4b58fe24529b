"""What TRL itself refuses in a run's settings, found before anything trains and named by brief field: GRPOConfig's
own checks, the optimizer and the learning-rate schedule as the Trainer builds them at its first step. Checked on
this CPU machine for settings meant for a GPU (bf16) too. `validate` and the rendered train.py say the same
(tests/validate/test_report.py)."""

from __future__ import annotations

import importlib.util

import pytest

from grpo_rlvr.trainer.trl_refusals import trl_refusals


def test_an_unknown_optimizer_is_named_with_the_nearest_one():
    refused, missing = trl_refusals({"optim": "adamw_foo", "learning_rate": 1e-5})
    assert missing == [] and len(refused) == 1
    assert refused[0].startswith("grpo.optim: TRL's GRPOConfig refuses optim: 'adamw_foo': 'adamw_foo' is not one of "
                                 "its OptimizerNames: did you mean 'adamw_torch'? adamw_torch, adamw_torch_fused")


def test_a_schedule_without_the_kwargs_it_needs_is_refused_and_with_them_taken():
    refused, _ = trl_refusals({"lr_scheduler_type": "cosine_with_min_lr"})
    assert refused == ["grpo.lr_scheduler_type: 'cosine_with_min_lr' with lr_scheduler_kwargs {}: the Trainer refuses "
                       "the schedule when training starts: One of min_lr or min_lr_rate should be set through the "
                       "`lr_scheduler_kwargs`; set grpo.lr_scheduler_kwargs in the brief (e.g. {min_lr_rate: 0.1} for "
                       "cosine_with_min_lr), or another lr_scheduler_type"]
    assert trl_refusals({"lr_scheduler_type": "cosine_with_min_lr",
                         "lr_scheduler_kwargs": {"min_lr_rate": 0.1}}) == ([], [])
    assert "is not one of its SchedulerType: did you mean 'cosine'?" in trl_refusals(
        {"lr_scheduler_type": "cosinee"})[0][0]


def test_a_combination_names_every_field_in_it_and_gpu_settings_check_on_a_cpu():
    refused, _ = trl_refusals({"bf16": True, "fp16": True, "learning_rate": 1e-6})
    assert refused == ["grpo.bf16, grpo.fp16: TRL's GRPOConfig refuses bf16: True; fp16: True: At most one of fp16 and "
                       "bf16 can be True, but not both. Change it in the brief (TRL would refuse it at the start of "
                       "training, after the model loaded)"]
    assert trl_refusals({"bf16": True, "use_vllm": True, "vllm_mode": "colocate", "optim": "adamw_torch_fused"}) \
        == ([], [])   # a GPU run's settings, checked on this CPU


@pytest.mark.skipif(importlib.util.find_spec("bitsandbytes") is not None, reason="bitsandbytes is installed here")
def test_an_optimizer_from_a_package_this_machine_lacks_is_a_missing_package_not_a_refusal():
    refused, missing = trl_refusals({"optim": "adamw_bnb_8bit"})
    assert refused == [] and missing == ["grpo.optim: 'adamw_bnb_8bit' needs a package this machine lacks: You need "
                                         "to install `bitsandbytes` in order to use bitsandbytes optimizers: `pip "
                                         "install -U bitsandbytes`"]


def test_the_rendered_train_py_names_the_field_without_a_traceback(workspace):
    """A reviewed run rendered from a brief that skipped validate: train.py passes the gate, then refuses in
    seconds, before any model loads, with the field and the fix (exit 2), and records it for diagnose and watch."""
    import json
    import subprocess
    import sys

    from artifacts import make_artifact
    from briefs import brief_for
    from grpo_rlvr.run.render import render

    brief = brief_for(workspace, "b", {"grpo": {"optim": "adamw_foo"}})
    make_artifact(brief, workspace / "out" / "inspection")   # the gate passes: what stops the run is TRL's refusal
    run = render(brief).dir
    out = subprocess.run([sys.executable, str(run / "train.py")], capture_output=True, text=True, timeout=300)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr[-3000:]
    assert "Error: grpo.optim: TRL's GRPOConfig refuses optim: 'adamw_foo'" in out.stderr
    record = json.loads((run / "output" / "crash.json").read_text())
    assert record["exception"] == "ConfigError" and record["message"].startswith("grpo.optim: ")
