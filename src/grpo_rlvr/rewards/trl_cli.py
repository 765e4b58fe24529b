"""Built-in rewards with their default parameters as module attributes, for TRL's own command line:

    trl grpo --config RUN/grpo_config.yaml --model_name_or_path MODEL --dataset_name DATA \\
        --reward_funcs grpo_rlvr.rewards.trl_cli.format grpo_rlvr.rewards.trl_cli.exact_match

(TRL imports ``module.attribute`` for each name.) The names are the registry's rewards that build without
parameters (defaults only), each built on first access; rewards that need parameters (``rubric_judge``) are not
here: use the rendered ``train.py`` for those.
"""

from __future__ import annotations

import inspect

from grpo_rlvr.rewards import REGISTRY, Reward, build_reward


def _needs_params(factory) -> bool:
    return any(p.default is p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
               for p in inspect.signature(factory).parameters.values())


__all__ = [name for name, entry in REGISTRY.items() if not _needs_params(entry.factory)]
_built: dict[str, Reward] = {}


def __getattr__(name: str) -> Reward:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no reward {name!r}; it has {', '.join(__all__)} (rewards "
                             "that need parameters are built by the rendered train.py)")
    if name not in _built:
        _built[name] = build_reward(name)  # the name TRL logs: rewards/<name>/mean
    return _built[name]


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
