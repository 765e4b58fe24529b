"""The supervisor process: one per worker, started by ``isolation.pool`` as a fresh interpreter, serving its requests.

Started fresh (never forked from the trainer, so it holds none of the trainer's memory: no tokens, no
secrets) with a scrubbed environment. It enters the supervisor-wide namespaces or else builds the private
working directory and the Landlock ruleset (``isolation.jail``), forks the template (``isolation.template``) while it still holds
no sample's data, becomes a child subreaper and non-dumpable, and reports which layers it could build. Then
it serves requests from its parent, one at a time: each is a program with one execution per stdin case,
under one wall-time budget for the whole sample. It never runs model code itself. Run by ``isolation.pool``; not a
user entry point.
Covered: one request at a time, stopping after a timeout (stdin/stdout cases), an overrun or the budget.
Not covered: concurrency inside one supervisor (the pool runs several instead).
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import time

from . import execution
from . import framing as _framing
from . import jail as _jail
from . import syscalls as sc
from . import template as _template
from . import tree as _tree

SUPERVISOR_OOM_SCORE_ADJ = 800  # below its executions (1000), above the trainer (left as it is)


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the parent, which closes us
    # Protocol on private fds; 0/1 point at /dev/null so a stray print cannot corrupt it.
    in_fd, out_fd = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    flags = {a.split("=", 1)[0]: a.split("=", 1)[1] if "=" in a else "" for a in sys.argv[1:]}
    programs = tuple(bytes.fromhex(flags[k]) if flags.get(k) else None for k in ("--seccomp", "--seccomp-outside-jail"))
    without = set(filter(None, flags.get("--without", "").split(",")))
    state = _jail.setup_supervisor(without, programs, flags.get("--no-seccomp", ""))
    atexit.register(_jail.remove_workbase, state)
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write(str(SUPERVISOR_OOM_SCORE_ADJ))
    except OSError as e:
        state.problems.append(f"oom_score_adj not raised: {e}")
    if sc.available():
        sc.prctl(sc.PR_SET_CHILD_SUBREAPER, 1)  # orphans of a program are reparented here, then swept
    why_not_tree = ("no process-tree walk: /proc switched off" if "proc" in without
                    else _tree.available(_jail.host_pid()))
    if why_not_tree:
        state.problems.append(why_not_tree)
    template = _template.start(state, close=(in_fd, out_fd))
    if sc.available():
        sc.prctl(sc.PR_SET_DUMPABLE, 0)  # after the user namespace's maps are written (they need us dumpable)
    env = execution.Env(state, template, tree_ok=not why_not_tree)
    _framing.send(out_fd, {"ready": True, "problems": state.problems, "layers": static_layers(state, env),
                           "pids": [env.host_pid, template.host_pid], "workbase": state.workbase})
    while True:
        try:
            request = _framing.recv(in_fd)
        except _framing.ChannelError:
            break
        if request is None:  # the parent closed our stdin: it is done, or dead
            break
        reply = _handle(request, env)
        if not template.alive():  # killed, by the program or the OOM killer: this sample is not judged here
            reply = {"reports": [], "lost": "the sandbox's template process died while it ran"}
        _framing.send(out_fd, reply)
        if "lost" in reply or any("error" in r or "retire" in r for r in reply["reports"]):
            break  # the parent replaces us; exit so nothing of this one lingers
    template.close()


def static_layers(state: _jail.SandboxState, env: execution.Env) -> list[str]:
    """The layers every execution of this supervisor gets, known before any runs (the policy reads them)."""
    layers = ["process", "tmpdir", "env_scrubbed"]
    layers += [name for name, on in (("userns", state.userns), ("pidns", state.pid1), ("netns", state.netns),
                                     ("fs_jail", state.root is not None), ("private_shm", state.root is not None),
                                     ("uid_drop", state.privileged),
                                     ("caps_dropped", state.caps_locked), ("seccomp", state.seccomp is not None),
                                     ("no_file_locks", state.seccomp is not None),
                                     ("metadata_frozen", state.root is not None or state.seccomp is not None),
                                     ("tree_cap", env.tree_ok), ("sweep", env.sweeps)) if on]
    layers += list(state.landlock.layers) if state.landlock is not None else []
    return layers + list(env.template.layers)


def _handle(request: dict, env: execution.Env) -> dict:
    """Run each case (one execution per stdin value) within the sample's budget and return their reports."""
    limits = request["limits"]
    sample_deadline = time.monotonic() + limits["sample_timeout_s"]
    reports = []
    for stdin, keep in zip(request["stdin"], request["keep_stdout"], strict=True):
        job = {key: request[key] for key in ("mode", "program", "probes", "limits")}
        job["deliveries"] = request.get("deliveries", [])
        job["once"] = request.get("once", [])
        job["stdin"] = stdin
        try:
            report = execution.execute(job, env, sample_deadline, keep)
        except Exception as e:  # noqa: BLE001 - our own failure: the parent raises SandboxError
            report = {"error": f"supervisor failed: {type(e).__name__}: {e}"}
        reports.append(report)
        if "error" in report or report.get("overrun") or report.get("budget_exceeded") or (
                report["timed_out"] and request["mode"] == "stdio"):
            break  # later stdin cases are reported as not run
        if time.monotonic() >= sample_deadline:
            reports[-1]["budget_exceeded"] = len(reports) < len(request["stdin"])
            break
    return {"reports": reports}
