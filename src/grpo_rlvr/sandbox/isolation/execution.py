"""One execution, watched from outside: have the template fork it, send it its job, feed its stdin, collect its
output, enforce the wall clock and the tree caps, kill it, make sure nothing of it is left, report.

Runs in the supervisor process (trusted: it never runs model code, and nothing is ever forked from it after
its first request, so holding every sample's data here leaks nothing). The execution is forked by the
template (``isolation.template``) as our child; it is PID 1 of a PID namespace of its own when we are PID 1 of ours. Ending it: SIGKILL to it and its process group. With the PID namespace that is the whole sweep,
and a certain one: the kernel kills every process of the namespace when its PID 1 dies, and that death
cannot be reaped before they are all gone, so once ``wait4`` returns nothing of the execution exists.
Without one, processes that escaped the group (double fork, ``setsid``) have been reparented to us (a
subreaper) and are killed, as long as any is left. Where ``/proc`` cannot be walked either, nothing sweeps: the
``sweep`` layer is not reported and ``isolation.policy`` refuses to score. A working directory that cannot be emptied marks the
report ``retire``: the pool then replaces this supervisor. While the execution runs, its whole tree is
measured every ``isolation.tree.TICK_S`` and killed past the memory or task cap (``overrun``). The report is plain
data; the verdict is made by the parent process.
Covered: wall clock (per execution and the sample's budget), output caps (stdout + stderr, and the result
channel), stdin feeding, tree caps, no survivors. Not covered: CPU and per-process memory limits (the child's
rlimits), judging anything.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import signal
import time

from . import framing as _framing
from . import jail as _jail
from . import tree as _tree
from .feeder import Feeder
from .jail import SandboxState
from .template import Template

_SETUP_TIMEOUT_S = 20.0
STDERR_TAIL = 4000  # bytes of stderr kept for reasons
_SWEEP_BOUND_S = 10.0  # seconds the sweep keeps killing before it gives up (processes dying of SIGKILL)


class Env:
    """What the supervisor knows while it serves: its setup, its template, whether it can walk its tree."""

    def __init__(self, state: SandboxState, template: Template, tree_ok: bool):
        self.state = state
        self.template = template
        self.tree_ok = tree_ok  # /proc shows our children: the tree caps apply
        self.host_pid = _jail.host_pid()
        # Killing by the pids /proc shows is only right when /proc numbers processes as we do.
        self.sweep_ok = tree_ok and not state.pid1 and self.host_pid == os.getpid()
        # Nothing of an execution outlives it: the kernel's PID namespace teardown, or else our sweep.
        self.sweeps = state.pid1 or self.sweep_ok


def execute(job: dict, env: Env, sample_deadline: float, keep_stdout: int) -> dict:
    """Run one execution of ``job`` (mode, program, probes, stdin, limits) and return its report.

    ``sample_deadline``: the monotonic time at which the sample's whole budget runs out; ``keep_stdout``: how
    many bytes of stdout the parent needs (it is told whether the rest is blank).
    """
    state = env.state
    uid = _jail.execution_uid() if state.privileged else None
    _jail.make_workdir(state, uid)
    try:
        report = _execute(job, env, uid, sample_deadline, keep_stdout)
    finally:
        try:
            _jail.remove_workdir(state)
        except OSError as e:  # this supervisor cannot be trusted to start the next program clean: it is replaced
            retire = f"the working directory could not be emptied: {e}"
        else:
            retire = ""
    if retire:
        report["retire"] = retire
    return report


def _execute(job: dict, env: Env, uid: int | None, sample_deadline: float, keep_stdout: int) -> dict:
    limits = job["limits"]
    pipes = {name: os.pipe() for name in ("job", "stdin", "out", "err", "res", "setup")}
    theirs = [pipes["job"][0], pipes["stdin"][0], pipes["out"][1], pipes["err"][1], pipes["res"][1],
              pipes["setup"][1]]
    try:
        pid, why = env.template.fork(theirs, _SETUP_TIMEOUT_S)
    finally:
        for fd in theirs:
            os.close(fd)
    job_w, stdin_w, setup_r = pipes["job"][1], pipes["stdin"][1], pipes["setup"][0]
    bufs = {pipes["out"][0]: bytearray(), pipes["err"][0]: bytearray(), pipes["res"][0]: bytearray()}
    mine = [job_w, stdin_w, setup_r, *bufs]
    if why:
        _close_all(*mine)
        return {"error": why}
    setup, watch, status, cpu_s = {}, {}, None, 0.0
    feeder = Feeder(job_w, job.get("probes", []), job.get("deliveries", []), job.get("once", ()))
    job_w = -1  # the feeder's now
    try:
        _send_job(feeder.fd, {"mode": job["mode"], "program": job["program"], "limits": limits, "uid": uid})
        if job["mode"] == "stdio":  # nothing more goes to the program
            feeder.close()
        else:
            feeder.prefetch()
        setup = _parse(_read_setup(setup_r))
        if "error" not in setup:
            owned, stdin_w = stdin_w, -1  # _watch closes it
            watch = _watch(pid, job["stdin"].encode(), owned, bufs, limits, env, sample_deadline,
                           feeder if feeder.fd >= 0 else None)
    finally:
        feeder.close()
        _kill(pid)
        status, cpu_s = _reap(pid)
        # With a PID namespace per execution the kernel has swept already.
        unswept = _sweep(env) if env.sweep_ok else ""
        _close_all(job_w, stdin_w, setup_r)
    out_r, err_r, res_r = bufs
    if "error" in setup:
        _close_all(*bufs)
        return {"error": f"sandbox setup failed: {setup['error']}"}
    cap = limits["max_output_bytes"]
    if not _drain(bufs, cap):
        watch["output_exceeded"] = True
    _close_all(*bufs)
    out = bytes(bufs[out_r][:cap])
    return {
        "layers": setup["layers"] + list(env.template.layers) + (["tree_cap"] if env.tree_ok else [])
        + ["pgroup_kill"] + (["sweep"] if env.sweeps else []),
        "exit_code": os.waitstatus_to_exitcode(status) if status is not None else None,
        "cpu_s": cpu_s,
        "stdout": base64.b64encode(out[:keep_stdout]).decode(),
        "stdout_rest_blank": not out[keep_stdout:].strip(),
        "stderr": base64.b64encode(bytes(bufs[err_r][-STDERR_TAIL:])).decode(),
        # stdin/stdout cases judge no probe: their result channel is never sent on, however much a program wrote
        "result": base64.b64encode(bytes(bufs[res_r][:cap]) if job["mode"] != "stdio" else b"").decode(),
        "sent_at": feeder.skipped() if job["mode"] != "stdio" else [],
        **watch,
        **({"retire": unswept} if unswept else {}),
    }


def _read_setup(fd: int) -> str:
    """The child's prelude report on the setup pipe, until it closes it (a deadline: ``_SETUP_TIMEOUT_S``)."""
    deadline = time.monotonic() + _SETUP_TIMEOUT_S
    data = b""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while True:
        if not poller.poll(max(0.0, deadline - time.monotonic()) * 1000):
            raise TimeoutError("the child did not finish its setup in time")
        chunk = os.read(fd, 65536)
        if not chunk:
            return data.decode("utf-8", "replace")
        data += chunk


def _parse(text: str) -> dict:
    """The prelude's report: ``{"layers": [...]}`` or ``{"error": ...}``."""
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict) or not ("layers" in parsed or "error" in parsed):
        return {"error": f"the child died during setup (setup message {text[:200]!r})"}
    return parsed


def _send_job(fd: int, job: dict) -> None:
    """The job, one message; the pipe stays open for the probes (``isolation.feeder``). Blocking: the child reads it
    before anything else."""
    try:
        _framing.send(fd, job)
    except _framing.ChannelError:
        pass  # the child died before reading it: its setup report says why


def _watch(pid: int, stdin_data: bytes, stdin_w: int, bufs: dict, limits: dict, env: Env,
           sample_deadline: float, feeder: Feeder | None) -> dict:
    """Pump the pipes until the child exits, every probe has answered (``feeder.finished``: the execution is then
    killed without waiting for it to end, a body runner included), the clock or the sample's budget runs out, the
    output cap is hit, or the tree passes a cap; feed the probes as the child answers (``feeder``). Closes
    ``stdin_w``."""
    start = time.monotonic()
    deadline = min(start + limits["timeout_s"], sample_deadline)
    cap = limits["max_output_bytes"]
    out_r, err_r, res_r = bufs
    for fd in (stdin_w, *bufs, *([feeder.fd] if feeder else [])):
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
    pidfd = os.pidfd_open(pid)
    pending = memoryview(stdin_data)
    stdin_open = True
    if not pending:
        os.close(stdin_w)
        stdin_open = False
    poller = select.poll()
    for fd in (*bufs, pidfd):
        poller.register(fd, select.POLLIN)
    if stdin_open:
        poller.register(stdin_w, select.POLLOUT)
    feeding = None  # the job pipe's fd while it is registered for POLLOUT
    fed = -1  # the result channel's length when the feeder last read it
    timed_out = exceeded = budget = False
    overrun = ""
    peak = 0
    next_tick = start + _tree.TICK_S
    try:
        while True:
            now = time.monotonic()
            if now >= deadline:
                timed_out = True
                budget = deadline == sample_deadline and deadline < start + limits["timeout_s"]
                break
            if env.tree_ok and now >= next_tick:
                memory, overrun = _tree_overrun(env, limits)
                peak = max(peak, memory)
                if overrun:
                    break
                next_tick = now + _tree.TICK_S
            wait = min(deadline, next_tick if env.tree_ok else deadline) - now
            events = poller.poll(max(0.0, wait) * 1000)
            for fd, _ in events:
                if fd == stdin_w and stdin_open:
                    pending = _write_some(stdin_w, pending)
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
                elif fd == feeding:
                    feeder.write()
            if len(bufs[out_r]) + len(bufs[err_r]) > cap or len(bufs[res_r]) > cap:
                exceeded = True
                break
            if feeder and feeder.fd >= 0:
                fed = _feed(feeder, bufs[res_r], fed, feeding is None)
            if feeder and feeder.finished:  # every test answered: nothing more of it is judged, it is ended now
                break
            want = feeder.fd if feeder and feeder.fd >= 0 and feeder.pending else None
            if want != feeding:
                if feeding is not None:
                    poller.unregister(feeding)
                if want is not None:
                    poller.register(want, select.POLLOUT)
                feeding = want
            if any(fd == pidfd for fd, _ in events):
                break
    finally:
        os.close(pidfd)
        if stdin_open:
            os.close(stdin_w)
    return {"timed_out": timed_out and not budget, "budget_exceeded": budget, "output_exceeded": exceeded,
            "overrun": overrun, "tree_peak_bytes": peak, "wall_s": time.monotonic() - start}


def _tree_overrun(env: Env, limits: dict) -> tuple[int, str]:
    """The program's processes now: their memory together, and the cap they passed ("" when none)."""
    tasks, memory, _ = _tree.measure(env.host_pid, env.template.host_pid, env.template.baseline_kb)
    if memory > limits["memory_mb"] * 1024 * 1024:
        return memory, (f"memory limit of {limits['memory_mb']} MiB exceeded by the program's processes together "
                        f"({memory // (1024 * 1024)} MiB)")
    if tasks > limits["max_processes"]:
        return memory, f"process limit of {limits['max_processes']} exceeded ({tasks} processes and threads)"
    return memory, ""


def _write_some(fd: int, pending: memoryview) -> memoryview:
    """What is left of ``pending`` after one write to the program's stdin (nothing, once the program closed it)."""
    try:
        return pending[os.write(fd, pending[:65536]):]
    except BrokenPipeError:
        return pending[:0]


def _feed(feeder: Feeder, results: bytes, fed: int, idle: bool) -> int:
    """Hand the feeder the result channel when it grew since ``fed`` (its length then); write what it has at once
    when the job pipe is not waiting for room (``idle``): most messages fit the pipe. Returns the length read."""
    if len(results) != fed:
        fed = len(results)
        feeder.feed(results)
    if (feeder.pending or feeder.finished) and idle:
        feeder.write()
    return fed


def _drain(bufs: dict, cap: int) -> bool:
    """After everything is dead: read what is left in the pipes. False if that exceeds the cap."""
    for fd, buf in bufs.items():
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)
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


def _kill(pid: int) -> None:
    """SIGKILL the child and its process group (as PID 1 of a namespace, its death kills the namespace)."""
    for kill in (os.kill, os.killpg):
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _reap(pid: int) -> tuple[int | None, float]:
    """(wait status, CPU seconds used). With a PID namespace of its own, this returns only once every process
    of the namespace is gone."""
    while True:
        try:
            _, status, usage = os.wait4(pid, 0)
        except ChildProcessError:
            return None, 0.0
        except InterruptedError:
            continue
        return status, usage.ru_utime + usage.ru_stime


def _sweep(env: Env) -> str:
    """Without a PID namespace per execution: kill our children but the template until none is left. Orphans of
    the program were reparented to us (a subreaper) before their parent became a zombie, so while any process of
    the execution lives, one of our children is it or an ancestor of it; a killed process cannot fork any more.
    An empty walk after reaping therefore means nothing is left. Returns "" then, or why it could not finish
    within ``_SWEEP_BOUND_S`` (every process seen has been sent SIGKILL; the pool replaces this supervisor)."""
    deadline = time.monotonic() + _SWEEP_BOUND_S
    while True:
        _, _, children = _tree.measure(env.host_pid, env.template.host_pid, 0)
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _reap_any()
        if not children:
            return ""
        if time.monotonic() >= deadline:
            return f"{len(children)} processes of the program were still dying {_SWEEP_BOUND_S:.0f} s after it ended"
        time.sleep(0.001)


def _reap_any() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _close_all(*fds: int) -> None:
    for fd in fds:
        if fd < 0:
            continue
        try:
            os.close(fd)
        except OSError:
            pass
