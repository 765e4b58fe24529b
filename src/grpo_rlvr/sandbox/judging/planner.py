"""Plans made in a process of their own, so the trainer never runs the test's own computations.

Making a plan runs the test's own Python (``judging.expected_values``: its expected values, the statements that build or
mutate them). That code is trusted data, but it may be costly: ``math.lcm(*range(1, 200000))`` or a power with a
million digits holds a CPU for seconds, and in the trainer it would hold the GIL, stalling every other thread of
the training step. So a planner process, one per trainer process, started on first use as a fresh interpreter
(``-I``: no site, no user path; only the sandbox modules are loaded, never ``grpo_rlvr/__init__.py``), makes
each plan, under an address-space limit, and sends it back pickled; the parent waits at most
``PLAN_TIMEOUT_S`` and otherwise kills it (the next plan starts a new one). A plan that cannot be made in time
is a ``ValueError`` that names the bound: the dataset's tests are bad input, never a score. Plans are cached by
the caller (``_run``): a GRPO group repeats one row's tests for every completion.
Covered: slow or memory-hungry test values (killed at the bound), a planner that dies (restarted), a process
that forked after starting one (it starts its own). Not covered: stdin/stdout cases (no test code runs to plan
them: they are planned in this process).
"""

from __future__ import annotations

import atexit
import io
import math
import os
import pickle
import subprocess
import sys
import threading
import time
from pathlib import Path

from ..isolation import framing as _framing

PLAN_TIMEOUT_S = 20.0  # wall clock for one plan, its test's own values included
PLANNER_MEMORY_MB = 2048  # the planner's address space
_STARTUP_TIMEOUT_S = 60.0
_MAX_PLAN_BYTES = 256 * 1024 * 1024
_BOOT = """import resource, sys, types
resource.setrlimit(resource.RLIMIT_AS, ({memory}, {memory}))
for name, path in (("grpo_rlvr", {pkg!r}), ("grpo_rlvr.sandbox", {sandbox!r})):
    module = types.ModuleType(name)
    module.__path__ = [path]
    sys.modules[name] = module
from grpo_rlvr.sandbox.judging.planner import serve
serve()
"""


def serve() -> None:
    """The planner's loop: a pickled ``(tests, entry_point)`` in, a pickled ``("plan", Plan)`` or ``("error",
    message)`` out, until stdin closes."""
    from .make_plan import make_plan

    _framing.send_bytes(1, pickle.dumps(("ready", os.getpid())))
    while True:
        body = _framing.recv_bytes(0)
        if body is None:
            return
        tests, entry_point = pickle.loads(body)  # noqa: S301 - from our own parent
        try:
            reply = ("plan", make_plan(tests, entry_point))
        except ValueError as e:
            reply = ("error", str(e))
        except (MemoryError, RecursionError) as e:
            reply = ("error", f"the test's own values could not be computed: {type(e).__name__}")
        _framing.send_bytes(1, _dumps(reply))


class _Pickler(pickle.Pickler):
    """Keeps the ``math.nan`` object itself across: Python compares a container holding it by identity first
    (``[math.nan] == [math.nan]``), so the parent's own ``math.nan`` stands in for it (``_Unpickler``)."""

    def persistent_id(self, obj):
        return "math.nan" if obj is math.nan else None


class _Unpickler(pickle.Unpickler):
    def persistent_load(self, pid):
        if pid != "math.nan":
            raise pickle.UnpicklingError(f"unknown persistent id {pid!r}")
        return math.nan


def _dumps(obj) -> bytes:
    out = io.BytesIO()
    _Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return out.getvalue()


class _Planner:
    def __init__(self) -> None:
        here = Path(__file__).resolve().parent.parent  # the sandbox package
        boot = _BOOT.format(memory=PLANNER_MEMORY_MB * 1024 * 1024, pkg=str(here.parent), sandbox=str(here))
        self.owner = os.getpid()
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-B", "-c", boot], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}, cwd="/", close_fds=True, start_new_session=True,
            bufsize=0,
        )  # fmt: skip
        try:
            ready = self._receive(time.monotonic() + _STARTUP_TIMEOUT_S)
        except _framing.ChannelError:
            self.close()
            raise
        if not (isinstance(ready, tuple) and ready[0] == "ready"):
            self.close()
            raise _framing.ChannelError("the planner did not start")

    def _receive(self, deadline: float):
        body = _framing.recv_bytes(self.proc.stdout.fileno(), deadline, _MAX_PLAN_BYTES)
        if body is None:
            raise _framing.ChannelError("the planner exited")
        return _Unpickler(io.BytesIO(body)).load()  # noqa: S301 - our own planner, running only the test's code

    def plan(self, tests, entry_point):
        _framing.send_bytes(self.proc.stdin.fileno(), pickle.dumps((tests, entry_point)))
        return self._receive(time.monotonic() + PLAN_TIMEOUT_S)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            stream.close()


_lock = threading.Lock()
_planner: _Planner | None = None


def plan_elsewhere(tests, entry_point: str | None):
    """``make_plan(tests, entry_point)``, made in the planner process.

    Raises:
        ValueError: as ``make_plan``; or the plan took longer than ``PLAN_TIMEOUT_S`` or more memory than
            ``PLANNER_MEMORY_MB`` (the test's own values are too costly to compute).
        SandboxError: the planner cannot be started.
    """
    global _planner
    from ...errors import SandboxError

    with _lock:
        if _planner is not None and (_planner.owner != os.getpid() or _planner.proc.poll() is not None):
            _planner = None  # forked since, or dead: a new one (the old one is its owner's to close)
        if _planner is None:
            try:
                _planner = _Planner()
            except (OSError, _framing.ChannelError) as e:
                raise SandboxError(f"cannot start the sandbox's planner ({sys.executable}): {e}") from e
        try:
            kind, value = _planner.plan(tests, entry_point)
        except _framing.ChannelError as e:
            _planner.close()
            _planner = None
            raise ValueError(
                f"the test's own values could not be computed within {PLAN_TIMEOUT_S:g} s and "
                f"{PLANNER_MEMORY_MB} MiB ({e}); make the test's expected values cheaper (write them as literals)"
            ) from None
    if kind == "error":
        raise ValueError(value)
    return value


@atexit.register
def _close() -> None:
    if _planner is not None and _planner.owner == os.getpid():
        _planner.close()
