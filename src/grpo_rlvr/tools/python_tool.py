"""The built-in ``python`` tool: the model's code runs in the code reward's sandbox (the same layers and limits:
its own process tree, no network, a read-only jail, a seccomp filter, time, memory and process limits) and what it
printed is the tool's reply. Tool-integrated reasoning, with the isolation the code reward already has.

What the model's code does is the model's doing, and the reply says it: an exception's traceback, a timeout, a
limit it hit. Only the machinery's failure leaves the rollout out of training (``ToolUnavailable``): a sandbox that
cannot run at all (``SandboxError``), or one that did not answer within the call's limit.

One program per usable core runs truly at once: the tool has ``cores`` slots and a pool of as many sandbox
supervisors of its own (started on first use), so a call that holds a slot never waits for a supervisor, and a
turn's calls started together (``trainer.concurrent_tool_calls``) never share a core and push a right program past
its wall-clock limit. A call waits for a slot first; its limit (``call_timeout_s``, never below twice the program's
own limit and 10 s, so the sandbox's own timeout answers first: an endless loop is the model's failure, scored)
counts from the moment its program is sent to its supervisor. A call past it has its supervisor killed, which
frees its slot at once, and is the machinery's failure.
"""

from __future__ import annotations

import atexit
import os
import threading

MAX_REPLY_CHARS = 4000   # a reply longer than this is cut (the completion budget pays for every token of it)


class _Runner:
    """The slots and the sandbox pool of every python tool of this process that has ``cores`` slots."""

    def __init__(self, cores: int):
        from grpo_rlvr.sandbox.isolation.pool import Pool
        from grpo_rlvr.tools.guard import Slots

        self.cores = cores
        self.slots = Slots(cores)
        self.pool = Pool(cores)
        self.owner_pid = os.getpid()

    def close(self) -> None:
        self.pool.close()


_RUNNERS: dict[int, _Runner] = {}
_LOCK = threading.Lock()


def _runner(cores: int) -> _Runner:
    with _LOCK:
        runner = _RUNNERS.get(cores)
        if runner is None or runner.owner_pid != os.getpid():  # forked since: this process starts its own
            runner = _RUNNERS[cores] = _Runner(cores)
        return runner


@atexit.register
def close_pools() -> None:
    """Stop every python tool's supervisors (at exit; tests call it to free a simulated node's pool)."""
    with _LOCK:
        runners = [r for r in _RUNNERS.values() if r.owner_pid == os.getpid()]
        _RUNNERS.clear()
    for runner in runners:
        runner.close()


def call_limit(timeout_s: float, call_timeout_s: float | None) -> float | None:
    """The per-call limit of a python call: the brief's ``call_timeout_s``, raised to twice the program's own limit
    plus 10 s, so the sandbox's timeout always answers first (None: no per-call limit)."""
    if call_timeout_s is None:
        return None
    return max(float(call_timeout_s), 2 * float(timeout_s) + 10.0)


def python_tool(timeout_s: float = 5.0, memory_mb: int = 512, *, call_timeout_s: float | None = None,
                cores: int | None = None):
    """The ``python`` tool function, with its limits bound (the brief's ``tools.python`` and ``call_timeout_s``);
    ``cores``: its slots (default: the cores this process may use, ``cpu_threads.usable_cores``)."""
    from grpo_rlvr.cpu_threads import usable_cores
    from grpo_rlvr.errors import SandboxError
    from grpo_rlvr.sandbox import SandboxLimits
    from grpo_rlvr.sandbox._run import run_code_in
    from grpo_rlvr.sandbox.isolation.pool import Overdue
    from grpo_rlvr.tool_failures import ToolUnavailable

    limits = SandboxLimits(timeout_s=float(timeout_s), cpu_s=float(timeout_s), memory_mb=int(memory_mb),
                           max_output_bytes=MAX_REPLY_CHARS * 4)
    limit = call_limit(timeout_s, call_timeout_s)
    runner = _runner(cores or usable_cores())

    def python(code: str) -> str:
        """Run Python code in a sandbox and return what it printed.

        Args:
            code: a Python program; print the values you want to see.
        """
        with runner.slots:
            try:
                run = run_code_in(runner.pool, code, limits=limits, request_timeout_s=limit)
            except Overdue:
                raise ToolUnavailable(f"python did not answer within {limit:g} s of its program's start") from None
            except SandboxError as e:
                raise ToolUnavailable(f"the python sandbox could not run: {e}") from None
        reply = run.stdout
        if run.reason:
            tail = run.stderr.strip().splitlines()[-3:]
            reply += ("\n" if reply else "") + f"[{run.reason}]" + ("\n" + "\n".join(tail) if tail else "")
        return reply if len(reply) <= MAX_REPLY_CHARS else reply[:MAX_REPLY_CHARS] + "\n[cut]"

    python.slots = runner.slots
    python.pool = runner.pool
    return python


__all__ = ["MAX_REPLY_CHARS", "call_limit", "close_pools", "python_tool"]
