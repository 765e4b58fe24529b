"""The math reward's worker processes end with the reward: a process that builds rewards again and again (a
notebook, a test suite) keeps no idle interpreters behind (the unprivileged CI lane once held 51 of them)."""

from __future__ import annotations

import gc
import os
import time

from grpo_rlvr.rewards import build_reward


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_the_workers_end_when_the_reward_is_dropped():
    reward = build_reward("math", {"extract": "tag"})
    got = reward.explain(["<answer>2</answer>", "<answer>3</answer>"], answer=["2", "2"])
    assert [s.score for s in got] == [1.0, 0.0]
    pool = reward.warmer.__self__   # the reward's MathPool (its warm method)
    pids = pool.pids()
    assert len(pids) >= 2 and all(_alive(p) for p in pids), pids   # a worker and the spare at least
    del reward, pool
    gc.collect()
    end = time.monotonic() + 10
    while any(_alive(p) for p in pids) and time.monotonic() < end:
        time.sleep(0.05)
    assert not any(_alive(p) for p in pids), [p for p in pids if _alive(p)]
    assert os.getpid() not in pids
