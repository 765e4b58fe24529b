"""The brief: the one YAML a user writes, loaded and validated once into a frozen ``Brief``."""

from grpo_rlvr.brief.loader import brief_warnings, load_brief
from grpo_rlvr.brief.recipe import RECIPE
from grpo_rlvr.brief.types import Brief, DatasetSpec, Hardware, ModelSpec, RewardSpec, Variant

__all__ = ["RECIPE", "Brief", "DatasetSpec", "Hardware", "ModelSpec", "RewardSpec", "Variant", "brief_warnings",
           "load_brief"]
