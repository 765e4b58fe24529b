"""Thin ctypes wrappers for the Linux calls the standard library lacks on Python 3.10/3.11.

Covered: ``unshare``, ``setns``, ``mount``, ``prctl`` and the flag values used here. Each raises ``OSError`` on failure.
Not covered: other operating systems (``available()`` is False there and the sandbox keeps only the layers
that need no namespaces).
"""

from __future__ import annotations

import ctypes
import os
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18

PR_SET_NO_NEW_PRIVS = 38
PR_SET_CHILD_SUBREAPER = 36

_libc = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


def available() -> bool:
    """True on Linux, where the namespace calls exist."""
    return _libc is not None


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def unshare(flags: int) -> None:
    """Move the calling process into new namespaces (``CLONE_NEW*`` flags)."""
    if _libc is None:
        raise OSError(0, "unshare: not Linux")
    _check(_libc.unshare(ctypes.c_int(flags)), "unshare")


def setns(fd: int, nstype: int) -> None:
    """Join the namespace ``fd`` refers to (for ``CLONE_NEWPID``: the one our next children are born in)."""
    if _libc is None:
        raise OSError(0, "setns: not Linux")
    _check(_libc.setns(ctypes.c_int(fd), ctypes.c_int(nstype)), "setns")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    """``mount(2)``."""
    if _libc is None:
        raise OSError(0, "mount: not Linux")

    def arg(s):
        return None if s is None else os.fsencode(s)

    result = _libc.mount(arg(source), arg(target), arg(fstype), ctypes.c_ulong(flags), arg(data))
    _check(result, f"mount {target}")


def prctl(option: int, value: int) -> None:
    """``prctl(option, value, 0, 0, 0)``."""
    if _libc is None:
        raise OSError(0, "prctl: not Linux")
    zero = ctypes.c_ulong(0)
    _check(_libc.prctl(ctypes.c_int(option), ctypes.c_ulong(value), zero, zero, zero), f"prctl {option}")
