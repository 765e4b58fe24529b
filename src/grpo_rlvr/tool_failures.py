"""A tool that fails outside the model's control: the rollout is left out of training, never scored 0.

A tool (a user function, an environment's method, the built-in ``python``) raises ``ToolUnavailable`` when the
failure is the world's, not the model's: a service down, a timeout of the machinery, a sandbox that could not start.
The call is then answered with an error that carries this process's mark, which the model cannot write: TRL puts
only a tool's own return value or exception text in a ``tool`` message, and the mark holds a nonce drawn when this
process started. Every reward then scores that rollout ``None`` (TRL leaves a completion out of the group baseline
and gives it no advantage when every reward says ``None``), and it is counted.

Any other exception from a tool is the model's doing (wrong arguments, a call to a tool that does not exist) and
goes back to the model as TRL sends it, to learn from.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence

NONCE = secrets.token_hex(12)   # this process's: a mark from another process (or a model) is not recognised
_MARK = re.compile(r"\[tool unavailable ([0-9a-f]{24})\] (.{0,300}?) \[/tool unavailable\]")


class ToolUnavailable(Exception):  # noqa: N818 - the name says what happened, as TimeoutError does
    """Raise from a tool when it failed for a reason outside the model's control; the rollout is not scored."""

    def __init__(self, why: str):
        super().__init__(f"[tool unavailable {NONCE}] {' '.join(str(why).split())[:300]} [/tool unavailable]")
        self.why = why


# Set on an environment instance (by the tool wrappers of ``grpo_rlvr.tools.build``) when its rollout met a failure
# outside the model's control: a reset that raised, a tool that raised ToolUnavailable. Cleared at each reset.
UNAVAILABLE = "_grpo_rlvr_unavailable"


def unavailable_in(completion, environment=None) -> str | None:
    """Why a completion's rollout met a tool or an environment that was unavailable, or None: its environment's
    mark (``environment``: the instance TRL hands rewards), else the first ``tool`` message that carries this
    process's nonce."""
    marked = getattr(environment, UNAVAILABLE, None) if environment is not None else None
    if marked:
        return str(marked)
    if isinstance(completion, str) or not isinstance(completion, Sequence):
        return None
    for m in completion:
        if not isinstance(m, dict) or m.get("role") != "tool":
            continue
        found = _MARK.search(str(m.get("content", "")))
        if found and found.group(1) == NONCE:
            return f"tool {m.get('name', '?')} unavailable: {found.group(2)}"
    return None


__all__ = ["NONCE", "UNAVAILABLE", "ToolUnavailable", "unavailable_in"]
