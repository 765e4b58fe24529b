"""The parent's side: a pool of supervisor processes (``isolation.supervisor``), one per worker, used from worker threads.

Each supervisor serves one request at a time; a batch is spread over the pool by a thread pool (the threads
only wait on pipes). A supervisor that dies or stops answering is replaced and the request retried once; one
that could not clean up after a program is closed and replaced (never reused); a second failure, or a
supervisor that reports an infrastructure error, raises ``SandboxError``. A reply is refused unread when it
announces more bytes than the request can produce (``reply_limit``). Before the first program runs, the
layers a supervisor reports are held against ``isolation.policy``: too few, and the pool refuses to score.
Covered: respawn, concurrency, shutdown at exit, a pool inherited across ``fork()`` (rebuilt in the child).
Not covered: sharing one pool between processes.
"""

from __future__ import annotations

import atexit
import logging
import os
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ...errors import SandboxError
from . import framing as _framing
from . import policy as _policy
from . import seccomp as _seccomp
from .execution import STDERR_TAIL
from .jail import WITHOUT, remove_tree

logger = logging.getLogger(__name__)
_STARTUP_TIMEOUT_S = 60.0
_REQUEST_SLACK_S = 30.0  # beyond the sample's budget, before the supervisor counts as hung
_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
_FIX = ("; the supervisor's own error, if any, is on stderr above. Check the sandbox as this user with: python -c "
        "'from grpo_rlvr.sandbox import isolation_layers; print(isolation_layers())'")

# Loads the sandbox modules without running grpo_rlvr/__init__.py (which may grow heavy imports):
# the template must stay small, since every program is a fork of it.
_BOOT = """import sys, types
for name, path in (("grpo_rlvr", {pkg!r}), ("grpo_rlvr.sandbox", {sandbox!r})):
    module = types.ModuleType(name)
    module.__path__ = [path]
    sys.modules[name] = module
from grpo_rlvr.sandbox.isolation.supervisor import main
main()
"""


class Overdue(Exception):
    """A request with its own time limit got no reply within it (``Pool.run``): its supervisor was killed."""


class _Supervisor:
    """One supervisor process (it forks its own template): started, asked, closed."""

    def __init__(self, without: frozenset[str]):
        self.workbase: str | None = None  # without a jail: its private directory, removed when it exits
        if not sys.executable:
            raise SandboxError("cannot start the sandbox: sys.executable is empty (embedded interpreter?)")
        here = Path(__file__).resolve().parent.parent  # the sandbox package
        boot = _BOOT.format(pkg=str(here.parent), sandbox=str(here))
        (program, outside_jail), why = _seccomp_program()
        seccomp = [f"--seccomp={program.hex()}", f"--seccomp-outside-jail={outside_jail.hex()}"] if program \
            else [f"--no-seccomp={why}"]
        args = [sys.executable, "-I", "-B", "-c", boot, *seccomp] + ([f"--without={','.join(sorted(without))}"]
                                                                      if without else [])
        env = {**_ENV, "TMPDIR": tempfile.gettempdir()}  # the supervisor's only setting from us; not its children's
        try:
            self.proc = subprocess.Popen(
                args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd="/",
                close_fds=True, start_new_session=True, bufsize=0,
            )  # fmt: skip
        except OSError as e:
            raise SandboxError(f"cannot start the sandbox supervisor ({sys.executable}): {e}") from e
        try:
            ready = _framing.recv(self.proc.stdout.fileno(), time.monotonic() + _STARTUP_TIMEOUT_S)
        except _framing.ChannelError as e:
            self.close()
            raise SandboxError(f"the sandbox supervisor failed to start: {e}{_FIX}") from e
        if not ready or not ready.get("ready"):
            self.close()
            raise SandboxError(f"the sandbox supervisor failed to start (exit code {self.proc.poll()}){_FIX}")
        self.layers = tuple(ready.get("layers", ()))
        self.pids = tuple(ready.get("pids", ()))  # the supervisor's and its template's, as /proc numbers them
        self.workbase = ready.get("workbase")
        for problem in ready.get("problems", []):
            if problem not in MISSING_LAYERS:  # once per process: every supervisor of a machine says the same
                MISSING_LAYERS[problem] = None
                logger.warning("sandbox layer missing: %s", problem)

    def request(self, message: dict, timeout_s: float) -> dict:
        _framing.send(self.proc.stdin.fileno(), message)
        reply = _framing.recv(self.proc.stdout.fileno(), time.monotonic() + timeout_s, reply_limit(message))
        if reply is None:
            raise _framing.ChannelError(f"the supervisor exited (code {self.proc.poll()})")
        return reply

    def kill(self) -> None:
        """End it now (a request it is still serving ends with it: its executions die with their PID 1, or of
        their parent-death signal), then clean up as ``close``."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.close()

    def close(self) -> None:
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=2)  # EOF on its stdin makes it exit
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.workbase and os.path.isdir(self.workbase):  # it was killed before it could remove it itself
            try:
                remove_tree(self.workbase)
            except OSError as e:
                logger.warning("sandbox: could not remove %s: %s", self.workbase, e)


_seccomp_built: tuple | None = None
MISSING_LAYERS: dict[str, None] = {}  # why a layer is missing, as supervisors reported it (insertion-ordered)


def _seccomp_program() -> tuple[tuple[bytes | None, bytes | None], str | None]:
    """The child's seccomp filters (in the jail, outside it), built once here: pyseccomp in the supervisor would
    make every fork ~1 ms dearer."""
    global _seccomp_built
    if _seccomp_built is None:
        (jail, why), (outside, why_outside) = _seccomp.build(), _seccomp.build(outside_jail=True)
        _seccomp_built = ((jail, outside), why or why_outside) if jail and outside else ((None, None), why or why_outside)
    return _seccomp_built


def _answered(supervisor: _Supervisor, message: dict, timeout_s: float) -> dict:
    """The supervisor's reply; ChannelError when it, or its template, was lost on the way."""
    reply = supervisor.request(message, timeout_s)
    if "lost" in reply:
        raise _framing.ChannelError(reply["lost"])
    return reply


def reply_limit(message: dict) -> int:
    """The most bytes a reply to ``message`` can hold: per execution the stdout the parent asked to keep, the
    result channel (none for stdin/stdout cases), the stderr tail (base64: 4/3), and room for the rest."""
    cap = message["limits"]["max_output_bytes"] if message["mode"] != "stdio" else 0
    return sum((keep + cap + STDERR_TAIL) * 4 // 3 + 65536 for keep in message["keep_stdout"]) + 65536


class Pool:
    """Supervisors, started lazily up to ``size``. ``without`` names layers to leave out (``isolation.jail.WITHOUT``):
    tests use it to act as a machine that lacks them (``{"namespaces"}``: a default container)."""

    def __init__(self, size: int = 1, without=()):
        self.size = max(1, size)
        self.without = frozenset(without)
        unknown = self.without - set(WITHOUT)
        if unknown:
            raise ValueError(f"Pool(without=...): unknown layers {sorted(unknown)}; known: {list(WITHOUT)}")
        self.owner_pid = os.getpid()
        self._idle: list[_Supervisor] = []
        self._started = 0
        self._cond = threading.Condition()

    def grow(self, size: int) -> None:
        with self._cond:
            self.size = max(self.size, size)

    def map(self, fn, items: list, workers: int) -> list:
        """``[fn(item) for item in items]`` with up to ``workers`` calls in flight, in order (``fn`` calls
        ``run`` and turns its reply into a verdict at once, so no more than ``workers`` replies are held)."""
        if not items:
            return []
        workers = max(1, min(workers, len(items)))
        if workers == 1:
            return [fn(item) for item in items]
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="grpo-sandbox") as ex:
            return list(ex.map(fn, items))

    def run(self, message: dict, allow_degraded: bool = False, request_timeout_s: float | None = None) -> dict:
        """Send one request (a program and its executions) to a supervisor; its reply holds one report each.

        A supervisor lost twice on the same program gives ``{"reports": [], "lost": why}`` (the program scores 0).
        ``request_timeout_s``: how long the reply may take from the moment the request is sent (after a supervisor is
        free, so a wait for one never counts); past it the supervisor is killed, its slot freed, and ``Overdue``
        raised. Without it, the sample's budget and some slack, then one retry.

        Raises:
            SandboxError: a supervisor cannot start, reported an infrastructure error, or (unless
                ``allow_degraded``) cannot isolate programs well enough to score (``isolation.policy``).
            Overdue: no reply within ``request_timeout_s``.
        """
        timeout_s = request_timeout_s or message["limits"]["sample_timeout_s"] + _REQUEST_SLACK_S
        supervisor = self._checkout()
        problems = _policy.isolation_problems(supervisor.layers)
        if problems and not allow_degraded:
            self._checkin(supervisor)
            raise SandboxError(_policy.refusal(problems, supervisor.layers))
        try:
            try:
                reply = _answered(supervisor, message, timeout_s)
            except _framing.ChannelError as e:  # a dead or hung supervisor (or template): replace it, retry once
                supervisor.kill() if isinstance(e, _framing.TimedOut) else supervisor.close()
                supervisor = None
                if request_timeout_s is not None and isinstance(e, _framing.TimedOut):
                    raise Overdue(f"the sandbox did not answer within {request_timeout_s:g} s") from None
                supervisor = _Supervisor(self.without)
                try:
                    reply = _answered(supervisor, message, timeout_s)
                except _framing.ChannelError as e:  # twice on one program: the program's doing, it scores 0
                    supervisor.close()
                    supervisor = None
                    logger.warning("sandbox supervisor lost twice on one program: %s", e)
                    return {"reports": [], "lost": f"the sandbox process was lost twice running it ({e})"}
            if supervisor is not None and any("retire" in r or "error" in r for r in reply.get("reports", [])):
                for r in reply["reports"]:
                    if "retire" in r:
                        logger.info("sandbox supervisor replaced: %s", r["retire"])
                supervisor.close()  # never reused: its next program would not start clean (it exits anyway)
                supervisor = None
        finally:
            self._checkin(supervisor)
        errors = [r["error"] for r in reply.get("reports", []) if "error" in r]
        if errors or not reply.get("reports"):
            raise SandboxError(f"the sandbox is broken: {errors[0] if errors else 'empty reply'}{_FIX}")
        return reply

    def close(self) -> None:
        with self._cond:
            idle, self._idle = self._idle, []
            self._started -= len(idle)
        for supervisor in idle:
            supervisor.close()

    def _checkout(self) -> _Supervisor:
        with self._cond:
            while not self._idle and self._started >= self.size:
                self._cond.wait()
            if self._idle:
                return self._idle.pop()
            self._started += 1
        try:
            return _Supervisor(self.without)
        except BaseException:
            with self._cond:
                self._started -= 1
                self._cond.notify()
            raise

    def _checkin(self, supervisor: _Supervisor | None) -> None:
        """Return a supervisor to the pool; None gives its slot back (it died and could not be replaced)."""
        with self._cond:
            if supervisor is None:
                self._started -= 1
            else:
                self._idle.append(supervisor)
            self._cond.notify()


_shared: Pool | None = None
_shared_lock = threading.Lock()


def shared_pool(workers: int) -> Pool:
    """The process-wide pool, grown to ``workers`` supervisors (rebuilt after a ``fork()``)."""
    global _shared
    with _shared_lock:
        if _shared is None or _shared.owner_pid != os.getpid():
            _shared = Pool(workers)
            atexit.register(_shared.close)
        _shared.grow(workers)
        return _shared
