"""The settings a review is bound to: the whole resolved GRPOConfig, minus a short allow-list, plus what the brief
sets around it that changes the model that samples.

A review says "this reward scores these samples of this model fairly". So every setting that reaches generation
(temperature, top_p, top_k, min_p, repetition_penalty, ``generation_kwargs``, which override all of those at
sampling time, ``chat_template_kwargs``, which change the prompt, lengths, group size and batching, vLLM, the
seed, precision) or the reward call (``reward_weights``, ``multi_objective_aggregation``) is bound: changing it
after the review fails the gate, naming the key, its reviewed and current value, and the fix (re-inspect and
review). A GRPOConfig key is bound unless it is on :data:`UNBOUND`, so a key a future TRL adds is bound by
default.

:data:`UNBOUND` holds the keys that cannot change what is sampled or how it is scored:

- logging, reporting and progress display, and where and how often the run saves or pushes its outputs: they
  act after generation and scoring, on copies of their results;
- when held-out prompts are evaluated and in what batches (``eval_steps`` follows ``logging_steps`` when the
  brief has an eval set): evaluation samples as training does, and never feeds the gradient;
- the optimisation: the optimiser and its schedule, how long training runs, and the loss built from the
  rewards (``beta``, ``loss_type``, ``epsilon``/``epsilon_high``, ``delta``, ``importance_sampling_level``,
  ``scale_rewards``, ``mask_truncated_completions``, ``num_iterations``, the entropy, SAPO and VESPO terms).
  They change how the model moves from the scores, never which completions the starting model samples or how
  the reward scores them; and they are what ``grpo-rlvr diagnose`` recommends changing (the dapo, dr_grpo and
  gspo variants are deltas on these keys only), which must not cost a fresh review. What training does with
  the scores is watched by ``diagnose``, not by the review.

Left bound on purpose, though some only shape the work: ``push_to_hub`` and ``log_completions_hub_repo`` (TRL
creates the Hub repo when the trainer is built, so the test cannot build one offline to show them inert), batch
sizes and gradient accumulation (they set TRL's generation batch), ``num_generations`` and
``num_generations_eval``, gradient checkpointing and the other memory switches, distributed and
vLLM settings, and the seed.

The model section's loading settings (``model.dtype``, ``model.attn_implementation``, ``model.trust_remote_code``)
reach TRL inside the GRPOConfig (``model_init_kwargs`` and ``trust_remote_code``, bound like every other key).
Around it, a 4-bit base (``method: qlora``) changes the model that samples. ``dynamic_sampling`` is not bound: it drops and refills
groups whose rewards are all equal, with the same settings (it is part of the dapo variant). The prompt and the
data are bound by the dataset's identity, the rewards by theirs.

``tests/brief/test_bound_settings.py`` builds a real ``GRPOTrainer`` with each unbound key changed and shows
that its generation settings, chat template kwargs, reward functions and weights are unchanged. Imports no torch.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

_LOGGING = ("logging_steps", "logging_strategy", "logging_first_step", "logging_nan_inf_filter", "log_level",
            "log_level_replica", "log_on_each_node", "log_completions", "log_unique_prompts", "log_multimodal", "num_completions_to_print", "disable_tqdm", "skip_memory_metrics",
            "include_num_input_tokens_seen", "report_to", "run_name", "project", "trackio_space_id",
            "trackio_bucket_id", "trackio_static_space_id")
_OUTPUTS = ("output_dir", "save_steps", "save_strategy", "save_total_limit", "save_only_model", "save_on_each_node",
            "hub_model_id", "hub_strategy", "hub_token", "hub_private_repo", "hub_always_push",
            "hub_revision")
_EVAL_CADENCE = ("eval_strategy", "eval_steps", "eval_delay", "eval_on_start", "per_device_eval_batch_size",
                 "eval_accumulation_steps")
_OPTIMISATION = ("learning_rate", "lr_scheduler_type", "lr_scheduler_kwargs", "warmup_steps", "weight_decay",
                 "adam_beta1", "adam_beta2", "adam_epsilon", "optim", "optim_args", "max_grad_norm",
                 "num_train_epochs", "max_steps", "beta", "loss_type", "epsilon", "epsilon_high", "delta",
                 "importance_sampling_level", "scale_rewards", "mask_truncated_completions", "num_iterations",
                 "top_entropy_quantile", "off_policy_mask_threshold", "use_bias_correction_kl", "entropy_coef",
                 "entropy_coef_delta", "entropy_coef_max", "entropy_coef_min", "entropy_target",
                 "use_adaptive_entropy", "sapo_temperature_neg", "sapo_temperature_pos", "vespo_k_neg",
                 "vespo_k_pos", "vespo_lambda_neg", "vespo_lambda_pos")

# GRPOConfig keys that cannot change what is sampled or how it is scored -> why (see the module docstring).
UNBOUND: Mapping[str, str] = {
    **dict.fromkeys(_LOGGING, "logging and reporting"),
    **dict.fromkeys(_OUTPUTS, "output paths, save cadence and pushing"),
    **dict.fromkeys(_EVAL_CADENCE, "when and in what batches held-out prompts are evaluated"),
    **dict.fromkeys(_OPTIMISATION, "optimisation: how the model moves from the scores"),
}

# What the brief sets around the GRPOConfig that changes the model that samples: bound-settings name -> reader.
_MODEL = {
    "method": lambda model, method: "qlora (4-bit base)" if method == "qlora" else "full or lora (base as loaded)",
}


def _plain(value):
    """A value as JSON gives it back (mappings and tuples as dicts and lists), so recorded and current compare."""
    return json.loads(json.dumps(value, sort_keys=True, default=str))


def bound_settings(grpo: Mapping, model=None, method: str | None = None, tools: Mapping | None = None,
                   audit: Mapping | None = None) -> dict:
    """The settings a review is bound to, by the brief's name for each: ``grpo.<key>`` for every resolved GRPOConfig
    key not on :data:`UNBOUND` (as render writes it into grpo_config.yaml), the model-loading settings, the tools
    the model may call (``tools``: the brief's ``tools`` section as resolved; their code is bound apart), and the
    review audit's section when the brief has one (``audit``: loosening the audit after the review needs a new
    review)."""
    out = {f"grpo.{k}": _plain(v) for k, v in grpo.items() if k not in UNBOUND}
    if model is not None:
        out.update({name: _plain(read(model, method)) for name, read in _MODEL.items()})
    if tools is not None:
        out["tools"] = _plain(tools)
    if audit is not None:
        out["audit"] = _plain(audit)
    return dict(sorted(out.items()))
