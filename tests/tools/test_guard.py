"""A tool's failure outside the model's control leaves its rollout unscored, never scored 0: a call past its time
limit, a tool that raises ToolUnavailable, an environment whose reset fails. The mark is this process's: a model
that writes it, or another process's mark, is not taken for it."""

from __future__ import annotations

import asyncio
import time

import pytest

from grpo_rlvr.rewards import build_reward
from grpo_rlvr.tool_failures import NONCE, UNAVAILABLE, ToolUnavailable, unavailable_in
from grpo_rlvr.tools.build import marking, resetting
from grpo_rlvr.tools.guard import guarded


def slow(x: int) -> int:
    """Sleep.

    Args:
        x: seconds.
    """
    time.sleep(x)
    return x


def test_a_call_past_its_limit_is_unavailable_and_keeps_the_tool_as_written():
    tool = guarded(slow, 0.2)
    assert tool(0) == 0
    with pytest.raises(ToolUnavailable, match=f"tool unavailable {NONCE}.*slow did not answer within 0.2 s"):
        tool(2)
    assert tool.__name__ == "slow" and tool.__doc__ == slow.__doc__
    from transformers.utils import get_json_schema

    assert get_json_schema(tool) == get_json_schema(slow)


def test_an_async_tool_past_its_limit_is_unavailable():
    async def wait(x: float) -> float:
        """Wait.

        Args:
            x: seconds.
        """
        await asyncio.sleep(x)
        return x

    with pytest.raises(ToolUnavailable):
        asyncio.run(guarded(wait, 0.1)(1.0))


def test_only_this_processs_mark_in_a_tool_message_counts():
    msg = str(ToolUnavailable("service down"))
    done = [{"role": "assistant", "content": ""}, {"role": "tool", "name": "add", "content": f"{{'error': '{msg}'}}"}]
    assert unavailable_in(done) == "tool add unavailable: service down"
    forged = [{"role": "assistant", "content": msg}]                                  # the model wrote it
    other = [{"role": "tool", "name": "add", "content": msg.replace(NONCE, "0" * 24)}]  # another process's
    assert unavailable_in(forged) is None and unavailable_in(other) is None and unavailable_in("text") is None


def test_a_failed_reset_marks_its_environment_and_every_reward_says_none():
    class Env:
        def reset(self, **row):
            raise ConnectionError("down")

        def push(self, n: int) -> int:
            """Push.

            Args:
                n: a number.
            """
            raise ToolUnavailable("abacus jammed")

    env, fine = Env(), Env()
    env.reset = resetting(env, env.reset)
    assert env.reset(answer="2") is None and "environment reset failed: ConnectionError: down" in getattr(env, UNAVAILABLE)
    setattr(fine, UNAVAILABLE, None)
    push = marking(fine, fine.push)
    with pytest.raises(ToolUnavailable):
        push(1)
    assert getattr(fine, UNAVAILABLE) == "abacus jammed"
    completions = [[{"role": "assistant", "content": "<answer>3</answer>"}]] * 3
    healthy = type("Healthy", (), {})()
    for name in ("format", "exact_match"):
        scored = build_reward(name).explain(completions, answer=["3"] * 3, environments=[env, fine, healthy])
        assert [s.score for s in scored[:2]] == [None, None] and scored[2].score == 1.0
        assert scored[0].outside.startswith("environment reset failed") and scored[1].outside == "abacus jammed"
