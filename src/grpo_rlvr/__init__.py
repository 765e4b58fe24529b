"""grpo-rlvr: GRPO / RLVR on Hugging Face TRL with verifiable rewards and a human reward-inspection gate.

The verbs of the pipeline are plain functions (the CLI is a thin shell over them). They are imported lazily,
so ``import grpo_rlvr`` stays light; torch and TRL load only in the verbs that need them.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_EXPORTS = {
    "load_brief": "grpo_rlvr.brief",
    "Brief": "grpo_rlvr.brief",
    "validate_report": "grpo_rlvr.validation",
    "preflight": "grpo_rlvr.success_rate",
    "score_file": "grpo_rlvr.scoring",
    "inspect_rewards": "grpo_rlvr.inspection",
    "check_gate": "grpo_rlvr.gate",
    "render": "grpo_rlvr.run.render",
    "train": "grpo_rlvr.run.launch",
    "diagnose": "grpo_rlvr.diagnosis",
    "build_reward": "grpo_rlvr.rewards",
    "format_reward": "grpo_rlvr.rewards",
    "exact_match_reward": "grpo_rlvr.rewards",
    "math_reward": "grpo_rlvr.rewards",
    "user_reward": "grpo_rlvr.rewards",
    "GrpoRlvrError": "grpo_rlvr.errors",
    "ConfigError": "grpo_rlvr.errors",
    "RewardError": "grpo_rlvr.errors",
    "SandboxError": "grpo_rlvr.errors",
    "GateError": "grpo_rlvr.errors",
    "LaunchError": "grpo_rlvr.errors",
    "InputFileError": "grpo_rlvr.errors",
    "MachineError": "grpo_rlvr.errors",
    "MissingColumn": "grpo_rlvr.errors",
    "RowError": "grpo_rlvr.errors",
    "BadColumn": "grpo_rlvr.errors",
    "ReviewError": "grpo_rlvr.errors",
    "GateRefused": "grpo_rlvr.errors",
    "RunFolderInUse": "grpo_rlvr.errors",
    "RunKeyError": "grpo_rlvr.errors",
    "StartupHookError": "grpo_rlvr.errors",
}

__all__ = ["__version__", *sorted(_EXPORTS)]
# No submodule shares a name with an exported function (importing grpo_rlvr.x would shadow a function x).


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'grpo_rlvr' has no attribute {name!r}")
