"""Trajectories scored by the brief's rewards, called as TRL calls them in training: the completions as TRL hands
them (text, or the assistant's messages), the prompts as the model saw them, the completion token ids, and each
row's other columns. Every phase that scores sampled or stored trajectories (preflight, inspect, the gate's
re-score) goes through here, so the reward reads in review what it reads in training."""

from __future__ import annotations

from collections.abc import Sequence

from grpo_rlvr.dataset.rows import reward_columns
from grpo_rlvr.rewards import combine
from grpo_rlvr.rollout.trajectory import EnvironmentState, Trajectory


def score_trajectories(rewards: list, weights: list[float], trajectories: Sequence[Trajectory],
                       rows: Sequence[dict]) -> list[dict]:
    """Per trajectory ``{"scores": {name: Scored}, "total": float}`` (``rewards.combine``).

    Raises:
        RewardError: a user reward raised on a sample (outside training that is a bug in the reward).
    """
    extra = {}
    if any(t.environment_state is not None for t in trajectories):   # rewards read the environment by its state
        extra["environments"] = [EnvironmentState(t.environment_state) for t in trajectories]
    return combine(rewards, weights, [t.completion for t in trajectories],
                   row_names=[getattr(r, "source", None) for r in rows],   # dataset.rows.DataRow: FILE:LINE
                   prompts=[t.prompt for t in trajectories],
                   completion_ids=[list(t.completion_ids) for t in trajectories],
                   tool_unavailable=[t.unavailable for t in trajectories], **extra, **reward_columns(list(rows)))
