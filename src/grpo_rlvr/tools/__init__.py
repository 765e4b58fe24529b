"""Tools the model calls during its rollouts: the brief's user functions, an environment class with TRL's contract,
and the built-in ``python`` tool that runs code in the sandbox. The same tools reach TRL's trainer in preflight,
inspect and training (``build.trainer_tools``); their code is bound by the review like a reward's
(``loading.load_tools``: every file of it by its bytes).

A tool that fails outside the model's control raises ``ToolUnavailable``: that rollout is left out of training
(every reward scores it None) and counted, never scored 0.
"""

from grpo_rlvr.tool_failures import ToolUnavailable

__all__ = ["ToolUnavailable"]
