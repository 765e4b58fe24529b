"""One execution, watched from outside: fork the child, feed its stdin, collect its output, enforce the wall
clock, kill it, sweep, report.

Runs inside the zygote (trusted: it never runs model code). Before each fork it gives the child a fresh
PID namespace when it can, so the child is PID 1 there and the kernel kills every process the program
started when the child dies; it also gets a uid of its own when the zygote is root, and an empty working
directory (``_jail.make_workdir``), deleted afterwards. After the child is gone its process
group is killed, then the sweep: the zygote is PID 1 of its own PID namespace (or else a subreaper), so any
descendant that escaped the group (double fork, ``setsid``) has been reparented to it and is killed
(``kill(-1)`` there), until none is left. A working directory that cannot be removed marks the report
``retire``: the pool then replaces this zygote. The report is plain
data; the verdict is made by the parent process.
Covered: wall clock, output caps (stdout + stderr, and the result channel), stdin feeding, no survivors.
Not covered: CPU and memory limits (the child's rlimits), judging anything.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import signal
import sys
import time

from . import _child, _jail
from . import _syscalls as sc
from ._jail import ZygoteState

_SETUP_TIMEOUT_S = 20.0
_STDERR_TAIL = 4000
_MAX_SWEEPS = 200


def execute(job: dict, state: ZygoteState) -> dict:
    """Run one execution of ``job`` (program, probes, stdin, limits) and return its report."""
    ctx = {"uid": _jail.execution_uid() if state.privileged else None, "pidns": False, "namespaces": False}
    if state.can_unshare:
        ctx["pidns"] = _new_pid_namespace_for_children(state)
        ctx["namespaces"] = True  # the child unshares its own IPC namespace
    try:
        ctx["workdir"] = _jail.make_workdir(state, ctx["uid"])
        report = _execute(job, state, ctx)
    finally:
        if ctx["pidns"]:
            sc.setns(state.own_pidns_fd, sc.CLONE_NEWPID)  # our next children: back in our own namespace
    try:
        _jail.remove_workdir(state, ctx["workdir"])
    except OSError as e:  # this zygote cannot be trusted to start the next program clean: it is replaced
        report["retire"] = f"the working directory could not be removed: {e}"
    return report


def _new_pid_namespace_for_children(state: ZygoteState) -> bool:
    if state.own_pidns_fd is None:
        return False
    try:
        sc.unshare(sc.CLONE_NEWPID)
        return True
    except OSError:
        return False


def _execute(job: dict, state: ZygoteState, ctx: dict) -> dict:
    limits = job["limits"]
    stdin_r, stdin_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    res_r, res_w = os.pipe()
    setup_r, setup_w = os.pipe()
    sys.stdout.flush()  # nothing of ours may sit in a buffer the child inherits (normally empty)
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        _child.run_child(job, state, ctx, {0: stdin_r, 1: out_w, 2: err_w, 3: res_w, 4: setup_w})
        os._exit(71)  # not reached: run_child always exits
    for fd in (stdin_r, out_w, err_w, res_w, setup_w):
        os.close(fd)
    bufs = {out_r: bytearray(), err_r: bytearray(), res_r: bytearray()}
    try:
        setup = _read_setup(setup_r)
        if "error" not in setup:
            watch = _watch(pid, job["stdin"].encode(), stdin_w, bufs, limits)
    finally:
        _kill(pid)
        status, cpu_s = _reap(pid)
        swept = _sweep(state.pid1)
    if "error" in setup:
        _close_all(setup_r, stdin_w, out_r, err_r, res_r)  # _watch did not run, so stdin_w is still open
        return {"error": f"sandbox setup failed: {setup['error']}"}
    cap = limits["max_output_bytes"]
    if not _drain(bufs, cap):
        watch["output_exceeded"] = True
    _close_all(setup_r, out_r, err_r, res_r)  # _watch closed stdin_w
    return {
        "layers": setup["layers"] + ["pgroup_kill", "sweep"],
        "exit_code": os.waitstatus_to_exitcode(status) if status is not None else None,
        "cpu_s": cpu_s,
        "swept": swept,
        "stdout": bytes(bufs[out_r][:cap]).decode("utf-8", "replace"),
        "stderr": bytes(bufs[err_r][-_STDERR_TAIL:]).decode("utf-8", "replace"),
        "result": bytes(bufs[res_r][:cap]).decode("latin-1"),
        **watch,
    }


def _read_setup(fd: int) -> dict:
    """The child's prelude report: ``{"layers": [...]}`` or ``{"error": ...}``."""
    deadline = time.monotonic() + _SETUP_TIMEOUT_S
    data = b""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while True:
        if not poller.poll(max(0.0, deadline - time.monotonic()) * 1000):
            return {"error": "the child did not finish its setup in time"}
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        data += chunk
    try:
        return json.loads(data)
    except ValueError:
        return {"error": f"the child died during setup (setup message {data[:200]!r})"}


def _watch(pid: int, stdin_data: bytes, stdin_w: int, bufs: dict, limits: dict) -> dict:
    """Pump the pipes until the child exits, the wall clock runs out, or the output cap is hit."""
    start = time.monotonic()
    deadline = start + limits["timeout_s"]
    cap = limits["max_output_bytes"]
    out_r, err_r, res_r = bufs
    for fd in (stdin_w, *bufs):
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
    pidfd = os.pidfd_open(pid) if hasattr(os, "pidfd_open") else None
    pending = memoryview(stdin_data)
    stdin_open = True
    if not pending:
        os.close(stdin_w)
        stdin_open = False
    poller = select.poll()
    for fd in (*bufs, pidfd) if pidfd is not None else bufs:
        poller.register(fd, select.POLLIN)
    if stdin_open:
        poller.register(stdin_w, select.POLLOUT)
    timed_out = exceeded = False
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            tick = remaining if pidfd is not None else min(remaining, 0.005)
            events = poller.poll(tick * 1000)
            for fd, _ in events:
                if fd == stdin_w and stdin_open:
                    try:
                        pending = pending[os.write(stdin_w, pending[:65536]) :]
                    except BrokenPipeError:
                        pending = pending[:0]
                    if not pending:
                        poller.unregister(stdin_w)
                        os.close(stdin_w)
                        stdin_open = False
                elif fd in bufs:
                    chunk = _read(fd)
                    if chunk == b"":
                        poller.unregister(fd)  # end of stream (POLLHUP would repeat forever)
                    elif chunk:
                        bufs[fd] += chunk
            if len(bufs[out_r]) + len(bufs[err_r]) > cap or len(bufs[res_r]) > cap:
                exceeded = True
                break
            if any(fd == pidfd for fd, _ in events) if pidfd is not None else _exited(pid):
                break
    finally:
        if pidfd is not None:
            os.close(pidfd)
        if stdin_open:
            os.close(stdin_w)
    return {"timed_out": timed_out, "output_exceeded": exceeded, "wall_s": time.monotonic() - start}


def _drain(bufs: dict, cap: int) -> bool:
    """After everything is dead: read what is left in the pipes. False if that exceeds the cap."""
    for fd, buf in bufs.items():
        while len(buf) <= cap:
            chunk = _read(fd)
            if not chunk:
                break
            buf += chunk
    out_r, err_r, res_r = bufs
    return len(bufs[out_r]) + len(bufs[err_r]) <= cap and len(bufs[res_r]) <= cap


def _read(fd: int) -> bytes | None:
    """Some bytes, b"" at end of stream, None when nothing is ready."""
    try:
        return os.read(fd, 65536)
    except BlockingIOError:
        return None
    except OSError:
        return b""


def _exited(pid: int) -> bool:
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _kill(pid: int) -> None:
    """SIGKILL the child and its process group (as PID 1 of a namespace, its death kills the namespace)."""
    for kill in (os.kill, os.killpg):
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _reap(pid: int) -> tuple[int | None, float]:
    """(wait status, CPU seconds used)."""
    try:
        _, status, usage = os.wait4(pid, 0)
    except ChildProcessError:
        return None, 0.0
    return status, usage.ru_utime + usage.ru_stime


def _sweep(pid1: bool) -> int:
    """Kill our children until none is left (orphans of the program are reparented to us, a subreaper).

    As PID 1 of our own namespace, ``kill(-1)`` reaches every process in it but us. Returns how many were
    killed. Between executions the zygote has no children of its own.
    """
    killed = 0
    if pid1:
        for _ in range(_MAX_SWEEPS * 10):
            try:
                os.kill(-1, signal.SIGKILL)
            except ProcessLookupError:
                return killed + _reap_any()
            killed += _reap_any()
            time.sleep(0.001)
        raise RuntimeError(f"processes of the sandbox keep appearing after {_MAX_SWEEPS * 10} sweeps")
    for _ in range(_MAX_SWEEPS):
        children = _children()
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _reap_any()
        if not children:
            return killed
        killed += len(children)
        time.sleep(0.001)
    raise RuntimeError(f"processes of the sandbox keep appearing after {_MAX_SWEEPS} sweeps")


def _children() -> list[int]:
    me = os.getpid()
    try:
        with open(f"/proc/{me}/task/{me}/children") as f:
            return [int(p) for p in f.read().split()]
    except FileNotFoundError:  # kernel without CONFIG_PROC_CHILDREN (or no /proc): scan every process's parent
        pass
    found = []
    try:
        names = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:  # no /proc at all (not Linux): only the process group kill applies
        return []
    for name in names:
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == me:
            found.append(int(name))
    return found


def _reap_any() -> int:
    reaped = 0
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                return reaped
        except ChildProcessError:
            return reaped
        reaped += 1


def _close_all(*fds: int) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass
