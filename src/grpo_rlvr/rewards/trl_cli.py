"""Built-in rewards with their default parameters as module attributes, for TRL's own command line:

    trl grpo --config RUN/grpo_config.yaml --model_name_or_path MODEL --dataset_name DATA \\
        --reward_funcs grpo_rlvr.rewards.trl_cli.format grpo_rlvr.rewards.trl_cli.exact_match

(TRL imports ``module.attribute`` for each name.) Rewards that need parameters (``rubric_judge``) are not here;
use the rendered ``train.py`` for those.
"""

from grpo_rlvr.rewards import build_reward

format = build_reward("format")  # noqa: A001 - the name TRL logs (rewards/format/mean)
exact_match = build_reward("exact_match")
math = build_reward("math")  # noqa: A001
json_schema = build_reward("json_schema")
tool_call = build_reward("tool_call")
unit_tests = build_reward("unit_tests")
