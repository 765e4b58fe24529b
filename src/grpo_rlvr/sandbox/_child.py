"""The untrusted process: a trusted prelude that locks it down, then the model's program and the probes.

The prelude (new session, jail or temp dir, scrubbed environment, rlimits, no-new-privs, dropped uid,
every inherited file descriptor closed) runs before any model code, and reports the layers it put in place
on a setup pipe that it closes before the program starts. After that nothing in this process is trusted:
it only produces values (plain data on fd 3, the result channel) and output (fd 1/2), which the parent
judges. Expected values never reach this process.
Covered: the lock-down above, one result frame per probe, a crash mid-way leaving later probes unanswered.
Not covered: anything the program does to its own process (it may forge frames: they carry only values).
"""

from __future__ import annotations

import builtins
import fcntl
import json
import math
import os
import resource
import signal
import sys

from . import _jail
from . import _syscalls as sc
from ._plaindata import encode

RESULT_FD = 3
_SETUP_FD = 4
_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONIOENCODING": "utf-8"}
FILE_SIZE_LIMIT = 16 * 1024 * 1024  # bytes, per file the program writes
OPEN_FILES_LIMIT = 256


def run_child(job: dict, state: _jail.ZygoteState, ctx: dict, fds: dict[int, int]) -> None:
    """Never returns: lock down, run ``job``, ``os._exit``.

    ``fds`` maps the child's fd numbers (0-4) to the pipe ends made by the supervisor; ``ctx`` holds the
    supervisor's decisions (uid, pidns, namespaces, workdir).
    """
    setup_fd = fds[_SETUP_FD]  # until _install_fds moves it to fd 4
    try:
        _install_fds(fds)
        setup_fd = _SETUP_FD
        layers = _prelude(job["limits"], state, ctx)
        os.write(setup_fd, json.dumps({"layers": layers}).encode())
        os.close(setup_fd)
    except BaseException as e:  # noqa: BLE001 - reported to the supervisor as an infrastructure failure
        try:
            os.write(setup_fd, json.dumps({"error": f"{type(e).__name__}: {e}"}).encode())
        finally:
            os._exit(70)
    code = 0
    try:
        code = _run(job)
    finally:
        os._exit(code)


def _install_fds(fds: dict[int, int]) -> None:
    """Put the pipe ends at fds 0-4 and close everything else the zygote had open (its protocol pipes)."""
    if min(fds.values()) <= _SETUP_FD:  # a source might be clobbered by an earlier dup2: move them up first
        fds = {target: fcntl.fcntl(fd, fcntl.F_DUPFD, 64) for target, fd in fds.items()}
    for target, fd in fds.items():
        os.dup2(fd, target, inheritable=True)
    os.closerange(_SETUP_FD + 1, resource.getrlimit(resource.RLIMIT_NOFILE)[1])


def child_environment(workdir: str) -> dict[str, str]:
    """The whole environment of a program: nothing from the trainer's."""
    return {**_ENV, "HOME": workdir, "TMPDIR": workdir}


def prepare_zygote(workdir: str | None) -> None:
    """Done once in the zygote, so each child inherits it instead of paying for it (~0.7 ms per program).

    The environment becomes exactly the child's (``workdir`` is known in advance when there is a jail), and
    ``sys.std*`` become fresh unbuffered-on-fork streams on fds 0-2, which each child points at its pipes.
    """
    os.environ.clear()
    os.environ.update(child_environment(workdir or "/"))
    sys.stdin = open(0, encoding="utf-8", errors="replace", closefd=False)
    sys.stdout = open(1, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
    sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)


def _prelude(limits: dict, state: _jail.ZygoteState, ctx: dict) -> list[str]:
    layers = ["process", "userns"] if state.userns else ["process"]
    os.setsid()  # own session and process group, so the supervisor can kill the group
    signal.signal(signal.SIGINT, signal.default_int_handler)  # the zygote ignores it; a program need not
    if ctx["pidns"]:
        layers.append("pidns")
    if state.netns:
        layers.append("netns")
    if ctx["namespaces"]:
        try:
            sc.unshare(sc.CLONE_NEWIPC)  # SysV/POSIX IPC objects die with the execution
            layers.append("ipcns")
        except OSError:
            pass
    uid = ctx["uid"]
    if state.root is not None:
        workdir = _jail.enter_jail(state.root)
        layers += ["fs_jail", "tmpdir"]
    else:
        workdir = ctx["workdir"]
        os.chdir(workdir)
        layers.append("tmpdir")
    if dict(os.environ) != child_environment(workdir):  # prepare_zygote made it so when workdir is fixed
        os.environ.clear()
        os.environ.update(child_environment(workdir))
    if "tempfile" in sys.modules:  # loaded in the zygote: forget the temp dir it cached there
        sys.modules["tempfile"].tempdir = None
    layers.append("env_scrubbed")
    layers += _set_limits(limits, nproc_applies=uid is not None or state.userns or os.geteuid() != 0)
    if uid is not None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        if os.getuid() != uid or os.geteuid() != uid:
            raise OSError("uid did not change")
        layers.append("uid_drop")
    if sc.available():
        sc.clear_capabilities()
        if state.caps_locked:  # the zygote emptied the bounding set: nothing can grant one again
            layers.append("caps_dropped")
        sc.prctl(sc.PR_SET_NO_NEW_PRIVS, 1)  # setuid binaries cannot raise privileges again
        layers.append("no_new_privs")
        if state.seccomp is not None:
            sc.load_seccomp(state.seccomp)
            layers.append("seccomp")
    return layers


def _set_limits(limits: dict, nproc_applies: bool) -> list[str]:
    cpu = max(1, math.ceil(limits["cpu_s"]))  # soft == hard: SIGKILL at the limit, even as PID 1
    memory = limits["memory_mb"] * 1024 * 1024
    pairs = [
        (resource.RLIMIT_CPU, cpu, "rlimit_cpu"),
        (resource.RLIMIT_AS, memory, "rlimit_as"),
        (resource.RLIMIT_NPROC, limits["max_processes"], "rlimit_nproc"),
        (resource.RLIMIT_FSIZE, FILE_SIZE_LIMIT, "rlimit_fsize"),
        (resource.RLIMIT_CORE, 0, None),
        (resource.RLIMIT_NOFILE, OPEN_FILES_LIMIT, None),
    ]
    layers = []
    for which, value, name in pairs:
        hard = resource.getrlimit(which)[1]
        if hard != resource.RLIM_INFINITY:  # without privileges a limit can only be lowered
            value = min(value, hard)
        resource.setrlimit(which, (value, value))
        if name and (name != "rlimit_nproc" or nproc_applies):  # root ignores RLIMIT_NPROC
            layers.append(name)
    return layers


# --- after this line, model code runs in this process ---------------------------------------------------


def _describe(exc: BaseException) -> str:
    try:
        text = f"{type(exc).__name__}: {exc}"
    except BaseException:  # noqa: BLE001 - a hostile __str__
        text = "an exception that cannot be printed"
    return text[:300]


def _send(frame: dict) -> None:
    data = (json.dumps(frame, ensure_ascii=True) + "\n").encode()
    while data:
        data = data[os.write(RESULT_FD, data) :]


def _run(job: dict) -> int:
    """Run the program, then each probe; return the process exit code (stdio mode cares)."""
    stdio = job["mode"] == "stdio"
    namespace = {"__name__": "__main__" if stdio else "__sandbox__", "__builtins__": builtins}
    try:
        exec(compile(job["program"], "<program>", "exec"), namespace)
    except SystemExit as e:
        if stdio:
            return _exit_code(e.code)
        _send({"k": "load", "e": "SystemExit while loading the program"})
        return 0
    except BaseException as e:  # noqa: BLE001 - the program's failure is a result
        if stdio:
            print(f"Traceback (most recent call last) omitted\n{_describe(e)}", file=sys.stderr)
            return 1
        _send({"k": "load", "e": _describe(e)})
        return 0
    finally:
        if stdio:
            _flush()
    if stdio:
        return 0
    _send({"k": "load"})
    scopes: dict[int, dict] = {}  # per-test copies of the module namespace (a test function's locals)
    for i, (kind, source, scope) in enumerate(job["probes"]):
        try:
            if scope < 0:
                where = namespace
            elif scope in scopes:
                where = scopes[scope]
            else:
                where = scopes[scope] = dict(namespace)
            if kind == "eval":
                value = eval(compile(source, f"<test {i + 1}>", "eval"), where)
                frame = {"k": "r", "i": i, "v": encode(value)}
            else:
                exec(compile(source, f"<test {i + 1}>", "exec"), where)
                frame = {"k": "r", "i": i}
        except BaseException as e:  # noqa: BLE001 - includes SystemExit raised by the program
            frame = {"k": "r", "i": i, "e": _describe(e)}
        _send(frame)
    return 0


def _exit_code(code) -> int:
    if code is None:
        return 0
    if isinstance(code, int) and not isinstance(code, bool):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001
            pass
