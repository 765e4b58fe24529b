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
import threading

from grpo_rlvr.runtime.tool_failures import ToolUnavailable


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
        # a thread of its own, not a pool's: a call never waits behind others (its limit counts from its start),
        # and a call left running past its limit holds no worker another call needs
        future = concurrent.futures.Future()

        def run():
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as e:  # noqa: BLE001 - raised again in the caller's thread
                future.set_exception(e)
        threading.Thread(target=run, name=f"grpo-rlvr-tool-{fn.__name__}", daemon=True).start()
        try:
            return future.result(timeout=call_timeout_s)
        except concurrent.futures.TimeoutError:
            raise ToolUnavailable(f"{fn.__name__} did not answer within {call_timeout_s:g} s") from None
    return call


__all__ = ["guarded"]
