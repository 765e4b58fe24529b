"""Reward inspection: sample, score, and write the artifact a person reviews before any training run."""

from grpo_rlvr.inspection.artifact import Artifact, load_artifact
from grpo_rlvr.inspection.run import InspectResult, inspect_rewards

__all__ = ["Artifact", "InspectResult", "inspect_rewards", "load_artifact"]
