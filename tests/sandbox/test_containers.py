"""A default container (no user namespaces, no mounts): the unprivileged layers hold, or the sandbox refuses.

``Pool(without={"namespaces"})`` acts as such a machine from any machine; ``scripts/test-container.sh`` also
runs every sandbox test under a seccomp filter that refuses namespaces and mounts as Docker's does. Each
attack of the red team that worked there before: reading the tests file, the parent's environment and heap
through ``/proc``, a TCP listener on 127.0.0.1, files left in ``/tmp`` and ``/dev/shm``; and in every mode:
AF_VSOCK, this project's own source, leftover per-user directories.
"""

from __future__ import annotations

import os
import resource
import socket
import threading
import uuid
from pathlib import Path

import pytest

import grpo_rlvr
from grpo_rlvr.errors import SandboxError
from grpo_rlvr.sandbox import (
    SandboxLimits,
    degraded_isolation_notes,
    isolation_problems,
)
from grpo_rlvr.sandbox._run import run_batch
from grpo_rlvr.sandbox.isolation import pool as pool_module
from grpo_rlvr.sandbox.isolation.pool import Pool

LIMITS = SandboxLimits(timeout_s=10.0, cpu_s=10.0)
CHEAT = ["assert solve(3) == 271828"]


@pytest.fixture(scope="module")
def container():
    pool = Pool(1, without={"namespaces"})
    yield pool
    pool.close()


@pytest.fixture(params=[(), ("namespaces",)], ids=["all-layers", "no-namespaces"], scope="module")
def every_mode(request):
    pool = Pool(1, without=request.param)
    yield pool
    pool.close()


def probe(pool, program: str, test: str = "assert probe() == 'denied'"):
    [verdict] = run_batch([(program, [test])], LIMITS, 1, pool)
    return verdict


def denied(paths) -> str:
    """A program whose probe() says 'denied' when every path in ``paths`` cannot be opened."""
    return (f"def probe():\n    for path in {paths!r}:\n        try:\n            open(path, 'rb').read(1)\n"
            "            return 'read ' + path\n        except OSError:\n            pass\n    return 'denied'\n")


def test_the_container_mode_holds_with_landlock_and_seccomp(container):
    verdict = probe(container, "def probe():\n    return 'denied'\n")
    assert {"landlock_fs", "seccomp", "tmpdir", "env_scrubbed", "nondumpable"} <= set(verdict.layers)
    assert not {"pidns", "netns", "fs_jail"} & set(verdict.layers)
    assert isolation_problems(verdict.layers) == []


def test_the_tests_file_and_the_parents_proc_are_out_of_reach(container, monkeypatch):
    monkeypatch.setenv("GRPO_TEST_SECRET", "hunter2-" + uuid.uuid4().hex)
    parent = os.getpid()
    paths = [os.path.abspath(__file__), f"/proc/{parent}/environ", f"/proc/{parent}/mem", f"/proc/{parent}/cmdline",
             "/proc/self/mem", "/proc/1/environ", "/etc/passwd", str(Path.home() / ".bashrc")]
    assert probe(container, denied(paths)).passed == 1


def test_signals_do_not_reach_the_parent(every_mode):
    program = (f"import os, signal\ndef probe():\n    try:\n        os.kill({os.getpid()}, 0)\n"
               "        return 'reached'\n    except OSError:\n        return 'denied'\n")
    assert probe(every_mode, program).passed == 1


def test_no_tcp_to_a_listener_on_loopback(every_mode):
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.05)
    port = server.getsockname()[1]
    got, done = [], threading.Event()

    def accept():
        while not done.is_set():
            try:
                got.append(server.accept())
            except OSError:
                pass

    listener = threading.Thread(target=accept)
    listener.start()
    try:
        program = (f"import socket\ndef probe():\n    try:\n        socket.create_connection(('127.0.0.1', {port}), 1)\n"
                   "        return 'connected'\n    except OSError:\n        return 'denied'\n")
        assert probe(every_mode, program).passed == 1
    finally:
        done.set()
        listener.join()
        server.close()
    assert got == []


def test_no_socket_family_but_unix_in_any_mode(every_mode):
    program = ("import socket\ndef probe():\n    made = []\n"
               "    for family in (socket.AF_INET, socket.AF_INET6, 40, 16, 17):  # AF_VSOCK, AF_NETLINK, AF_PACKET\n"
               "        try:\n            socket.socket(family, socket.SOCK_DGRAM if family != 40 else socket.SOCK_STREAM).close()\n"
               "            made.append(family)\n        except OSError:\n            pass\n"
               "    a, b = socket.socketpair()\n    return made\n")
    assert probe(every_mode, program, "assert probe() == []").passed == 1


def test_no_unix_socket_outside_the_execution_in_any_mode(every_mode, tmp_path):
    # Landlock does not guard a socket's path: without the filter a program reached the trainer's own sockets.
    path = str(tmp_path / "trainer.sock")
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    os.chmod(path, 0o777)
    os.chmod(tmp_path, 0o755)
    server.listen()
    server.settimeout(0.05)
    program = (f"import socket\ndef probe():\n    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
               f"    for attempt in (lambda: socket.socket(socket.AF_UNIX).connect({path!r}),\n"
               f"                    lambda: s.sendto(b'x', {path!r}), lambda: s.sendmsg([b'x'], [], 0, {path!r})):\n"
               "        try:\n            attempt()\n            return 'reached'\n        except OSError:\n"
               "            pass\n    a, b = socket.socketpair()\n    a.sendall(b'ok')\n"
               "    return 'denied' if b.recv(2) == b'ok' else 'no socketpair'\n")
    try:
        assert probe(every_mode, program).passed == 1
        with pytest.raises(OSError):
            server.accept()
    finally:
        server.close()


def test_nothing_is_left_in_tmp_or_dev_shm(container):
    names = [f"/tmp/grpo-left-{uuid.uuid4().hex}", f"/dev/shm/grpo-left-{uuid.uuid4().hex}"]
    program = (f"def probe():\n    for path in {names!r}:\n        try:\n            open(path, 'w').write('x')\n"
               "            return 'wrote'\n        except OSError:\n            pass\n    return 'denied'\n")
    assert probe(container, program).passed == 1
    assert not any(os.path.exists(n) for n in names)


def test_the_projects_own_source_is_not_readable(every_mode):
    package = os.path.dirname(os.path.realpath(grpo_rlvr.__file__))
    paths = [os.path.join(package, "sandbox", "judging/plan.py"), os.path.join(package, "__init__.py")]
    program = denied(paths) + ("def found():\n    try:\n        import grpo_rlvr.gate.check\n        return 'imported'\n"
                               "    except ImportError:\n        return None\n")
    verdict = run_batch([(program, ["assert probe() == 'denied'", "assert found() is None"])], LIMITS, 1, every_mode)[0]
    assert verdict.passed == 2, verdict.reason


def test_per_user_directories_are_removed(every_mode):
    tmp = os.environ.get("TMPDIR") or "/tmp"
    before = {n for n in os.listdir(tmp) if n.startswith("grpo-rlvr-sandbox-")}
    pool = Pool(1, without=every_mode.without)
    try:
        assert probe(pool, "def probe():\n    open('x', 'w').write('x')\n    return 'denied'\n").passed == 1
    finally:
        pool.close()
    assert {n for n in os.listdir(tmp) if n.startswith("grpo-rlvr-sandbox-")} <= before


def test_a_killed_supervisors_directory_is_removed_by_the_pool():
    pool = Pool(1, without={"namespaces"})
    try:
        assert probe(pool, "def probe():\n    open('x', 'w').write('x')\n    return 'denied'\n").passed == 1
        [supervisor] = pool._idle
        workbase = supervisor.workbase
        assert os.path.isdir(workbase)
        supervisor.proc.kill()  # no chance to clean up after itself (the OOM killer, say)
        supervisor.proc.wait()
        assert probe(pool, "def probe():\n    return 'denied'\n").passed == 1  # replaced, and the old one's removed
        assert not os.path.exists(workbase)
    finally:
        pool.close()


# --- too little isolation: refuse, unless accepted ------------------------------------------------------------


@pytest.mark.parametrize(("without", "missing"), [({"namespaces", "landlock", "uid"}, "no Landlock"),
                                                  ({"seccomp"}, "no seccomp filter"),
                                                  ({"namespaces", "proc"}, "no sweep")],
                         ids=["no-landlock", "no-seccomp", "no-sweep"])
def test_too_little_isolation_refuses_to_score(without, missing):
    pool = Pool(1, without=without)
    try:
        with pytest.raises(SandboxError, match="allow_degraded_isolation") as info:
            run_batch([("x = 1", ["assert x == 1"])], LIMITS, 1, pool)
        assert "cannot isolate programs on this machine" in str(info.value) and missing in str(info.value)
        [verdict] = run_batch([("x = 1", ["assert x == 1"])], LIMITS, 1, pool, allow_degraded=True)
        assert verdict.passed == 1 and any(missing in p for p in isolation_problems(verdict.layers))
    finally:
        pool.close()


def test_accepted_degraded_isolation_is_recorded_by_the_reward(monkeypatch):
    from grpo_rlvr.gate.check import GateResult
    from grpo_rlvr.rewards import build_reward

    weak = Pool(1, without={"namespaces", "landlock", "uid"})
    monkeypatch.setattr(pool_module, "_shared", weak)
    monkeypatch.setattr(weak, "owner_pid", os.getpid())
    try:
        refusing = build_reward("unit_tests", {"timeout_s": 10})
        with pytest.raises(SandboxError, match="allow_degraded_isolation"):
            refusing.explain(["def f():\n    return 1\n"], tests=[["assert f() == 1"]])
        accepting = build_reward("unit_tests", {"timeout_s": 10, "allow_degraded_isolation": True})
        [scored] = accepting.explain(["def f():\n    return 1\n"], tests=[["assert f() == 1"]])
    finally:
        weak.close()
    assert scored.score == 1.0
    note = accepting.notes["degraded_isolation"]
    assert note.startswith("accepted by allow_degraded_isolation: no file-system jail and no Landlock")
    recorded = degraded_isolation_notes([{"name": "unit_tests", "notes": dict(accepting.notes)}])
    assert recorded == {"unit_tests": note}
    gate = GateResult(Path("."), [], {}, {}, recorded)
    assert f"Scored by unit_tests with degraded sandbox isolation, {note}" in gate.format()
    assert gate.to_dict()["degraded_isolation"] == recorded


@pytest.fixture(scope="module")
def trainers_uid():
    """No namespaces, and executions keep our uid (a plain-user trainer in a default container)."""
    pool = Pool(1, without={"namespaces", "uid"})
    yield pool
    pool.close()


REACH_OTHERS = """import os, resource, socket
def probe():
    reached = []
    for label, pid in (("trainer", {trainer}), ("supervisor", os.getppid())):
        if pid == 0:  # PID 1 of its own namespace: no parent it can name (0 would mean itself)
            continue
        attempts = {{
            "prlimit cpu": lambda: resource.prlimit(pid, resource.RLIMIT_CPU, (1, 1)),
            "prlimit as": lambda: resource.prlimit(pid, resource.RLIMIT_AS, (1 << 20, 1 << 20)),
            "prlimit fsize": lambda: resource.prlimit(pid, resource.RLIMIT_FSIZE, (0, 0)),
            "renice": lambda: os.setpriority(os.PRIO_PROCESS, pid, 19),
            "affinity": lambda: os.sched_setaffinity(pid, {{min(os.sched_getaffinity(0))}}),
            "scheduler": lambda: os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0)),
        }}
        for name, attempt in attempts.items():
            try:
                attempt()
                reached.append(label + " " + name)
            except OSError:
                pass
    for name, attempt in {{"renice user": lambda: os.setpriority(os.PRIO_USER, 0, 19),
                           "renice group": lambda: os.setpriority(os.PRIO_PGRP, 0, 19),
                           "abstract bind": lambda: socket.socket(socket.AF_UNIX).bind(b"\\0grpo-covert-1")}}.items():
        try:
            attempt()
            reached.append(name)
        except OSError:
            pass
    return reached
"""


@pytest.fixture(params=[(), ("namespaces",), ("namespaces", "uid")],
                ids=["all-layers", "no-namespaces", "trainers-uid"], scope="module")
def each_uid_mode(request):
    pool = Pool(1, without=request.param)
    yield pool
    pool.close()


def _own_settings():
    return (resource.getrlimit(resource.RLIMIT_CPU), resource.getrlimit(resource.RLIMIT_AS),
            resource.getrlimit(resource.RLIMIT_FSIZE), os.getpriority(os.PRIO_PROCESS, 0),
            os.sched_getaffinity(0), os.sched_getscheduler(0))


def test_no_execution_changes_another_process_by_pid(each_uid_mode):
    # Without namespaces and at our uid, prlimit/setpriority/sched_* on our pid needed neither /proc nor a signal:
    # one completion could kill the trainer (RLIMIT_CPU) or make its next write fail (RLIMIT_FSIZE).
    before = _own_settings()
    verdict = probe(each_uid_mode, REACH_OTHERS.format(trainer=os.getpid()), "assert probe() == []")
    assert _own_settings() == before
    assert (verdict.passed, verdict.total) == (1, 1), verdict.reason
    assert probe(each_uid_mode, "def probe():\n    return 'denied'\n").passed == 1  # the next sample scores


def test_a_program_still_sets_its_own_limits_priority_and_affinity(trainers_uid):
    program = ("import os, resource\ndef probe():\n    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
               "    resource.setrlimit(resource.RLIMIT_NOFILE, (soft - 1, hard))\n"
               "    os.setpriority(os.PRIO_PROCESS, 0, 10)\n"
               "    os.sched_setaffinity(0, os.sched_getaffinity(0))\n"
               "    return resource.getrlimit(resource.RLIMIT_NOFILE)[0] == soft - 1 and os.getpriority(os.PRIO_PROCESS, 0)\n")
    verdict = probe(trainers_uid, program, "assert probe() == 10")
    assert verdict.passed == 1, verdict.reason


def test_the_process_cap_counts_only_the_samples_tree(trainers_uid):
    # At our uid RLIMIT_NPROC counts every task of the uid: with 80 threads of the trainer alive, a correct
    # program starting 8 threads failed under a cap of 64. (Root ignores RLIMIT_NPROC: this bites a plain user.)
    stop = threading.Event()
    threads = [threading.Thread(target=stop.wait) for _ in range(80)]
    for t in threads:
        t.start()
    try:
        program = ("import threading\ndef probe():\n    done = []\n"
                   "    ts = [threading.Thread(target=done.append, args=(i,)) for i in range(8)]\n"
                   "    for t in ts:\n        t.start()\n    for t in ts:\n        t.join()\n    return sorted(done)\n")
        verdict = probe(trainers_uid, program, "assert probe() == list(range(8))")
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert verdict.passed == 1, verdict.reason
