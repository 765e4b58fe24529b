"""Thin ctypes wrappers for the Linux calls the standard library lacks on Python 3.11.

Covered: ``unshare``, ``setns``, ``mount``, ``prctl``, dropping every capability (``drop_capabilities``),
loading a raw seccomp program (``load_seccomp``) and the flag values used here. Each raises ``OSError`` on failure.
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
MNT_DETACH = 2

PR_SET_NO_NEW_PRIVS = 38
PR_SET_CHILD_SUBREAPER = 36
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_SET_SECUREBITS = 28
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
# SECBIT_NOROOT(+LOCKED): uid 0 gets no capabilities from execve; KEEP_CAPS off and locked; no ambient raise.
SECUREBITS_LOCKED_DOWN = 0x01 | 0x02 | 0x20 | 0x40 | 0x80
_CAP_VERSION_3 = 0x20080522

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


def umount2(target: str, flags: int) -> None:
    """``umount2(2)``."""
    if _libc is None:
        raise OSError(0, "umount2: not Linux")
    _check(_libc.umount2(os.fsencode(target), ctypes.c_int(flags)), f"umount {target}")


def prctl(option: int, value: int) -> None:
    """``prctl(option, value, 0, 0, 0)``."""
    if _libc is None:
        raise OSError(0, "prctl: not Linux")
    zero = ctypes.c_ulong(0)
    _check(_libc.prctl(ctypes.c_int(option), ctypes.c_ulong(value), zero, zero, zero), f"prctl {option}")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


# Built once, in the template: creating ctypes objects in each forked child costs ~0.3 ms of copy-on-write.
_CAP_HEADER = _CapHeader(_CAP_VERSION_3, 0)
_CAP_NONE = (_CapData * 2)()
_ZERO = ctypes.c_ulong(0)


def last_capability() -> int:
    """The highest capability number this kernel knows (read before the jail hides ``/proc``)."""
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            return int(f.read())
    except (OSError, ValueError):
        return 63


def _prctl(option: int, value: int, what: str) -> None:
    _check(_libc.prctl(ctypes.c_int(option), ctypes.c_ulong(value), _ZERO, _ZERO, _ZERO), what)


def lock_capabilities(last_cap: int) -> None:
    """Lock the securebits and empty the bounding and ambient sets (needs CAP_SETPCAP).

    Done once in the supervisor: these only govern what an ``execve`` may grant, and it never execs; the
    capabilities it holds stay. With ``clear_capabilities`` in the child (and no-new-privs) nothing the
    child or its descendants run can regain a capability, in any user namespace.
    """
    if _libc is None:
        raise OSError(0, "capabilities: not Linux")
    _prctl(PR_SET_SECUREBITS, SECUREBITS_LOCKED_DOWN, "prctl PR_SET_SECUREBITS")
    for cap in range(last_cap + 1):
        _prctl(PR_CAPBSET_DROP, cap, f"prctl PR_CAPBSET_DROP {cap}")
    _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, "prctl PR_CAP_AMBIENT_CLEAR_ALL")


def clear_capabilities() -> None:
    """Empty the effective, permitted and inheritable sets of this process."""
    if _libc is None:
        raise OSError(0, "capabilities: not Linux")
    _check(_libc.capset(ctypes.byref(_CAP_HEADER), _CAP_NONE), "capset")


class SeccompProgram:
    """A raw BPF seccomp program (8-byte ``sock_filter`` entries), laid out in memory once, in the supervisor."""

    def __init__(self, program: bytes):
        self._buf = ctypes.create_string_buffer(program, len(program))
        self._prog = _SockFprog(len(program) // 8, ctypes.cast(self._buf, ctypes.c_void_p))
        self.address = ctypes.addressof(self._prog)


def load_seccomp(program: SeccompProgram) -> None:
    """Install ``program`` on this process; needs no-new-privs first."""
    if _libc is None:
        raise OSError(0, "seccomp: not Linux")
    args = (ctypes.c_ulong(SECCOMP_MODE_FILTER), ctypes.c_ulong(program.address), _ZERO, _ZERO)
    _check(_libc.prctl(ctypes.c_int(PR_SET_SECCOMP), *args), "prctl PR_SET_SECCOMP")
