"""Every tool the model may call, wrapped the same way: a time limit per call, and the world's failures told apart
from the model's (``runtime.tool_failures``).

- A call that runs past ``call_timeout_s`` is the machinery's failure: ``ToolUnavailable`` (the rollout is left out
  of training). A Python thread cannot be stopped from outside, so the call goes on in its worker thread while the
  rollout moves on; a tool that can hang should bound its own work (the built-in ``python`` tool runs in the
  sandbox, which kills its process tree at its own limit).
- ``ToolUnavailable`` raised by the tool passes through unchanged; so does any other exception (the model's doing:
  TRL sends it back as the tool's reply).

The wrapper keeps the tool's name, signature, type hints and docstring, which TRL turns into the schema the model
sees, so the model is shown the tool as written.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import inspect

from grpo_rlvr.runtime.tool_failures import ToolUnavailable

_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=16, thread_name_prefix="grpo-rlvr-tool")


def guarded(fn, call_timeout_s: float | None):
    """``fn`` with a per-call time limit (None: none). Sync and async tools alike."""
    if call_timeout_s is None:
        return fn
    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def call_async(*args, **kwargs):
            try:
                return await asyncio.wait_for(fn(*args, **kwargs), call_timeout_s)
            except TimeoutError:
                raise ToolUnavailable(f"{fn.__name__} did not answer within {call_timeout_s:g} s") from None
        return call_async

    @functools.wraps(fn)
    def call(*args, **kwargs):
        future = _POOL.submit(fn, *args, **kwargs)
        try:
            return future.result(timeout=call_timeout_s)
        except concurrent.futures.TimeoutError:
            raise ToolUnavailable(f"{fn.__name__} did not answer within {call_timeout_s:g} s") from None
    return call


__all__ = ["guarded"]
