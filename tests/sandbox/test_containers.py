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
import tempfile
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
    tmps = {os.environ.get("TMPDIR") or "/tmp", "/tmp"}

    def ours() -> set:
        return {os.path.join(t, n) for t in tmps for n in os.listdir(t) if n.startswith("grpo-rlvr-sandbox-")}

    before = ours()
    pool = Pool(1, without=every_mode.without)
    try:
        assert probe(pool, "def probe():\n    open('x', 'w').write('x')\n    return 'denied'\n").passed == 1
    finally:
        pool.close()
    assert ours() <= before


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
                           "renice group": lambda: os.setpriority(os.PRIO_PGRP, 0, 19)}}.items():
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
    # Its niceness one step up from where it starts (the trainer's, capped at 19): a plain user may only raise it,
    # and a test run under `nice -n 15` starts there (a fixed 10 was a PermissionError for a plain user, not root).
    want = min(19, os.getpriority(os.PRIO_PROCESS, 0) + 1)
    program = ("import os, resource\ndef probe():\n    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
               "    resource.setrlimit(resource.RLIMIT_NOFILE, (soft - 1, hard))\n"
               f"    os.setpriority(os.PRIO_PROCESS, 0, {want})\n"
               "    os.sched_setaffinity(0, os.sched_getaffinity(0))\n"
               "    return resource.getrlimit(resource.RLIMIT_NOFILE)[0] == soft - 1 and os.getpriority(os.PRIO_PROCESS, 0)\n")
    verdict = probe(trainers_uid, program, f"assert probe() == {want}")
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


# --- no channel between programs that run at once; nothing outside the working directory changes ---------------


@pytest.fixture(params=[(), ("namespaces",), ("namespaces", "uid")], ids=["all-layers", "no-namespaces", "trainers-uid"],
                scope="module")
def two_at_once(request):
    pool = Pool(2, without=request.param)
    yield pool
    pool.close()


# Every execution can open the interpreter's own files (read-only) and /dev/null: a sender marks one, a receiver
# running at the same time looks. Each pair: (sender, receiver); the receiver returns what it saw.
_SHARED = "import os, fcntl, time, ctypes, struct, select\nSHARED = os.__file__\n"
CHANNELS = {
    "flock": (_SHARED + "def mark():\n    fd = os.open(SHARED, os.O_RDONLY)\n    fcntl.flock(fd, fcntl.LOCK_EX)\n"
              "    time.sleep(1.5)\n    return 'sent'\n",
              _SHARED + "def look():\n    time.sleep(0.5)\n    fd = os.open(SHARED, os.O_RDONLY)\n    try:\n"
              "        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n        return 'free'\n"
              "    except OSError:\n        return 'held'\n"),
    "posix lock": (_SHARED + "def mark():\n    fd = os.open('/dev/null', os.O_RDWR)\n    fcntl.lockf(fd, fcntl.LOCK_EX)\n"
                   "    time.sleep(1.5)\n    return 'sent'\n",
                   _SHARED + "def look():\n    time.sleep(0.5)\n    fd = os.open('/dev/null', os.O_RDWR)\n    try:\n"
                   "        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n        return 'free'\n"
                   "    except OSError:\n        return 'held'\n"),
    "F_GETLK": (_SHARED + "def mark():\n    fd = os.open(SHARED, os.O_RDONLY)\n    fcntl.lockf(fd, fcntl.LOCK_SH)\n"
                "    time.sleep(1.5)\n    return 'sent'\n",
                _SHARED + "def look():\n    time.sleep(0.5)\n    fd = os.open(SHARED, os.O_RDONLY)\n"
                "    query = struct.pack('hhqqi', fcntl.F_WRLCK, 0, 0, 0, 0)\n    try:\n"
                "        answer = fcntl.fcntl(fd, fcntl.F_GETLK, query)\n    except OSError:\n        return 'refused'\n"
                "    return 'held' if struct.unpack('hhqqi', answer)[0] != fcntl.F_UNLCK else 'free'\n"),
    "inotify": (_SHARED + "def mark():\n    time.sleep(0.8)\n    for _ in range(5):\n        open(SHARED, 'rb').read(1)\n"
                "        time.sleep(0.1)\n    return 'sent'\n",
                _SHARED + "def look():\n    libc = ctypes.CDLL(None, use_errno=True)\n    fd = libc.inotify_init1(0)\n"
                "    if fd < 0:\n        return 'refused'\n    libc.inotify_add_watch(fd, SHARED.encode(), 0x20 | 0x1)\n"
                "    ready, _, _ = select.select([fd], [], [], 2.5)\n    return 'held' if ready else 'free'\n"),
    # In the jail a program may hold an abstract socket name (multiprocessing's Manager does): each supervisor's
    # network namespace has names of its own, so one running at the same time never sees it. Outside, bind fails.
    "abstract socket": (_SHARED + "import socket\ndef mark():\n    s = socket.socket(socket.AF_UNIX)\n"
                        "    s.bind(b'\\0grpo-covert-2')\n    s.listen()\n    time.sleep(1.5)\n    return 'sent'\n",
                        _SHARED + "import socket, errno\ndef look():\n    time.sleep(0.5)\n    try:\n"
                        "        socket.socket(socket.AF_UNIX).connect(b'\\0grpo-covert-2')\n        return 'held'\n"
                        "    except OSError:\n        pass\n    try:\n"
                        "        socket.socket(socket.AF_UNIX).bind(b'\\0grpo-covert-2')\n        return 'free'\n"
                        "    except OSError as e:\n        return 'held' if e.errno == errno.EADDRINUSE else 'refused'\n"),
}


@pytest.mark.parametrize("channel", list(CHANNELS))
def test_no_bit_passes_between_programs_running_at_once(two_at_once, channel):
    sender, receiver = CHANNELS[channel]
    sent, seen = run_batch([(sender, ["assert mark() == 'sent'"]), (receiver, ["assert look() == 'x'"])],
                           LIMITS, 2, two_at_once)
    if channel == "abstract socket" and "fs_jail" not in sent.layers:
        assert sent.passed == 0 and "PermissionError" in sent.reason, sent.reason  # bind is refused there
        return
    assert sent.passed == 1, sent.reason
    assert "returned 'held'" not in seen.details[0], seen.details[0]


def test_a_program_still_locks_its_own_files_and_uses_sqlite(every_mode):
    program = ("import fcntl, sqlite3\ndef probe():\n    f = open('a', 'w')\n    fcntl.flock(f, fcntl.LOCK_EX)\n"
               "    fcntl.lockf(f, fcntl.LOCK_EX)\n    con = sqlite3.connect('db.sqlite')\n"
               "    con.execute('create table t (x)')\n    con.execute('insert into t values (1)')\n    con.commit()\n"
               "    return con.execute('select x from t').fetchall() == [(1,)] and 'denied'\n")
    assert probe(every_mode, program).passed == 1


def test_nothing_outside_the_working_directory_changes_mode_times_or_xattrs(each_uid_mode, tmp_path):
    # A checkpoint of the trainer's: without the jail a program at the trainer's uid (or root's) owned it, and
    # chmod 000, a setuid bit, times and xattrs all went through (Landlock does not govern them).
    target = tmp_path / "checkpoint"
    target.mkdir()
    (target / "weights").write_text("w")
    for path, mode in ((tmp_path, 0o755), (target, 0o755), (target / "weights", 0o644)):
        os.chmod(path, mode)
    before = {p: (p.stat().st_mode, p.stat().st_mtime_ns, os.listxattr(p)) for p in (tmp_path, target, target / "weights")}
    attempts = [f"os.chmod({str(target)!r}, 0)", f"os.chmod({str(target / 'weights')!r}, 0o4777)",
                f"os.utime({str(target / 'weights')!r}, (1, 1))", f"os.setxattr({str(target / 'weights')!r}, 'user.x', b'1')",
                f"os.chown({str(target / 'weights')!r}, 1, 1)", f"os.chmod({str(tmp_path)!r}, 0)"]
    program = "import os\ndef probe():\n" + "".join(
        f"    try:\n        {a}\n    except OSError:\n        pass\n" for a in attempts) + "    return 'denied'\n"
    assert probe(each_uid_mode, program).passed == 1
    after = {p: (p.stat().st_mode, p.stat().st_mtime_ns, os.listxattr(p)) for p in before}
    assert after == before


def test_a_program_still_copies_and_touches_its_own_files(each_uid_mode):
    program = ("import os, shutil, pathlib\ndef probe():\n    open('a', 'w').write('1')\n    shutil.copy('a', 'b')\n"
               "    shutil.copy2('a', 'c')\n    pathlib.Path('a').touch()\n    shutil.copytree('.', '../copy') if False else None\n"
               "    return [open(n).read() for n in 'bc'] == ['1', '1'] and 'denied'\n")
    assert probe(each_uid_mode, program).passed == 1


def test_the_supervisors_folder_is_not_in_the_trainers_tmpdir(monkeypatch, tmp_path):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    pool = Pool(1, without={"namespaces"})
    try:
        program = "import os\ndef probe():\n    return os.getcwd()\n"
        verdict = probe(pool, program, "assert probe() == ''")
    finally:
        pool.close()
    assert str(tmp_path) not in verdict.details[0] and "/tmp/grpo-rlvr-sandbox-" in verdict.details[0], verdict.details
    assert not list(tmp_path.iterdir())
