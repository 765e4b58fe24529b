"""Every tool the model may call, wrapped the same way: a time limit per call, and the world's failures told apart
from the model's (``tool_failures``).

- A call that runs past ``call_timeout_s`` is the machinery's failure: ``ToolUnavailable`` (the rollout is left out
  of training). A Python thread cannot be stopped from outside, so the call goes on in its worker thread while the
  rollout moves on; a tool that can hang should bound its own work (the built-in ``python`` tool runs in the
  sandbox, which kills its process tree at its own limit).
- ``ToolUnavailable`` raised by the tool passes through unchanged; so does any other exception (the model's doing:
  TRL sends it back as the tool's reply).
- The built-in ``python`` tool bounds its own calls (``tools.python_tool``: one program per usable core, ``Slots``
  here, each call's limit counted from its program's start, an overdue call's process tree killed).

The wrapper keeps the tool's name, signature, type hints and docstring, which TRL turns into the schema the model
sees, so the model is shown the tool as written.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import inspect
import threading

from grpo_rlvr.tool_failures import ToolUnavailable
from grpo_rlvr.trainer.concurrent_tool_calls import settle


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
        threading.Thread(target=settle, args=(future, fn, *args), kwargs=kwargs, name=f"grpo-rlvr-tool-{fn.__name__}",
                         daemon=True).start()
        try:
            return future.result(timeout=call_timeout_s)
        except concurrent.futures.TimeoutError:
            raise ToolUnavailable(f"{fn.__name__} did not answer within {call_timeout_s:g} s") from None
    return call


class Slots:
    """At most ``n`` calls at once (``with slots:``); ``peak`` is the most that ever ran together."""

    def __init__(self, n: int):
        self._sem = threading.BoundedSemaphore(n)
        self._lock = threading.Lock()
        self._now = 0
        self.peak = 0

    def __enter__(self):
        self._sem.acquire()
        with self._lock:
            self._now += 1
            self.peak = max(self.peak, self._now)

    def __exit__(self, *exc):
        with self._lock:
            self._now -= 1
        self._sem.release()


__all__ = ["Slots", "guarded"]
