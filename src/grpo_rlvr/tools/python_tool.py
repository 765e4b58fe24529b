"""The built-in ``python`` tool: the model's code runs in the code reward's sandbox (the same layers and limits:
its own process tree, no network, a read-only jail, a seccomp filter, time, memory and process limits) and what it
printed is the tool's reply. Tool-integrated reasoning, with the isolation the code reward already has.

What the model's code does is the model's doing, and the reply says it: an exception's traceback, a timeout, a
limit it hit. Only a sandbox that cannot run at all (``SandboxError``) is the machinery's failure:
``ToolUnavailable``, and the rollout is left out of training.
"""

from __future__ import annotations

MAX_REPLY_CHARS = 4000   # a reply longer than this is cut (the completion budget pays for every token of it)


def python_tool(timeout_s: float = 5.0, memory_mb: int = 512):
    """The ``python`` tool function, with its limits bound (the brief's ``tools.python``)."""
    from grpo_rlvr.errors import SandboxError
    from grpo_rlvr.runtime.tool_failures import ToolUnavailable
    from grpo_rlvr.sandbox import SandboxLimits, run_code

    limits = SandboxLimits(timeout_s=float(timeout_s), cpu_s=float(timeout_s), memory_mb=int(memory_mb),
                           max_output_bytes=MAX_REPLY_CHARS * 4)

    def python(code: str) -> str:
        """Run Python code in a sandbox and return what it printed.

        Args:
            code: a Python program; print the values you want to see.
        """
        try:
            run = run_code(code, limits=limits)
        except SandboxError as e:
            raise ToolUnavailable(f"the python sandbox could not run: {e}") from None
        reply = run.stdout
        if run.reason:
            tail = run.stderr.strip().splitlines()[-3:]
            reply += ("\n" if reply else "") + f"[{run.reason}]" + ("\n" + "\n".join(tail) if tail else "")
        return reply if len(reply) <= MAX_REPLY_CHARS else reply[:MAX_REPLY_CHARS] + "\n[cut]"

    return python


__all__ = ["MAX_REPLY_CHARS", "python_tool"]
