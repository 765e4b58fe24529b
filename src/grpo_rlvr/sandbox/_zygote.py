"""The zygote: a small, already-warm interpreter that forks one child per execution and supervises it.

Started once per worker by ``_pool`` as a fresh interpreter (never forked from the trainer, so it holds
none of the trainer's memory: no expected values, no tokens, no secrets) with a scrubbed environment. It
enters the zygote-wide namespaces (forking once into its own PID namespace, the first process staying
behind only to relay the exit), builds the jail, pre-imports common stdlib modules, then serves requests
from its parent, one at a time. Its command line carries the child's seccomp program (built by the parent). It never runs model code itself. Run by ``_pool``; not a user entry point.
Covered: one request at a time, each a program with one execution per stdin case (stopping after a timeout).
Not covered: concurrency inside one zygote (the pool runs several zygotes instead).
"""

from __future__ import annotations

import gc
import importlib
import os
import signal
import sys

from . import _child, _framing, _jail, _supervisor
from . import _syscalls as sc

# Imported once here so that forked programs find them loaded. Kept short: every module adds to the zygote's
# memory, and fork()+exit() time grows with it (typing costs ~5 ms to import but is in most completions).
PREIMPORT = ("bisect", "collections", "copy", "functools", "heapq", "itertools", "math", "operator", "re", "string",
             "typing")


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the parent, which closes us
    # Protocol on private fds; 0/1 point at /dev/null so a stray print cannot corrupt it.
    in_fd, out_fd = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    flags = {a.split("=", 1)[0]: a.split("=", 1)[1] if "=" in a else "" for a in sys.argv[1:]}
    program = bytes.fromhex(flags["--seccomp"]) if flags.get("--seccomp") else None
    state = _jail.setup_zygote("--unprivileged" in flags, program, flags.get("--no-seccomp", ""))
    _child.prepare_zygote(_jail.WORKDIR if state.root is not None else None)
    if sc.available():
        sc.prctl(sc.PR_SET_CHILD_SUBREAPER, 1)  # orphans of a program are reparented here, then swept
    for name in PREIMPORT:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    gc.freeze()  # a collection in a child would then not write to (copy) every inherited page
    _framing.send(out_fd, {"ready": True, "problems": state.problems})
    while True:
        try:
            request = _framing.recv(in_fd)
        except _framing.ChannelError:
            break
        if request is None:  # the parent closed our stdin: it is done, or dead
            break
        _framing.send(out_fd, _handle(request, state))


def _handle(request: dict, state: _jail.ZygoteState) -> dict:
    """Run each round (one execution per stdin value) and return their reports."""
    reports = []
    for stdin in request["stdin"]:
        job = {key: request[key] for key in ("mode", "program", "probes", "limits")}
        job["stdin"] = stdin
        try:
            report = _supervisor.execute(job, state)
        except Exception as e:  # noqa: BLE001 - our own failure: the parent raises SandboxError
            report = {"error": f"supervisor failed: {type(e).__name__}: {e}"}
        reports.append(report)
        if "error" in report or (report["timed_out"] and request["mode"] == "stdio"):
            break  # later stdin cases are reported as not run
    return {"reports": reports}
