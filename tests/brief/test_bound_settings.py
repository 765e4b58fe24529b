"""The settings a review is bound to (``brief/bound_settings.py``), checked against TRL itself.

The allow-list (``UNBOUND``) is derived from real ``GRPOTrainer`` objects: for each unbound key, a trainer built
with that key changed uses the same generation settings (its generation config and kwargs, sampling values,
chat template kwargs, lengths, group size, generation batch) and the same reward functions and weights as one
built without the change. Bound keys that reach generation do change them (so the comparison can fail), and
every GRPOConfig field not on the allow-list is bound, as is a key TRL does not have yet.
"""

from __future__ import annotations

import json

import pytest

from grpo_rlvr.brief import load_brief
from grpo_rlvr.brief.bound_settings import UNBOUND, bound_settings
from grpo_rlvr.brief.loader import _grpo_fields

# A value each unbound key is changed to (the baseline is TRL's default, with the few settings of ``_args``).
CHANGED = {
    "logging_steps": 3, "logging_strategy": "epoch", "logging_first_step": True, "logging_nan_inf_filter": False,
    "log_level": "warning", "log_level_replica": "error", "log_on_each_node": False, "log_completions": True,
    "log_unique_prompts": True, "log_multimodal": False,
    "num_completions_to_print": 2, "disable_tqdm": True, "skip_memory_metrics": False,
    "include_num_input_tokens_seen": True, "report_to": "all", "run_name": "another", "project": "elsewhere",
    "trackio_space_id": "someone/space", "trackio_bucket_id": "bucket", "trackio_static_space_id": "someone/static",
    "eval_strategy": "steps", "eval_steps": 3, "eval_delay": 2, "eval_on_start": True,
    "per_device_eval_batch_size": 16, "eval_accumulation_steps": 2, "output_dir": "elsewhere", "save_steps": 7, "save_strategy": "epoch", "save_total_limit": 2,
    "save_only_model": True, "save_on_each_node": True, "hub_model_id": "someone/model",
    "hub_strategy": "end", "hub_token": "not-a-token", "hub_private_repo": True, "hub_always_push": True,
    "hub_revision": "branch", "learning_rate": 3e-4, "lr_scheduler_type": "cosine",
    "lr_scheduler_kwargs": {"num_cycles": 0.3}, "warmup_steps": 5, "weight_decay": 0.1, "adam_beta1": 0.8,
    "adam_beta2": 0.95, "adam_epsilon": 1e-6, "optim": "sgd", "optim_args": "momentum=0.9", "max_grad_norm": 0.5,
    "num_train_epochs": 3.0, "max_steps": 11, "beta": 0.2, "loss_type": "dr_grpo", "epsilon": 0.1,
    "epsilon_high": 0.28, "delta": 2.0, "importance_sampling_level": "sequence", "scale_rewards": "none",
    "mask_truncated_completions": True, "num_iterations": 2, "top_entropy_quantile": 0.2,
    "off_policy_mask_threshold": 0.5, "use_bias_correction_kl": False, "entropy_coef": 0.01,
    "entropy_coef_delta": 0.01, "entropy_coef_max": 0.5, "entropy_coef_min": 0.001, "entropy_target": 0.3,
    "use_adaptive_entropy": True, "sapo_temperature_neg": 1.2, "sapo_temperature_pos": 0.9, "vespo_k_neg": 2.0,
    "vespo_k_pos": 1.5, "vespo_lambda_neg": 2.0, "vespo_lambda_pos": 1.5,
}
# Bound keys that reach generation, the reward call or the prompt, changed the same way: the snapshot must move.
BOUND_CHANGED = {
    "temperature": 0.7, "top_p": 0.9, "top_k": 5, "min_p": 0.1, "repetition_penalty": 1.3,
    "generation_kwargs": {"temperature": 4.0}, "chat_template_kwargs": {"enable_thinking": False},
    "max_completion_length": 9, "num_generations": 4, "reward_weights": [2.0, 1.0],
    "multi_objective_aggregation": "normalize_then_sum", "per_device_train_batch_size": 16,
}


def format_reward(completions, **kwargs):
    return [0.0 for _ in completions]


def correct_reward(completions, **kwargs):
    return [1.0 for _ in completions]


@pytest.fixture(scope="module")
def trl_setup(tiny_model_dir):
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    data = Dataset.from_list([{"prompt": f"{i}+1=", "answer": str(i + 1)} for i in range(8)])
    return model, tokenizer, data


def _snapshot(trl_setup, tmp_path, **change) -> dict:
    """What a real GRPOTrainer generates and scores with, built with ``change`` on a small CPU config."""
    from trl import GRPOConfig, GRPOTrainer

    model, tokenizer, data = trl_setup
    kwargs = {"output_dir": str(tmp_path / "out"), "use_cpu": True, "bf16": False, "report_to": "none",
              "per_device_train_batch_size": 8, "num_generations": 8, "max_completion_length": 16,
              "dataloader_num_workers": 0, **change}
    if "output_dir" in change:
        kwargs["output_dir"] = str(tmp_path / change["output_dir"])
    trainer = GRPOTrainer(model=model, reward_funcs=[format_reward, correct_reward], args=GRPOConfig(**kwargs),
                          train_dataset=data, eval_dataset=data, processing_class=tokenizer)
    values = ("temperature", "top_p", "top_k", "min_p", "repetition_penalty", "max_completion_length",
              "num_generations", "chat_template_kwargs", "chat_template", "use_vllm", "vllm_mode",
              "multi_objective_aggregation", "max_tool_calling_iterations", "eos_token_ids")
    return json.loads(json.dumps({
        "generation_config": trainer.generation_config.to_dict(), "generation_kwargs": trainer.generation_kwargs,
        **{k: getattr(trainer, k) for k in values},
        "rewards": [f.__name__ for f in trainer.reward_funcs], "reward_weights": trainer.reward_weights.tolist(),
        "generation_batch_size": trainer.args.generation_batch_size,
        "steps_per_generation": trainer.args.steps_per_generation,
    }, default=str))


def test_every_unbound_key_has_a_changed_value_here_and_is_a_grpo_config_field():
    fields = _grpo_fields()
    assert sorted(CHANGED) == sorted(UNBOUND)
    assert [k for k in UNBOUND if k not in fields] == []


def test_changing_an_unbound_key_leaves_what_trl_samples_and_scores_with_unchanged(trl_setup, tmp_path):
    base = _snapshot(trl_setup, tmp_path)
    moved = [k for k, v in CHANGED.items() if _snapshot(trl_setup, tmp_path, **{k: v}) != base]
    assert moved == [], f"these unbound keys change what TRL samples or scores with: {moved}"


@pytest.mark.parametrize("key", sorted(BOUND_CHANGED))
def test_bound_keys_that_reach_generation_change_the_snapshot(trl_setup, tmp_path, key):
    assert key not in UNBOUND
    assert _snapshot(trl_setup, tmp_path, **{key: BOUND_CHANGED[key]}) != _snapshot(trl_setup, tmp_path)


def test_every_grpo_config_field_not_on_the_allow_list_is_bound():
    fields = _grpo_fields()
    for key in fields:
        bound = bound_settings({key: "x"})
        assert (f"grpo.{key}" in bound) == (key not in UNBOUND), key
    # a key a future TRL adds is bound without anyone listing it
    assert bound_settings({"future_sampling_knob": 1}) == {"grpo.future_sampling_knob": 1}


def test_the_brief_fingerprint_moves_with_bound_keys_and_not_with_unbound_ones(workspace):
    from briefs import brief_for

    base = load_brief(workspace / "brief.yaml").fingerprint
    for key, value in (("top_k", 5), ("min_p", 0.05), ("repetition_penalty", 1.2),
                       ("generation_kwargs", {"temperature": 4.0}), ("chat_template_kwargs", {"enable_thinking": True})):
        assert load_brief(brief_for(workspace, f"b_{key}", {"grpo": {key: value}})).fingerprint != base, key
    for key, value in (("learning_rate", 1e-4), ("logging_steps", 1), ("save_steps", 3), ("max_steps", 7)):
        assert load_brief(brief_for(workspace, f"u_{key}", {"grpo": {key: value}})).fingerprint == base, key
    assert load_brief(brief_for(workspace, "dtype", {"model": {"dtype": "float32"}})).fingerprint != base



def test_with_a_held_out_set_logging_steps_moves_eval_steps_without_moving_the_fingerprint(workspace):
    from briefs import brief_for

    held = {"dataset": {"eval_path": "./data/train.jsonl"}}
    base = load_brief(brief_for(workspace, "held", held))
    other = load_brief(brief_for(workspace, "held_log", {**held, "grpo": {"logging_steps": 2}}))
    assert base.grpo["eval_steps"] != other.grpo["eval_steps"]
    assert base.fingerprint == other.fingerprint


def test_validate_says_which_keys_are_not_bound_to_the_review(workspace):
    from grpo_rlvr.cli.validate import format_validate_report
    from grpo_rlvr.validate.report import validate_report

    report = validate_report(workspace / "brief.yaml")
    cfg = report["grpo_config"]
    assert cfg["learning_rate"]["bound"] is False and cfg["temperature"]["bound"] is True
    line = next(x for x in format_validate_report(report).splitlines() if "Not bound to the review" in x)
    assert "learning_rate" in line and "logging_steps" in line and "temperature" not in line
