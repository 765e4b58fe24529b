"""The untrusted process: a trusted prelude that locks it down, then the model's program and the probes.

Forked by the template (``isolation.template``) from an image that never held any sample's data. The
prelude reads this execution's job (program, probes, limits, uid, working directory) from the job pipe, then
locks down (new session, jail or private working directory, scrubbed environment, rlimits, dropped uid,
no capabilities, no-new-privs, Landlock without a jail, seccomp, which also denies System V and POSIX IPC, so
no IPC namespace is needed; every inherited file descriptor closed)
before any model code runs, and reports the layers it put in place on a setup pipe that it closes before the
program starts. After that nothing in this process is trusted: it only produces values (plain data on fd 3,
the result channel) and output (fd 1/2), which the parent judges. Expected values never reach this process.
Test bodies run in the body runner (``_serve``), a process forked from this one after the program loaded, one body
after the other, as pytest runs a module's tests; the loaded program never runs a body and forks a fresh runner
when one ends.
Covered: the lock-down above, one result frame per probe, a crash mid-way leaving later probes unanswered (in a
body: that body's only).
Not covered: anything the program does to its own process (it may forge frames: they carry only values).
"""

from __future__ import annotations

import _thread
import builtins
import fcntl
import json
import marshal
import math
import os
import resource
import signal
import sys
import time
import types

from ..judging.plaindata import CONSUMERS, PLAIN_TYPES, NotPlainData, encode_as_python
from . import fixtures as _fixtures  # noqa: F401 - loaded here so that test bodies in the jail can import it
from . import framing as _framing
from . import jail as _jail
from . import landlock as _landlock
from . import syscalls as sc

RESULT_FD = 3
_SETUP_FD = 4
_JOB_FD = 5
_LANDLOCK_FD = 6
_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONIOENCODING": "utf-8"}
FILE_SIZE_LIMIT = 16 * 1024 * 1024  # bytes, per file the program writes
OPEN_FILES_LIMIT = 256
_REAP_BOUND_S = 0.2  # seconds the loaded program waits for what a finished test body started to die
# A body runner takes the next test body only while it has used less than this share of the CPU limit (RLIMIT_CPU
# counts the whole process): each body then has at least 95% of the limit (in a fresh runner, all of it).
_RETIRE_SHARE = 0.05
# A new thread's stack, reserved in full against the address-space limit: the system's default (RLIMIT_STACK, often
# 8 MiB) would let a 512 MiB program start fewer than 60 threads. A program may still ask for more (stack_size()).
THREAD_STACK = 2 * 1024 * 1024
# glibc gives each new thread a malloc arena reserving 64 MiB of address space (up to 8 per core): 8 threads would
# fill a 512 MiB limit. Two arenas shared by all threads, as ``MALLOC_ARENA_MAX=2`` would set.
_M_ARENA_MAX, MALLOC_ARENAS = -8, 2
MAX_JOB_BYTES = 512 * 1024 * 1024  # what the supervisor may send (it bounds programs and probes far below)


def run_child(fds: list[int], state: _jail.SandboxState, pidns: bool) -> None:
    """Never returns: read the job, lock down, run it, ``os._exit``.

    ``fds``: job_r, stdin_r, stdout_w, stderr_w, result_w, setup_w (pipe ends made by the supervisor);
    ``pidns``: this process is PID 1 of a PID namespace of its own.
    """
    setup_fd = fds[5]  # until _install_fds moves it to fd 4
    try:
        _install_fds(fds, state)
        setup_fd = _SETUP_FD
        job = _read_job()
        layers = _prelude(job, state, pidns)
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


def _install_fds(fds: list[int], state: _jail.SandboxState) -> None:
    """Put the pipe ends at fds 0-5 (and the Landlock ruleset at 6), close everything else inherited."""
    targets = dict(zip((_JOB_FD, 0, 1, 2, RESULT_FD, _SETUP_FD), fds, strict=True))
    if state.landlock is not None:
        targets[_LANDLOCK_FD] = state.landlock.fd
    # A source might be clobbered by an earlier dup2: move them all above the targets first.
    targets = {target: fcntl.fcntl(fd, fcntl.F_DUPFD, 64) for target, fd in targets.items()}
    for target, fd in targets.items():
        os.dup2(fd, target, inheritable=target < _JOB_FD)
    os.closerange(_LANDLOCK_FD + 1, resource.getrlimit(resource.RLIMIT_NOFILE)[1])


def _read_job() -> dict:
    """The first message on the job pipe: mode, program, limits, uid. The pipe stays open: the probes come on it
    later, one test at a time (``_serve``)."""
    try:
        job = _framing.recv(_JOB_FD, None, MAX_JOB_BYTES)
    except _framing.ChannelError as e:
        raise OSError(f"the job could not be read: {e}") from e
    if not isinstance(job, dict):
        raise OSError("no job on the job pipe")
    return job


def child_environment(workdir: str) -> dict[str, str]:
    """The whole environment of a program: nothing from the trainer's."""
    return {**_ENV, "HOME": workdir, "TMPDIR": workdir}


def workdir_inside(state: _jail.SandboxState) -> str:
    """The working directory as the program sees it."""
    return _jail.WORKDIR if state.root is not None else os.path.join(state.workbase or "/", "run")


def prepare_template(state: _jail.SandboxState) -> None:
    """Done once in the template, so each child inherits it instead of paying for it (~0.7 ms per program).

    The environment becomes exactly the child's, and ``sys.std*`` become fresh unbuffered-on-fork streams on
    fds 0-2, which each child points at its pipes.
    """
    os.environ.clear()
    os.environ.update(child_environment(workdir_inside(state)))
    _thread.stack_size(THREAD_STACK)
    if _landlock._libc is not None:  # glibc's malloc: few arenas (each reserves 64 MiB of address space per thread)
        _landlock._libc.mallopt(_M_ARENA_MAX, MALLOC_ARENAS)
    sys.meta_path.insert(0, _ForkByDefault())
    sys.stdin = open(0, encoding="utf-8", errors="replace", closefd=False)
    sys.stdout = open(1, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
    sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)


class _ForkByDefault:
    """Makes ``fork`` multiprocessing's default start method when a program imports it, as on Linux up to Python
    3.13. From 3.14 the default is ``forkserver``, which needs a UNIX socket bound to a path (the seccomp filter
    denies ``bind``) and a program it can import by name (a program here is no file): with it, a program that
    uses a ``Pool`` as a script would fails here. A program that asks for a start method still gets it."""

    def find_spec(self, name, path=None, target=None):
        if name != "multiprocessing.context":
            return None
        sys.meta_path.remove(self)
        import importlib.util

        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            concrete = getattr(module, "_concrete_contexts", {})
            default = getattr(module, "_default_context", None)
            if "fork" in concrete and default is not None:
                default._default_context = concrete["fork"]

        spec.loader.exec_module = exec_module
        return spec


def _prelude(job: dict, state: _jail.SandboxState, pidns: bool) -> list[str]:
    layers = ["process", "userns"] if state.userns else ["process"]
    os.setsid()  # own session and process group, so the supervisor can kill the group
    if sc.available():
        sc.prctl(sc.PR_SET_PDEATHSIG, signal.SIGKILL)  # the supervisor (our parent since clone) gone: die too
    signal.signal(signal.SIGINT, signal.default_int_handler)  # the template ignores it; a program need not
    if pidns:
        layers.append("pidns")
    if state.netns:
        layers.append("netns")
    uid = job["uid"]
    workdir = workdir_inside(state)
    if state.root is not None:
        _jail.enter_jail(state.root)
        layers += ["fs_jail", "tmpdir", "private_shm"]
    else:
        os.chdir(workdir)
        layers.append("tmpdir")
    if dict(os.environ) != child_environment(workdir):  # prepare_template made it so
        os.environ.clear()
        os.environ.update(child_environment(workdir))
    if "tempfile" in sys.modules:  # loaded in the template: forget the temp dir it cached there
        sys.modules["tempfile"].tempdir = None
    layers.append("env_scrubbed")
    _importable(job, state)
    shares_our_uid = uid is None and not state.userns and os.geteuid() != 0
    layers += _set_limits(job["limits"], nproc_applies=uid is not None or state.userns or os.geteuid() != 0,
                          nproc_base=_tasks_of_our_uid() if shares_our_uid else 0)
    if uid is not None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        if os.getuid() != uid or os.geteuid() != uid:
            raise OSError("uid did not change")
        layers.append("uid_drop")
    if sc.available():
        sc.clear_capabilities()
        if state.caps_locked:  # the supervisor emptied the bounding set: nothing can grant one again
            layers.append("caps_dropped")
        sc.prctl(sc.PR_SET_NO_NEW_PRIVS, 1)  # setuid binaries cannot raise privileges again
        layers.append("no_new_privs")
        if state.landlock is not None:
            _landlock.restrict_self(_LANDLOCK_FD)
            os.close(_LANDLOCK_FD)
            layers += state.landlock.layers
        if state.seccomp is not None:
            sc.load_seccomp(state.seccomp)
            layers += ["seccomp", "no_file_locks", "metadata_frozen"]
    if state.root is not None and "metadata_frozen" not in layers:
        layers.append("metadata_frozen")  # the jail's mounts are read-only: nothing outside the working dir changes
    return layers


def _importable(job: dict, state: _jail.SandboxState) -> None:
    """A program run by tests that names another start method than fork (``spawn``, ``forkserver``) starts processes
    that import it by its module's name, ``__sandbox__``: it is written (while this process may still write
    outside the working directory) to ``lib/__sandbox__.py`` next to the working directory, read-only to the
    program, at the end of ``sys.path``. Gone with the working directory."""
    if job["mode"] == "stdio" or not any(word in job["program"] for word in ("spawn", "forkserver")):
        return
    folder = os.path.join(_jail.SANDBOX_DIR if state.root is not None else state.workbase or "/", "lib")
    try:
        os.mkdir(folder, 0o755)
        with open(os.path.join(folder, "__sandbox__.py"), "w", encoding="utf-8") as f:
            f.write(job["program"])
    except (OSError, ValueError):
        return
    sys.path.append(folder)


def _tasks_of_our_uid() -> int:
    """Processes and threads of this real uid now (what ``RLIMIT_NPROC`` counts). An execution that keeps the
    trainer's uid shares that count with the trainer's own threads, so its limit starts from here."""
    uid, count = os.getuid(), 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid == uid:
                count += len(os.listdir(f"/proc/{entry.name}/task"))
        except OSError:  # gone meanwhile
            continue
    return count


def _set_limits(limits: dict, nproc_applies: bool, nproc_base: int = 0) -> list[str]:
    """``nproc_base``: tasks of this uid that are not the execution's (0 when it has a uid of its own)."""
    cpu = max(1, math.ceil(limits["cpu_s"]))  # soft == hard: SIGKILL at the limit, even as PID 1
    memory = limits["memory_mb"] * 1024 * 1024
    pairs = [
        (resource.RLIMIT_CPU, cpu, "rlimit_cpu"),
        (resource.RLIMIT_AS, memory, "rlimit_as"),
        (resource.RLIMIT_NPROC, nproc_base + limits["max_processes"], "rlimit_nproc"),
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


# The built-ins a test applies to program values (``judging.plain_ops.CONSUMERS``), as they are before any program
# runs: a program that rebinds ``builtins.sorted`` changes what its own code calls, not what the test applies.
REAL = {**{name: getattr(builtins, name) for name in CONSUMERS}, "str.join": str.join}
# What the probe loop uses, bound before the program runs: a program that rebinds a builtin or a module function
# for its own use (``builtins.len``, ``json.dumps``) does not break the loop that runs its tests.
_dumps, _unmarshal, _write, _read, _len, _compile, _eval, _exec = (
    json.dumps, marshal.loads, os.write, os.read, len, compile, eval, exec)
_monotonic, _sleep, _isinstance, _CodeType = time.monotonic, time.sleep, isinstance, types.CodeType
_getpid, _setpgid, _waitid, _killpg, _waitpid = os.getpid, os.setpgid, os.waitid, os.killpg, os.waitpid
_getpgrp, _times = os.getpgrp, os.times
# json.dumps(frame, ensure_ascii=True) without the encoder json.dumps builds per call (and its cycle check: frames hold
# only encode_as_python's fresh lists): a test body's fresh fork writes ~35 pages fewer per frame.
_encoder = getattr(json.encoder, "c_make_encoder", None)
_frame_json = _encoder(None, json.JSONEncoder().default, json.encoder.encode_basestring_ascii, None, ": ", ", ",
                       False, False, True) if _encoder is not None else None
_join = "".join


def _send(frame: dict | str) -> None:
    """One frame on the result channel: a dict, or a line already formatted (``_ended_frame``)."""
    if type(frame) is not str:
        frame = (_join(_frame_json(frame, 0)) if _frame_json is not None else _dumps(frame, ensure_ascii=True)) + "\n"
    data = frame.encode()
    while data:
        data = data[_write(RESULT_FD, data) :]


def _recv() -> dict | None:
    """The next message of the job pipe (4-byte length, ``marshal``: C code only, where ``json`` would call the
    program's builtins), None at its end. Written by ``isolation.feeder``."""
    header = _read_exactly(4)
    if header is None:
        return None
    body = _read_exactly(int.from_bytes(header, "big"))
    return _unmarshal(body) if body is not None else None


def _read_exactly(size: int) -> bytes | None:
    if size > MAX_JOB_BYTES:
        return None
    chunks, got = [], 0
    while got < size:
        try:
            chunk = _read(_JOB_FD, size - got)
        except OSError:
            return None
        if not chunk:
            return None
        chunks.append(chunk)
        got += _len(chunk)
    return b"".join(chunks)


def _run(job: dict) -> int:
    """Run the program, then serve its probes (``_serve``); return the process exit code (stdio mode cares)."""
    stdio = job["mode"] == "stdio"
    # A real module, in sys.modules: pickle finds the program's functions by their module's name, as
    # multiprocessing does to send one to a Pool's workers (__sandbox__: its ``if __name__ == "__main__"`` block is
    # a script's own business, not the tests').
    module = types.ModuleType("__main__" if stdio else "__sandbox__")
    sys.modules[module.__name__] = module
    namespace = module.__dict__
    namespace["__builtins__"] = builtins
    filename = "<program>"
    if stdio:  # as ``python main.py`` would run it
        filename = namespace["__file__"] = _as_file(job["program"], "main.py")
        sys.argv = [filename]
    try:
        exec(compile(job["program"], filename, "exec"), namespace)
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
    return _serve(namespace, job["limits"]["cpu_s"])


def _as_file(program: str, name: str) -> str:
    """Write the program to ``name`` in the working directory, which becomes ``sys.path[0]``, as a script's directory
    is: ``__file__`` is a real file, and a process started with ``spawn`` (which runs ``__main__``'s file again) finds
    it. ``"<program>"`` where it cannot be written."""
    path = os.path.join(os.getcwd(), name)
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(program)
    except (OSError, ValueError):
        return "<program>"
    sys.path.insert(0, os.path.dirname(path))
    return path


class _Scope(dict):
    """A test body's own names (its locals), over the program's module namespace, which it reads live: a global
    the program rebinds during the test is seen as it is now, as a test function would see it."""

    __slots__ = ("module",)

    def __init__(self, module: dict):
        super().__init__()
        self.module = module

    def __missing__(self, name):
        return self.module[name]


def _serve(namespace: dict, cpu_s: float) -> int:
    """Answer the supervisor's messages until it closes the job pipe: ``{"p": probes, "last": bool}`` runs probes
    here (one test's, with the setup before it: the next test's come only once these have answered);
    ``{"f": 1}`` forks the body runner, a process that runs the test bodies that follow one after the other, as
    pytest runs a module's tests in one process, while this one waits for it, ends what it started (``_end_body``)
    and reports how it ended (``{"k": "s"}``). The runner starts from the loaded program (its random generator
    included), which no body ever changes; a body starts from what the bodies before it in the same runner left,
    as under pytest. After a body's last probe (``"last"``) the runner ends what the body started (``_end_group``)
    before it sends that probe's answer, when it may take the next body (``"stay"``: the next delivery is another
    body's) and has used under ``_RETIRE_SHARE`` of the CPU limit: the supervisor sends the next test on that answer.
    Else it says so (``{"k": "q"}``), answers and exits; this process reports its end, and the supervisor waits for
    that report. After the last test of all (``"end"``) the runner only answers: the supervisor ends the execution
    on those answers (``isolation.execution``). A runner that dies mid-body (a crash, ``os._exit``, a signal, the
    CPU limit) loses that body only: the next one gets a fresh runner. A test class's set-up comes with each of its
    tests (``"o"``: its scope runs once per process, ``_answer``): a fresh runner runs it again before the class's
    next test."""
    scopes: dict[int, dict] = {}  # per-test-body names (a test function's locals)
    done: dict[int, list] = {}  # the frames of the ``once`` scopes this process ran (a test class's set-up)
    runner = False
    home = _getpgrp()  # this process's group: the runner stands in it while it kills its own (_end_group)
    retire_at = _RETIRE_SHARE * max(1, math.ceil(cpu_s))
    while True:
        try:
            message = _recv()
        except (ValueError, EOFError, TypeError):
            return 0
        if type(message) is not dict:
            return 0
        if message.get("f"):
            if runner:  # the runner forks no runner: it ends, and the loaded program reads the rest
                _flush()
                os._exit(0)
            _flush()  # or the fork would print what is buffered here a second time
            generator = _generator_state()
            _adopt_orphans()
            pid = os.fork()
            if pid == 0:
                runner, scopes, done = True, {}, {}
                _restore_generator(generator)
                try:
                    _setpgid(0, 0)  # a group of its own: what a body starts ends with it (_end_group)
                except OSError:
                    pass
                continue
            _send(_end_body(pid))
            continue
        if not runner and message.get("b"):  # a body's probes left unread by a runner that died: not run here
            if message.get("end"):
                return 0
            continue
        if runner and message.get("last"):  # a body's last test: its answers go once what it started is ended
            frames: list = []
            _answer(message, namespace, scopes, done, frames.append)
            if message.get("end"):  # the last test of all: the supervisor ends the whole execution on its answers
                for frame in frames:
                    _send(frame)
                continue
            stays = message.get("stay") and _cpu() < retire_at and _end_group(home)
            if not stays:
                _send(_QUITS)  # the supervisor waits for the loaded program's report of this runner's end
            for frame in frames:
                _send(frame)
            if not stays:
                _flush()
                os._exit(0)
            continue
        _answer(message, namespace, scopes, done, _send)
        if message.get("end"):  # the last test: nothing more will come
            return 0


def _answer(message: dict, namespace: dict, scopes: dict, done: dict, out) -> None:
    """Run a message's probes in order, handing each one's frame to ``out``. A probe of a ``once`` scope (the
    message's ``"o"``: a test class's set-up, sent before each of its tests) runs only where this process has not run
    that scope yet; else it is answered with the frame its run gave then (``done``), under its own index."""
    once = message.get("o")
    replayed = {scope: 0 for scope in once if scope in done} if once else None
    for i, kind, source, scope in message.get("p", ()):
        if once and scope in once:
            k = replayed.get(scope)
            if k is None:  # run here for the first time: remembered
                frame = _probe(i, kind, source, _scope(scope, namespace, scopes))
                done.setdefault(scope, []).append(frame)
                out(frame)
                continue
            if k < _len(done[scope]):
                replayed[scope] = k + 1
                out({**done[scope][k], "i": i})
                continue
        out(_probe(i, kind, source, _scope(scope, namespace, scopes)))


def _scope(scope: int, namespace: dict, scopes: dict) -> dict:
    """Where a probe of ``scope`` runs: the program's namespace (``scope`` < 0), or that test body's own names."""
    if scope < 0:
        return namespace
    where = scopes.get(scope)
    if where is None:
        where = scopes[scope] = _Scope(namespace)
    return where


def _cpu() -> float:
    """CPU seconds of this process so far, every thread's (what ``RLIMIT_CPU`` counts)."""
    t = _times()
    return t[0] + t[1]


def _subreaper() -> None:
    """Make this process the one its descendants' orphans are reparented to (where the kernel call is available)."""
    if sc.available():
        try:
            sc.prctl(sc.PR_SET_CHILD_SUBREAPER, 1)
        except OSError:
            pass


_RUNNER_ADOPTS: list[bool] = []  # the body runner is a subreaper (``_end_group``); only runners set it


def _end_group(home: int) -> bool:
    """In the runner, after a body: kill what the body started (the runner's process group, less the runner, which
    steps into the loaded program's group ``home`` meanwhile) and reap it, as ``_end_body`` does for the runner.
    Threads the body started go on (as under pytest). A process that left the group is not ended: the execution's
    end kills it. The first time a body started a process, the runner makes itself the process the later bodies'
    orphans are reparented to, so that it reaps them here; else they would stay zombies until the runner ends,
    counted against the sample's process caps (the first such body's orphans are: the loaded program reaps them
    then). A body that starts none costs no such call (through ``ctypes``, ~40 pages written in a fresh runner).
    True when the group could be killed."""
    me = _getpid()
    try:
        _setpgid(0, home)
    except OSError:  # the runner could not leave its group: it cannot kill it without killing itself
        return False
    try:
        _killpg(me, signal.SIGKILL)
    except OSError:  # nothing in it, not even a zombie (the common case: the body started nothing)
        pass
    else:
        _reap_group(me)
        if not _RUNNER_ADOPTS:
            _RUNNER_ADOPTS.append(True)
            _subreaper()
    try:
        _setpgid(0, 0)
    except OSError:
        pass
    return True


def _generator_state():
    """``random``'s state in the loaded program (None when it is not loaded or will not say): the random module
    reseeds itself in every forked child, and a test body starts from the loaded program, a seed it set included."""
    module = sys.modules.get("random")
    try:
        return (module, module.getstate()) if module is not None else None
    except BaseException:  # noqa: BLE001 - the program's own module, whatever it made of it
        return None


def _restore_generator(saved) -> None:
    if saved is not None:
        try:
            saved[0].setstate(saved[1])
        except BaseException:  # noqa: BLE001
            pass


_ADOPTING: list[bool] = []


def _adopt_orphans() -> None:
    """Before the first test body: make this process the one a body's orphans are reparented to (it is already, as
    PID 1 of its own PID namespace), so that ``_end_body`` can reap them; else they would be the supervisor's
    zombies until the execution ends, counted against the sample's process caps. Once per execution: a flag that
    is not inherited by a fork costs each body a system call through ``ctypes`` otherwise (~0.2 ms)."""
    if not _ADOPTING:
        _ADOPTING.append(True)
        if _getpid() != 1:
            _subreaper()


def _end_body(pid: int) -> str:
    """Wait for the body runner to exit, kill what it started (its process group, which bears its pid: killed
    while the runner is a zombie, so that pid cannot name another group yet), reap the runner and then its group (its
    orphans were reparented here, ``_adopt_orphans``), so that nothing it left running counts against the sample's
    process caps. A process that left the group is not waited for: the execution's end kills it. Returns the frame
    of how the runner ended (``_ended``)."""
    while True:
        try:
            _waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
            break
        except InterruptedError:
            continue
        except OSError:  # the program reaped it itself (SIGCHLD ignored, or its own wait): its group stays
            return _ended_frame(None, 0.0)
    try:
        _killpg(pid, signal.SIGKILL)
    except OSError:  # the body could not make a group of its own
        pass
    ended = _ended(pid)
    _reap_group(pid)
    return ended


def _reap_group(group: int) -> None:
    """Reap this process's children in ``group`` (sent SIGKILL), waiting at most ``_REAP_BOUND_S`` for them to die."""
    deadline = None
    while True:
        try:
            reaped, _ = _waitpid(-group, os.WNOHANG)
        except OSError:  # ChildProcessError: none left in its group (the common case: it started nothing)
            break
        if reaped == 0:  # alive: dying of the SIGKILL
            deadline = deadline or _monotonic() + _REAP_BOUND_S
            if _monotonic() >= deadline:
                break
            _sleep(0.001)


def _probe(i: int, kind: str, source: str, where: dict) -> dict:
    """The frame for probe ``i``: its value (``eval``), its leaves' values (``leaves``), or only whether it ran; an
    exception is described by its text, its class's ancestry and its message (``_raised``)."""
    try:
        if kind == "eval":
            return {"k": "r", "i": i, "v": encode_as_python(_eval(_code(source, i, "eval"), where))}
        if kind == "leaves":
            return {"k": "r", "i": i, "v": _leaves(source, i, where)}
        _exec(_code(source, i, "exec"), where)
        return {"k": "r", "i": i}
    except BaseException as e:  # noqa: BLE001 - includes SystemExit raised by the program
        _, names, message = _raised(e)
        return {"k": "r", "i": i, "e": _describe(e), "t": names, "m": message}


def _ended(pid: int) -> str:
    """Wait for a test body's process; the frame of how it ended: exit code (negative: the signal) and CPU seconds."""
    while True:
        try:
            _, status, usage = os.wait4(pid, 0)
        except InterruptedError:
            continue
        except OSError:  # the program reaped it itself (SIGCHLD ignored, or its own wait)
            return _ended_frame(None, 0.0)
        return _ended_frame(os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime)


def _ended_frame(code: int | None, cpu_s: float) -> str:
    """``{"k": "s", "x": code, "c": cpu_s}`` as ``json.dumps`` writes it, formatted directly: this process writes it
    after every fork, and each page it writes after a fork is a page fault (``json.dumps`` touches ~30 more)."""
    x = "null" if code is None else code
    return f'{{"k": "s", "x": {x}, "c": {cpu_s:.6f}}}\n'


_QUITS = '{"k": "q"}\n'  # the body runner's word that it exits after this body's answers


def _code(source, i: int, mode: str):
    """A probe's code: compiled by the supervisor (``isolation.feeder.compiled``), or its text compiled here."""
    return source if type(source) is _CodeType else _compile(source, f"<test {i + 1}>", mode)


def _leaves(specs: list, i: int, where: dict) -> list:
    """The values of a strong assert's leaves, each on its own: encoded, ``["x", why, truth, isa]`` when it is not
    plain data, or ``["!", ...]`` when evaluating it raised (``_raised``: the parent raises it only where the assert
    reads that leaf, as Python would). A spec is ``["e", source]`` evaluated, ``["m", k, name, args]``: the method
    ``name`` of leaf k's value called (the parent recomputes it when that value is plain data), or ``["c", ...]``: a
    built-in applied to a program value (``_value``). Only values cross: what the test makes of them (``all``,
    ``isinstance``, ``==``) is decided in the parent."""
    values: list = []
    out: list = []
    for spec in specs:
        try:
            if spec[0] == "m":
                receiver = values[spec[1]]
                if type(receiver) is _Failed:
                    raise receiver.exc
                args = _eval(_code(spec[3], i, "eval"), where)
                value = getattr(receiver, spec[2])(*args)
            else:
                value = _value(spec, i, where)
            encoded = _encode_or_mark(value)  # may run the program's code too (a subclass's items)
        except BaseException as e:  # noqa: BLE001 - the program's exception is this leaf's outcome
            values.append(_Failed(e))
            out.append(_raised(e))
            continue
        values.append(value)
        out.append(encoded)
    return out


class _Failed:
    __slots__ = ("exc",)

    def __init__(self, exc: BaseException):
        self.exc = exc


def _raised(exc: BaseException) -> list:
    """``["!", names, message]``: the exception's class and its ancestors (``module.qualname``, for the parent's
    ``pytest.raises``/``assertRaises`` and reasons) and ``str()`` of it."""
    try:
        names = [f"{c.__module__}.{c.__qualname__}"[:200] for c in type(exc).__mro__][:32]
        names = [n for n in names if type(n) is str]
    except BaseException:  # noqa: BLE001 - a hostile metaclass
        names = []
    try:
        message = str(exc)[:4096]
        message = message if type(message) is str else ""
    except BaseException:  # noqa: BLE001 - a hostile __str__
        message = ""
    return ["!", names, message]


def _value(spec: list, i: int, where: dict):
    """``["e", source]``: evaluated here; ``["b", name]``: the built-in as it was before the program ran;
    ``["c", name, args, kwargs]``: that built-in called on the values of its argument specs."""
    if spec[0] == "e":
        return _eval(_code(spec[1], i, "eval"), where)
    if spec[0] == "b":
        return REAL[spec[1]]
    if spec[0] == "k":
        return _instance_facts(_value(spec[1], i, where), _value(spec[2], i, where))
    if spec[0] == "n":  # the names of a class (or tuple of classes) an expected exception must be an instance of
        value = _eval(_code(spec[1], i, "eval"), where)
        classes = value if _isinstance(value, tuple) else (value,)
        if not all(_isinstance(c, type) for c in classes):
            raise TypeError("an expected exception must be a class or a tuple of classes")
        return [_qualified(c) for c in classes]
    args = [_value(a, i, where) for a in spec[2]]
    kwargs = {name: _value(a, i, where) for name, a in spec[3]}
    return REAL[spec[1]](*args, **kwargs)


def _instance_facts(value, classes) -> dict:
    """What ``isinstance(value, classes)`` turns on, for the parent to decide: the names of the value's class and
    its ancestors, and of each class asked for; for an abstract class (its own ``__instancecheck__``) the answer
    computed here, which the parent counts as weak."""
    wanted = classes if _isinstance(classes, tuple) else (classes,)
    for c in wanted:
        if not _isinstance(c, type):
            raise TypeError("isinstance() arg 2 must be a type, a tuple of types, or a union")
    abstract = any(type(c).__instancecheck__ is not type.__instancecheck__ for c in wanted)
    return {"mro": [_qualified(c) for c in type(value).__mro__], "classes": [_qualified(c) for c in wanted],
            "abstract": abstract, "result": (True if _isinstance(value, classes) else False) if abstract else None}


def _qualified(cls: type) -> str:
    return f"{type.__getattribute__(cls, '__module__')}.{type.__getattribute__(cls, '__qualname__')}"[:200]


def _encode_or_mark(value):
    try:
        return encode_as_python(value)
    except NotPlainData as e:
        return ["x", str(e)[:200], _truth(value), [name for name, t in PLAIN_TYPES.items() if _isinstance(value, t)]]


def _truth(value) -> bool | None:
    """``bool(value)`` as the value's own ``__bool__``/``__len__`` says (None when that raises): the parent uses it
    only where the test asks for the truth of a value that is not plain data (``assert stack``)."""
    try:
        return True if value else False
    except BaseException:  # noqa: BLE001
        return None


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
