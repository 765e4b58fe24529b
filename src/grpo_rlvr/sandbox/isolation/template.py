"""The template: a warm interpreter that only forks, so no execution inherits another sample's data.

An execution is a fork, and a fork copies its parent's memory, freed pages included. The process that
forks executions must therefore never have held a program, a test or a result. The supervisor forks this
template once, before its first request, and then only ever sends it "fork now" with six pipe ends attached
(``SCM_RIGHTS``): the template never reads a byte of what goes through them. It forks each execution with
``clone(CLONE_PARENT)``, into a new nested PID namespace when the supervisor owns one, so the execution is
the supervisor's child from its first instruction: the supervisor waits for it, measures it and reaps it,
and the template never even learns how it ended. (Where the raw ``clone`` call's number is not known, a
launcher forks the execution and exits, and the execution is reparented to the supervisor, PID 1 or
subreaper: ~1 ms more per execution.) The execution reads its program and probes from the job pipe,
written by the supervisor (``isolation.child``).

The template pre-imports common stdlib modules (forked programs then find them loaded), freezes the garbage
collector, makes itself the OOM killer's first choice (``oom_score_adj`` 1000, inherited by every execution;
the trainer's own is never touched) and non-dumpable (its ``/proc`` files are root's and cannot be
ptraced), and dies with the supervisor.
Covered: one fork at a time, protocol file descriptors of the supervisor closed before anything else.
Not covered: a template that dies (the supervisor reports the sample as lost, the pool replaces both and
runs the sample once more; lost twice, it scores 0).
"""

from __future__ import annotations

import ctypes
import gc
import importlib
import json
import os
import signal
import socket

from . import child as _child
from . import syscalls as sc
from .jail import SandboxState

# Imported once here so that forked programs find them loaded. Kept short: every module adds to the template's
# memory, and fork()+exit() time grows with it (typing costs ~5 ms to import but is in most completions).
PREIMPORT = ("bisect", "collections", "copy", "functools", "heapq", "itertools", "math", "operator", "re", "string",
             "typing")
OOM_SCORE_ADJ = 1000  # the sandbox dies first when the machine runs out of memory
_CLONE = {"x86_64": 56, "aarch64": 220}.get(os.uname().machine)  # the raw clone system call's number
_CLONE_PARENT, _SIGCHLD = 0x8000, 17
FORK = b"F"
PING = b"P"  # "still there?": a template with a SIGKILL pending can never answer it
PING_TIMEOUT_S = 5.0  # an idle template answers in microseconds; a frozen (SIGSTOPped) one never does
N_FDS = 6  # job_r, stdin_r, stdout_w, stderr_w, result_w, setup_w


class Template:
    """The supervisor's handle on its template process."""

    def __init__(self, pid: int, sock: socket.socket, hello: dict):
        self.pid = pid
        self.sock = sock
        self.host_pid = int(hello["host_pid"])  # as /proc numbers it: the tree walk leaves its subtree out
        self.baseline_kb = int(hello["baseline_kb"])  # private memory every execution starts with (shared COW)
        self.layers = tuple(hello["layers"])

    def fork(self, fds: list[int], timeout_s: float) -> tuple[int, str]:
        """Have the template fork an execution on ``fds``: (its pid, our child now, ""), or (0, why not)."""
        try:
            self.sock.settimeout(timeout_s)
            socket.send_fds(self.sock, [FORK], fds)
            answer = self.sock.recv(256)
        except OSError as e:
            return 0, f"the template is unreachable: {e}"
        if not answer.startswith(b"ok "):
            return 0, f"the template could not fork: {answer.decode('ascii', 'replace') or 'it exited'}"
        return int(answer[3:]), ""

    def alive(self, timeout_s: float = PING_TIMEOUT_S) -> bool:
        """Whether the template still answers. Asked, not looked up: ``kill()`` returns before its target has
        exited, so a template that a program has just killed can still look alive in ``waitpid``; one with a
        SIGKILL pending never runs again and so never answers (EOF when it exits, or the timeout)."""
        try:
            self.sock.settimeout(timeout_s)
            self.sock.send(PING)
            if self.sock.recv(16) == PING:
                return True
        except OSError:
            pass
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        return False

    def close(self) -> None:
        self.sock.close()  # EOF: the template exits
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


def start(state: SandboxState, close: tuple[int, ...]) -> Template:
    """Fork the template from this (still clean) supervisor; ``close``: our protocol fds, closed in it."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid == 0:
        try:
            ours.close()
            for fd in close:
                os.close(fd)
            _serve(theirs, state)
        finally:
            os._exit(70)
    theirs.close()
    ours.settimeout(60.0)
    hello = json.loads(ours.recv(4096) or b"{}")
    if "host_pid" not in hello:
        raise OSError(f"the template failed to start: {hello.get('error', 'no greeting')}")
    return Template(pid, ours, hello)


def _serve(sock: socket.socket, state: SandboxState) -> None:
    """The template's life: prepare once, then fork launchers on request until the supervisor goes."""
    layers = []
    try:
        if sc.available():
            sc.prctl(sc.PR_SET_PDEATHSIG, signal.SIGKILL)
        layers += _oom_first()
        _child.prepare_template(state)
        for name in PREIMPORT:
            try:
                importlib.import_module(name)
            except ImportError:
                pass
        if sc.available():
            sc.prctl(sc.PR_SET_DUMPABLE, 0)
            layers.append("nondumpable")
        gc.collect()
        gc.freeze()  # a collection in a child would then not write to (copy) every inherited page
        hello = {"host_pid": int(os.readlink("/proc/self")), "baseline_kb": _private_kb(), "layers": layers}
    except Exception as e:  # noqa: BLE001 - reported to the supervisor, which raises
        hello = {"error": f"{type(e).__name__}: {e}"}
    sock.send(json.dumps(hello).encode())
    while True:
        try:
            msg, fds, _, _ = socket.recv_fds(sock, 16, N_FDS)
        except OSError:
            os._exit(0)
        if msg == PING and not fds:
            sock.send(PING)
            continue
        if not fds:  # the supervisor closed the socket
            os._exit(0)
        try:
            if len(fds) != N_FDS:
                raise OSError(f"{len(fds)} file descriptors received, {N_FDS} expected")
            pid = _fork_execution(sock, fds, state)
            answer = f"ok {pid}"
        except OSError as e:
            answer = f"fork failed: {e}"
        for fd in fds:
            os.close(fd)
        sock.send(answer.encode())


def _fork_execution(sock: socket.socket, fds: list[int], state: SandboxState) -> int:
    """Fork the execution on ``fds`` as the supervisor's child (in a PID namespace of its own when the
    supervisor owns one); its pid. The child never returns from here."""
    if _CLONE is None or not state.use_clone:
        pid = _launch(state)
    else:
        if state.pid1:
            sc.unshare(sc.CLONE_NEWPID)  # our next child is PID 1 of a namespace of its own
        try:
            pid = _clone_parent()
        except BaseException:
            _back_to_own_pid_namespace(state)
            raise
        if pid:
            _back_to_own_pid_namespace(state)
    if pid == 0:  # the execution: it never returns into the template's loop
        try:
            sock.close()  # before anything else: an execution must never reach this socket
            _child.run_child(fds, state, pidns=state.pid1)
        finally:
            os._exit(70)
    return pid


def _back_to_own_pid_namespace(state: SandboxState) -> None:
    if state.pid1:  # so that the next unshare makes a fresh namespace (it refuses while one is pending)
        sc.setns(state.own_pidns_fd, sc.CLONE_NEWPID)


def _clone_parent() -> int:
    """``fork()``, but the child's parent is ours (the supervisor), with Python's own before/after-fork steps."""
    api = ctypes.pythonapi
    api.PyOS_BeforeFork()
    pid = _syscall(_CLONE, _CLONE_PARENT | _SIGCHLD, 0, 0, 0, 0)
    if pid == 0:
        api.PyOS_AfterFork_Child()
        return 0
    err = ctypes.get_errno()
    api.PyOS_AfterFork_Parent()
    if pid < 0:
        raise OSError(err, f"clone: {os.strerror(err)}")
    return pid


def _launch(state: SandboxState) -> int:
    """Without ``clone(CLONE_PARENT)``: a launcher forks the execution (into a PID namespace of its own when
    we own one) and exits, so the execution is reparented to the supervisor (PID 1 of our namespace, or a
    subreaper). Returns the execution's pid, and 0 in the execution."""
    r, w = os.pipe()
    launcher = os.fork()
    if launcher == 0:
        try:
            os.close(r)
            if state.pid1:
                sc.unshare(sc.CLONE_NEWPID)
            pid = os.fork()
        except BaseException:  # noqa: BLE001 - the template sees an empty answer and reports it
            os._exit(1)
        if pid == 0:
            os.close(w)
            return 0
        try:
            os.write(w, str(pid).encode())
        finally:
            os._exit(0)
    os.close(w)
    pid = int(os.read(r, 32) or b"0")
    os.close(r)
    os.waitpid(launcher, 0)
    if not pid:
        raise OSError("the launcher could not fork")
    return pid


_syscall = ctypes.PyDLL(None, use_errno=True).syscall  # keeps the GIL held across clone, as os.fork does
_syscall.restype = ctypes.c_long
_syscall.argtypes = [ctypes.c_long] * 6


def _oom_first() -> list[str]:
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write(str(OOM_SCORE_ADJ))
    except OSError:
        return []
    return ["oom_first"]


def _private_kb() -> int:
    """This process's anonymous memory, in KiB: what each fork shares with it until it writes."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"RssAnon:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0
