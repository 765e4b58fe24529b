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


def test_a_worker_the_machine_gives_no_cpu_is_waited_for_not_timed_out():
    """The per-item budget is the worker's CPU, not the clock: on a machine loaded enough to starve the worker (here
    it is stopped, SIGSTOP, for longer than an item's deadline), a right answer is scored, not "timed out" (a
    plain user's lane at nice 15 and load 15 scored `x = 5` against 5 as 0). A hang still ends: the tower below
    spends its CPU budget and times out."""
    import signal
    import threading

    from grpo_rlvr.rewards.math_answer import MathWorker

    worker = MathWorker(timeout_s=0.5, rel_tol=1e-6)
    worker.wait_ready()
    pid = worker._proc.pid
    got: list = []
    os.kill(pid, signal.SIGSTOP)
    t = threading.Thread(target=lambda: got.extend(worker.check([("5", "x = 5", {})])))
    t.start()
    time.sleep(3.0)   # past the item's 2 s deadline, with no CPU given
    os.kill(pid, signal.SIGCONT)
    t.join(timeout=60)
    assert got and got[0]["status"] == "ok" and got[0]["equal"], got
    assert worker._proc.pid == pid   # the same worker: never killed
    tower = worker.check([("4", "$2^{2^{2^{2^{2^{2^{99}}}}}}$", {"hedge": None, "number": False, "evaluated": False})])
    assert tower == [{"status": "timeout"}], tower
    worker.close()
