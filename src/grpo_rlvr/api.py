"""The front door for Python: every verb of the pipeline as a plain function, with the result types and the
exception tree. The command line is a thin shell over the same functions.

    from grpo_rlvr.api import load_brief, preflight, inspect_rewards, check_gate, render, train, diagnose, write_report

Names are imported on first use, so ``import grpo_rlvr.api`` stays light: torch and TRL load only in the verbs
that need them. The package's rooms (``grpo_rlvr.preflight``, ``grpo_rlvr.gate``, …) are named for the commands;
this module is where the functions live, so the two never shadow each other.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "load_brief": "grpo_rlvr.brief",
    "Brief": "grpo_rlvr.brief",
    "validate_report": "grpo_rlvr.validate.report",
    "preflight": "grpo_rlvr.preflight.success_rate",
    "score_file": "grpo_rlvr.score.scoring",
    "inspect_rewards": "grpo_rlvr.inspection",
    "check_gate": "grpo_rlvr.gate.check",
    "render": "grpo_rlvr.run.render",
    "train": "grpo_rlvr.run.launch",
    "diagnose": "grpo_rlvr.diagnosis",
    "write_report": "grpo_rlvr.report",
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
    "AuditStop": "grpo_rlvr.errors",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'grpo_rlvr.api' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
