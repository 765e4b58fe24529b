"""The brief: the one YAML a user writes, loaded and validated once into a frozen ``Brief``.

``loader`` reads it section by section; ``recipe`` layers the GRPO settings (recipe, method, hardware, variant,
brief) and keeps each value's origin; ``grpo_rules`` holds TRL's constraints and the skill's floors as tables of
rules; ``types`` the frozen specs; ``model_probe``, ``data_checks``, ``methods``, ``contract`` and ``deviations``
the model's facts, the data, the method defaults, the example contract and the recipe deviations.
"""

from grpo_rlvr.brief.loader import load_brief
from grpo_rlvr.brief.recipe import RECIPE
from grpo_rlvr.brief.types import (
    Brief,
    DatasetSpec,
    Hardware,
    InspectionSpec,
    ModelSpec,
    PreflightSpec,
    RewardSpec,
    Variant,
)

__all__ = ["RECIPE", "Brief", "DatasetSpec", "Hardware", "InspectionSpec", "ModelSpec", "PreflightSpec", "RewardSpec",
           "Variant", "load_brief"]
