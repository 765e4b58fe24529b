"""The tool calls of different rollouts run at the same time; TRL's tool loop makes them one after another.

TRL 1.16's ``_tool_call_loop`` walks the rollouts that asked for tools in index order and calls each synchronous tool
where it stands, so a turn of 64 rollouts whose environment takes a second a call lasts a minute. ``ConcurrentCalls``
keeps TRL's loop, its order and its replies, and starts every call of a turn at once:

- At the first call of a turn it reads each rollout's last message; for every assistant message with tool calls
  that no earlier turn started, it starts one task that makes that message's calls in order, with the same
  arguments, on that rollout's own tools. An environment instance therefore still sees its calls one at a time and
  in the model's order; different rollouts' calls overlap, up to ``workers`` at once.
- TRL then calls each tool as before, and each call returns (or raises) what its task got.
- Only messages TRL is about to answer are started: a turn's messages are new (each is started once, by identity),
  last in their rollout, and hold calls. A rollout whose tool replies TRL rolled back (past the completion budget)
  keeps an already-started message last, so nothing runs twice; a loop that stops at ``max_tool_calling_iterations``
  never calls a tool again, so nothing of the next turn starts.
- A call TRL would not make is not started either: a tool name the rollout does not have (TRL replies "not found"),
  arguments that are not a mapping, an async tool (TRL gathers those itself).
- If TRL ever asks for a call the task did not plan (another TRL), the task is waited for and the call is made in
  place: correct, only not concurrent.

Each call keeps its own time limit (``guard``), counted from when it starts.
"""

from __future__ import annotations

import concurrent.futures
import functools
import threading
from dataclasses import dataclass, field


@dataclass
class _Planned:
    name: str
    arguments: dict
    outcome: concurrent.futures.Future = field(default_factory=concurrent.futures.Future)


@dataclass
class _Turn:
    message: dict                    # the assistant message whose calls these are
    calls: list[_Planned]
    done: concurrent.futures.Future  # the task that makes them, in order
    next: int = 0                    # the next call TRL will ask for


def settle(future: concurrent.futures.Future, fn, *args, **kwargs) -> None:
    """``future`` gets what ``fn(*args, **kwargs)`` returns, or what it raises (raised again by its reader)."""
    try:
        future.set_result(fn(*args, **kwargs))
    except BaseException as e:  # noqa: BLE001 - handed to the reader, as if the call had raised there
        future.set_exception(e)


def _run_in_order(tools: dict, calls: list[_Planned]) -> None:
    for call in calls:
        settle(call.outcome, tools[call.name], **call.arguments)


class ConcurrentCalls:
    """For one ``_tool_call_loop``: per-rollout tool dicts (``dicts``) whose calls start together, turn by turn.

    ``completions``: TRL's per-rollout message lists, which its loop extends in place; ``sync_dicts``: TRL's
    per-rollout synchronous tools (``name -> callable``)."""

    def __init__(self, completions: list[list[dict]], sync_dicts: list[dict], workers: int):
        self._completions = completions
        self._tools = sync_dicts
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="grpo-rlvr-turn")
        self._lock = threading.Lock()
        self._turns: dict[int, _Turn] = {}
        self._started: dict[int, dict] = {}   # id -> every message started, kept alive so ids stay unique
        self.dicts = [{name: self._proxy(i, name) for name in tools} for i, tools in enumerate(sync_dicts)]

    def _proxy(self, rollout: int, name: str):
        original = self._tools[rollout][name]

        def call(**arguments):
            return self._answer(rollout, name, arguments)
        return functools.update_wrapper(call, original)

    def _answer(self, rollout: int, name: str, arguments: dict):
        with self._lock:
            turn = self._turns.get(rollout)
            last = self._last(rollout)
            if turn is None or turn.message is not last:
                self._start_turn()
                turn = self._turns.get(rollout)
            planned = None
            if turn is not None and turn.message is last and turn.next < len(turn.calls):
                candidate = turn.calls[turn.next]
                if candidate.name == name and _same(candidate.arguments, arguments):
                    planned, turn.next = candidate, turn.next + 1
        if planned is not None:
            return planned.outcome.result()
        if turn is not None:            # not what was planned: let the rollout's task finish, then call in place
            turn.done.result()
        return self._tools[rollout][name](**arguments)

    def _last(self, rollout: int):
        msgs = self._completions[rollout] if rollout < len(self._completions) else None
        return msgs[-1] if msgs else None

    def _start_turn(self) -> None:
        """Start the calls of every rollout's new last assistant message (the lock is held)."""
        for i in range(min(len(self._completions), len(self._tools))):
            last = self._last(i)
            if not (isinstance(last, dict) and last.get("role") == "assistant" and last.get("tool_calls")):
                continue
            if self._started.get(id(last)) is last:
                continue
            self._started[id(last)] = last
            calls = []
            for call in last["tool_calls"]:
                fn = call.get("function") if isinstance(call, dict) else None
                if not (isinstance(call, dict) and call.get("type") == "function" and isinstance(fn, dict)):
                    continue
                if fn.get("name") in self._tools[i] and isinstance(fn.get("arguments"), dict):
                    calls.append(_Planned(fn["name"], fn["arguments"]))
            self._turns[i] = _Turn(last, calls, self._pool.submit(_run_in_order, self._tools[i], calls))

    def close(self) -> None:
        """Wait for every started call (TRL has read them all when its loop returns) and free the threads."""
        self._pool.shutdown(wait=True)


def _same(planned: dict, given: dict) -> bool:
    if planned is given:
        return True
    try:
        return bool(planned == given)
    except Exception:  # noqa: BLE001 - arguments whose comparison raises are treated as different
        return False


__all__ = ["ConcurrentCalls", "settle"]
