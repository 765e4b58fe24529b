"""The zygote pool: a dead zygote is replaced, a broken sandbox raises ``SandboxError``."""

from __future__ import annotations

import threading

import pytest

from grpo_rlvr.errors import SandboxError
from grpo_rlvr.sandbox import SandboxLimits, _pool
from grpo_rlvr.sandbox._run import run_batch

OK = ("def f(x):\n    return x\n", ["assert f(2) == 2"])
LIMITS = SandboxLimits(timeout_s=3.0)


def test_dead_zygote_is_respawned():
    pool = _pool.Pool(1)
    try:
        assert run_batch([OK], LIMITS, 1, pool)[0].passed == 1
        pool._idle[0].proc.kill()
        pool._idle[0].proc.wait()
        assert run_batch([OK], LIMITS, 1, pool)[0].passed == 1
    finally:
        pool.close()


def test_zygote_dying_mid_request_is_retried():
    pool = _pool.Pool(1)
    try:
        run_batch([OK], LIMITS, 1, pool)
        victim = pool._idle[0].proc
        slow = ("import time\ndef f(x):\n    time.sleep(0.5)\n    return x\n", ["assert f(2) == 2"])
        timer = threading.Timer(0.2, victim.kill)
        timer.start()
        assert run_batch([slow], LIMITS, 1, pool)[0].passed == 1
        timer.join()
        assert victim.poll() is not None and pool._idle[0].proc is not victim
    finally:
        pool.close()


def test_zygote_that_cannot_start_raises_sandbox_error(monkeypatch):
    monkeypatch.setattr(_pool.sys, "executable", "/bin/false")
    pool = _pool.Pool(1)
    with pytest.raises(SandboxError, match="zygote failed to start"):
        run_batch([OK], LIMITS, 1, pool)
    pool.close()


def test_supervisor_failure_raises_sandbox_error():
    pool = _pool.Pool(1)
    try:
        with pytest.raises(SandboxError, match="sandbox is broken"):
            pool.run({"mode": "eval", "program": "x = 1", "probes": [], "stdin": [""], "limits": {"timeout_s": 1.0}})
        assert run_batch([OK], LIMITS, 1, pool)[0].passed == 1  # and the zygote still serves
    finally:
        pool.close()


def test_shared_pool_is_rebuilt_after_fork(monkeypatch):
    first = _pool.shared_pool(1)
    monkeypatch.setattr(first, "owner_pid", -1)
    assert _pool.shared_pool(1) is not first
