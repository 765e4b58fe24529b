"""Finding a test's own processes from outside: a program names a process it starts (``prctl(PR_SET_NAME)``)
with a token of the test's, and the test waits, with a bound, until no process of that name is left. Other
sandboxes on a shared machine (another test run's) are not counted."""

from __future__ import annotations

import os
import time
import uuid


def token() -> str:
    """A process name of this test's own (``comm`` keeps 15 bytes)."""
    return "gd" + uuid.uuid4().hex[:12]


def name_self(name: str) -> str:
    """Program text that names the running process ``name``."""
    return f"__import__('ctypes').CDLL(None).prctl(15, {name.encode()!r}, 0, 0, 0)"


def processes_named(name: str) -> list[int]:
    """Processes on this machine whose name (``comm``) is ``name``."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() == name:
                    found.append(int(pid))
        except OSError:
            continue
    return found


def wait_until_gone(name: str, bound_s: float = 10.0) -> list[int]:
    """Poll for processes named ``name`` until none is left or ``bound_s`` passes; what is left."""
    deadline = time.monotonic() + bound_s
    while (left := processes_named(name)) and time.monotonic() < deadline:
        time.sleep(0.01)
    return left
