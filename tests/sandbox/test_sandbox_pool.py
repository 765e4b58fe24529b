"""The supervisor pool: a dead supervisor is replaced, a broken sandbox raises ``SandboxError``."""

from __future__ import annotations

import threading

import pytest

from grpo_rlvr.errors import SandboxError
from grpo_rlvr.sandbox import SandboxLimits
from grpo_rlvr.sandbox._run import run_batch
from grpo_rlvr.sandbox.isolation import pool as _pool

OK = ("def f(x):\n    return x\n", ["assert f(2) == 2"])
LIMITS = SandboxLimits(timeout_s=3.0)


def test_dead_supervisor_is_respawned():
    pool = _pool.Pool(1)
    try:
        assert run_batch([OK], LIMITS, 1, pool)[0].passed == 1
        pool._idle[0].proc.kill()
        pool._idle[0].proc.wait()
        assert run_batch([OK], LIMITS, 1, pool)[0].passed == 1
    finally:
        pool.close()


def test_supervisor_dying_mid_request_is_retried():
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


def test_supervisor_that_cannot_start_raises_sandbox_error(monkeypatch):
    monkeypatch.setattr(_pool.sys, "executable", "/bin/false")
    pool = _pool.Pool(1)
    with pytest.raises(SandboxError, match="supervisor failed to start"):
        run_batch([OK], LIMITS, 1, pool)
    pool.close()


def test_supervisor_failure_raises_sandbox_error():
    pool = _pool.Pool(1)
    try:
        with pytest.raises(SandboxError, match="sandbox is broken"):
            pool.run({"mode": "eval", "program": "x = 1", "probes": [], "stdin": [""], "keep_stdout": [0],
                      "limits": {"timeout_s": 1.0, "sample_timeout_s": 2.0, "max_output_bytes": 1024}})
        assert run_batch([OK], LIMITS, 1, pool)[0].passed == 1  # and the supervisor still serves
    finally:
        pool.close()


def test_shared_pool_is_rebuilt_after_fork(monkeypatch):
    first = _pool.shared_pool(1)
    monkeypatch.setattr(first, "owner_pid", -1)
    assert _pool.shared_pool(1) is not first


def test_supervisor_that_could_not_clean_up_is_replaced_not_reused(monkeypatch):
    # In the jail clean-up is one umount and cannot fail here, so the supervisor's "retire" mark is added to a
    # real reply, as _supervisor adds it when removing the working directory fails.
    pool = _pool.Pool(1)
    real = _pool._Supervisor.request

    def request(self, message, timeout_s):
        reply = real(self, message, timeout_s)
        reply["reports"][0]["retire"] = "the working directory could not be removed: test"
        return reply

    try:
        run_batch([OK], LIMITS, 1, pool)
        first = pool._idle[0].proc
        monkeypatch.setattr(_pool._Supervisor, "request", request)
        assert run_batch([OK], LIMITS, 1, pool)[0].passed == 1
        assert pool._idle == [] and first.poll() is not None  # closed, not checked back in
        monkeypatch.setattr(_pool._Supervisor, "request", real)
        assert run_batch([OK], LIMITS, 1, pool)[0].passed == 1
        assert pool._idle[0].proc is not first
    finally:
        pool.close()


def test_program_that_loses_the_supervisor_twice_scores_zero_not_an_error(monkeypatch):
    pool = _pool.Pool(1)

    def lost(self, message, timeout_s):
        self.proc.kill()  # as if the program had killed its supervisor: a real dead process, twice
        self.proc.wait()
        raise _pool._framing.ChannelError("the supervisor exited (code -9)")

    try:
        monkeypatch.setattr(_pool._Supervisor, "request", lost)
        verdict = run_batch([OK], LIMITS, 1, pool)[0]
        assert verdict.passed == 0 and "lost twice" in verdict.reason
    finally:
        pool.close()


@pytest.mark.parametrize("signal_name", ["SIGKILL", "SIGSTOP"])
def test_a_program_that_kills_or_freezes_the_template_scores_zero_and_the_next_is_judged(signal_name):
    # Only reachable with degraded isolation as root (same uid, no pid namespace, no Landlock scoping), which
    # the policy refuses unless accepted: the program then finds its sibling, the template, and signals it.
    # Both are judged after the program has exited, by asking the template: a SIGKILL that kill() has sent but
    # the template has not yet acted on used to let the killing sample score on a loaded machine, and a
    # SIGSTOPped template is a live process that waitpid() reports as fine.
    pool = _pool.Pool(1, without={"namespaces", "landlock", "uid"})
    program = ("import os, signal\ndef f(x):\n    supervisor = os.getppid()\n"
               "    for pid in open(f'/proc/{supervisor}/task/{supervisor}/children').read().split():\n"
               "        if int(pid) != os.getpid():  # its sibling: the template\n"
               f"            os.kill(int(pid), signal.{signal_name})\n    return x\n")
    try:
        [lost] = run_batch([(program, ["assert f(2) == 2"])], LIMITS, 1, pool, allow_degraded=True)
        assert lost.passed == 0 and "lost twice" in lost.reason
        assert run_batch([OK], LIMITS, 1, pool, allow_degraded=True)[0].passed == 1
    finally:
        pool.close()
