"""The tool calls of a turn's rollouts run at once (``tools.concurrency``), each environment's own calls in order,
and the replies are the ones TRL's one-after-another loop gives: the same trajectories at concurrency 1 and 8.

The model is the tiny model warmed for a few seconds to call ``push n=1`` and then answer, so TRL's real tool loop
(``GRPOTrainer(environment_factory=...)`` on the rollout road) makes the calls; the environment sleeps in each call
and writes when each started and ended."""

from __future__ import annotations

from pathlib import Path

import pytest

from tool_briefs import SLOW_ROWS, calling_model, most_at_once, read_calls, slow_env_brief


@pytest.fixture(scope="module")
def caller(tmp_path_factory) -> Path:
    return calling_model(tmp_path_factory.mktemp("caller") / "model")


def roll(workspace: Path, caller: Path, concurrency: int):
    from grpo_rlvr.brief import load_brief
    from grpo_rlvr.rollout.road import release, roll_out

    p = slow_env_brief(workspace, caller, concurrency, seconds=0.25)
    try:
        drawn = roll_out(load_brief(p), SLOW_ROWS, 2, seed=0)
    finally:
        release()
    return drawn.trajectories, read_calls(workspace, concurrency)


def replies(trajectories) -> list[list[str]]:
    return [[m["content"] for m in t.completion if m.get("role") == "tool"] for t in trajectories]


@pytest.mark.e2e   # the caller fixture warms the tiny model (150 SFT steps, about 20 s)
def test_a_turns_calls_run_at_once_and_reply_as_one_at_a_time_does(workspace, caller):
    one, one_calls = roll(workspace, caller, 1)
    many, many_calls = roll(workspace, caller, 8)
    assert len(one_calls) >= 8, f"the warmed model made {len(one_calls)} calls in 16 rollouts"
    # TRL's order: never two calls at once; at 8, several of a turn's calls at once
    assert most_at_once(one_calls) == 1
    assert most_at_once(many_calls) >= 4, most_at_once(many_calls)
    # the same trajectories, call for call and reply for reply (same seed, same replies, so the same generations)
    assert [t.text for t in many] == [t.text for t in one]
    assert replies(many) == replies(one)
    # each rollout got its own environment's reply (the row's answer), never another rollout's
    for t in many:
        for reply in replies([t])[0]:
            if not reply.startswith("{"):   # an error reply (a malformed call) names no environment
                assert reply.split(":")[0] == t.prompt[-1]["content"].split("+")[0], (reply, t.prompt)
    # an environment's own calls stay in order and one at a time
    by_env: dict[int, list[dict]] = {}
    for c in many_calls:
        by_env.setdefault(c["env"], []).append(c)
    for calls in by_env.values():
        assert [c["seq"] for c in calls] == list(range(1, len(calls) + 1))
        assert most_at_once(calls) == 1


# --- the turn logic on its own: which calls start, and that nothing runs twice -------------------------------------

def _message(*calls):
    return {"role": "assistant", "content": "", "tool_calls": [
        {"type": "function", "function": {"name": n, "arguments": a}} for n, a in calls]}


def test_only_the_calls_trl_is_about_to_make_start_and_none_twice():
    """Three rollouts; TRL's loop is replayed by hand in its order: rollout 2 was rolled back (its last message
    already answered in an earlier turn), rollout 1 names a tool it does not have and passes text arguments."""
    from grpo_rlvr.trainer.concurrent_tool_calls import ConcurrentCalls

    made = []

    def tool(tag):
        def add(a, b):
            made.append((tag, a, b))
            return a + b
        return add

    rolled_back = _message(("add", {"a": 9, "b": 9}))
    completions = [[_message(("add", {"a": 1, "b": 2}), ("add", {"a": 3, "b": 4}))],
                   [_message(("nope", {"a": 1}), ("add", "a=1"))],
                   [rolled_back]]
    calls = ConcurrentCalls(completions, [{"add": tool(i)} for i in range(3)], workers=4)
    calls._started[id(rolled_back)] = rolled_back   # an earlier turn started (and answered) it
    try:
        assert calls.dicts[0]["add"](a=1, b=2) == 3
        assert calls.dicts[0]["add"](a=3, b=4) == 7
        completions[0].append({"role": "tool", "name": "add", "content": "3"})
        # the next turn: rollout 0 asks again; rollout 2 still ends with its answered message
        completions[0].append(_message(("add", {"a": 5, "b": 6})))
        assert calls.dicts[0]["add"](a=5, b=6) == 11
    finally:
        calls.close()
    assert made == [(0, 1, 2), (0, 3, 4), (0, 5, 6)]   # nothing for rollouts 1 and 2, nothing twice


def test_a_call_that_raises_raises_in_trls_loop_and_the_next_call_still_runs():
    from grpo_rlvr.trainer.concurrent_tool_calls import ConcurrentCalls

    def div(a, b):
        return a // b

    completions = [[_message(("div", {"a": 1, "b": 0}), ("div", {"a": 7, "b": 2}))]]
    calls = ConcurrentCalls(completions, [{"div": div}], workers=2)
    try:
        with pytest.raises(ZeroDivisionError):
            calls.dicts[0]["div"](a=1, b=0)
        assert calls.dicts[0]["div"](a=7, b=2) == 3
        # a call TRL makes that was not planned (arguments changed under it) is made in place
        assert calls.dicts[0]["div"](a=9, b=3) == 3
    finally:
        calls.close()
