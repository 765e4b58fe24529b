"""The template: a warm interpreter that only forks, so no execution inherits another sample's data.

An execution is a fork, and a fork copies its parent's memory, freed pages included. The process that
forks executions must therefore never have held a program, a test or a result. The supervisor forks this
template once, before its first request, and then only ever sends it "fork now" with six pipe ends attached
(``SCM_RIGHTS``): the template never reads a byte of what goes through them. For each request it forks a
launcher, which (given a PID namespace of its own) forks the execution into a new nested PID namespace,
writes the execution's pid on the setup pipe and exits; the execution is then reparented to the supervisor
(PID 1 of the outer namespace, or else a subreaper), which waits for it, measures it and reaps it. The
template only reaps launchers, whose exit status is fixed. The execution reads its program and probes from
the job pipe, written by the supervisor (``_child``).

The template pre-imports common stdlib modules (forked programs then find them loaded), freezes the garbage
collector, makes itself the OOM killer's first choice (``oom_score_adj`` 1000, inherited by every execution;
the trainer's own is never touched) and non-dumpable (its ``/proc`` files are root's and cannot be
ptraced), and dies with the supervisor.
Covered: one fork at a time, protocol file descriptors of the supervisor closed before anything else.
Not covered: a template that dies (the supervisor reports the sample as lost, the pool replaces both and
runs the sample once more; lost twice, it scores 0).
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import signal
import socket

from . import _child
from . import _syscalls as sc
from ._jail import SandboxState

# Imported once here so that forked programs find them loaded. Kept short: every module adds to the template's
# memory, and fork()+exit() time grows with it (typing costs ~5 ms to import but is in most completions).
PREIMPORT = ("bisect", "collections", "copy", "functools", "heapq", "itertools", "math", "operator", "re", "string",
             "typing")
OOM_SCORE_ADJ = 1000  # the sandbox dies first when the machine runs out of memory
FORK = b"F"
N_FDS = 6  # job_r, stdin_r, stdout_w, stderr_w, result_w, setup_w


class Template:
    """The supervisor's handle on its template process."""

    def __init__(self, pid: int, sock: socket.socket, hello: dict):
        self.pid = pid
        self.sock = sock
        self.host_pid = int(hello["host_pid"])  # as /proc numbers it: the tree walk leaves its subtree out
        self.baseline_kb = int(hello["baseline_kb"])  # private memory every execution starts with (shared COW)
        self.layers = tuple(hello["layers"])

    def fork(self, fds: list[int], timeout_s: float) -> str:
        """Have the template fork an execution on ``fds``; "" once the launcher is done, else why not."""
        try:
            self.sock.settimeout(timeout_s)
            socket.send_fds(self.sock, [FORK], fds)
            answer = self.sock.recv(256)
        except OSError as e:
            return f"the template is unreachable: {e}"
        if answer != b"ok":
            return f"the template could not fork: {answer.decode('ascii', 'replace') or 'it exited'}"
        return ""

    def alive(self) -> bool:
        try:
            return os.waitpid(self.pid, os.WNOHANG) == (0, 0)
        except ChildProcessError:
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
            _, fds, _, _ = socket.recv_fds(sock, 16, N_FDS)
        except OSError:
            os._exit(0)
        if not fds:  # the supervisor closed the socket
            os._exit(0)
        try:
            pid = os.fork()
        except OSError as e:
            for fd in fds:
                os.close(fd)
            sock.send(f"fork failed: {e}".encode())
            continue
        if pid == 0:
            sock.close()  # before anything else: an execution must never reach this socket
            _launch(fds, state)
        for fd in fds:
            os.close(fd)
        _, status = os.waitpid(pid, 0)
        sock.send(b"ok" if status == 0 else f"launcher exit status {status}".encode())


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


def _launch(fds: list[int], state: SandboxState) -> None:
    """The launcher (a fork of the template): fork the execution, in a new PID namespace when we own one,
    tell the supervisor its pid, exit. Never returns."""
    setup_w = fds[-1]
    try:
        if len(fds) != N_FDS:
            raise OSError(f"{len(fds)} file descriptors received, {N_FDS} expected")
        if state.pid1:
            sc.unshare(sc.CLONE_NEWPID)  # the next child is PID 1 of a namespace of its own
        pid = os.fork()
        if pid == 0:
            _child.run_child(fds, state, pidns=state.pid1)  # never returns
        os.write(setup_w, f"{pid}\n".encode())
        os._exit(0)
    except BaseException as e:  # noqa: BLE001 - reported on the setup pipe; the supervisor raises
        try:
            os.write(setup_w, json.dumps({"error": f"launcher: {type(e).__name__}: {e}"}).encode() + b"\n")
        finally:
            os._exit(1)
