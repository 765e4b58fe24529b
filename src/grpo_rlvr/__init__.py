"""grpo-rlvr: GRPO / RLVR on Hugging Face TRL with verifiable rewards and a human reward-inspection gate.

The functions of the pipeline (``load_brief``, ``preflight``, ``inspect_rewards``, ``check_gate``, ``render``,
``train``, ``diagnose``, the reward factories and the exception tree) are in ``grpo_rlvr.api``. Each command has a
room of its name (``grpo_rlvr.preflight``, ``grpo_rlvr.gate``, ``grpo_rlvr.review``, …).
"""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["__version__"]
