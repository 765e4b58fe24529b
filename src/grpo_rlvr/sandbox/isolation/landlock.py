"""Landlock (Linux >= 5.13): an unprivileged file-system, TCP and scope allow-list, for machines without namespaces.

A default container (Docker's or Kubernetes' seccomp profile) refuses user namespaces and mounts, so the jail
of ``isolation.jail`` cannot be built there. Landlock needs no privilege: the supervisor builds one ruleset before it
forks the template, and each execution applies it to itself (``restrict_self``, ~20 µs) after no-new-privs.
What the ruleset allows, and nothing else: reading and executing the system directories and the Python paths
(never this project's own source), reading and writing five ``/dev`` files, and everything inside the
supervisor's private working directory. Everything else is denied: ``/proc`` (so no other process's memory
or environment), ``/tmp``, ``/dev/shm``, home directories, datasets. With ABI 4 (Linux 6.7) every TCP bind and
connect is denied too; with ABI 6 (Linux 6.12) signals and abstract UNIX sockets cannot reach a process
outside the execution's own domain (the trainer, the supervisor, another execution).
Not covered: kernels without Landlock or with it disabled at boot (``layers()`` is then empty and the reason
is reported), the path of a UNIX socket (Landlock does not guard it; the seccomp filter denies reaching any
socket by address), disk use inside the working directory (bounded per file by ``RLIMIT_FSIZE`` only).
"""

from __future__ import annotations

import ctypes
import os
import sys

_SYS_CREATE, _SYS_ADD_RULE, _SYS_RESTRICT = 444, 445, 446  # the same numbers on every architecture
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

# Access rights, by the ABI that introduced them.
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_FS_ABI1 = (1 << 13) - 1  # EXECUTE .. MAKE_SYM
_REFER, _TRUNCATE, _IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15  # ABI 2, 3, 5
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6
_FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | _TRUNCATE | _IOCTL_DEV  # the only rights a rule on a file may hold
READ_ONLY = EXECUTE | READ_FILE | READ_DIR

_libc = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def abi_version() -> tuple[int, str]:
    """(the kernel's Landlock ABI version, why 0 when there is none)."""
    if _libc is None:
        return 0, "Landlock: not Linux"
    version = _libc.syscall(_SYS_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    if version < 0:
        err = ctypes.get_errno()
        return 0, f"no Landlock on this kernel ({os.strerror(err)}; it needs Linux >= 5.13 with lsm=landlock)"
    return int(version), ""


def _fs_rights(abi: int) -> int:
    rights = _FS_ABI1
    if abi >= 2:
        rights |= _REFER
    if abi >= 3:
        rights |= _TRUNCATE
    if abi >= 5:
        rights |= _IOCTL_DEV
    return rights


class Ruleset:
    """A built Landlock ruleset: its file descriptor (inherited by each execution) and the layers it gives."""

    def __init__(self, fd: int, layers: tuple[str, ...]):
        self.fd = fd
        self.layers = layers


def build(read_only: list[str], devices: list[str], writable: str) -> tuple[Ruleset | None, str]:
    """A ruleset allowing ``read_only`` paths (read, list, execute), ``devices`` (read, write) and everything
    beneath ``writable``; (None, why) when Landlock is unavailable or a rule cannot be added."""
    abi, why = abi_version()
    if not abi:
        return None, why
    fs = _fs_rights(abi)
    net = _NET_BIND_TCP | _NET_CONNECT_TCP if abi >= 4 else 0
    scoped = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL if abi >= 6 else 0
    attr = _RulesetAttr(fs, net, scoped)
    # The whole struct even on older kernels: they accept a longer one whose unknown fields are zero.
    fd = _libc.syscall(_SYS_CREATE, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint32(0))
    if fd < 0:
        return None, f"Landlock ruleset refused: {os.strerror(ctypes.get_errno())}"
    try:
        for path in read_only:
            _add(fd, path, READ_ONLY & fs)
        for path in devices:
            _add(fd, path, (READ_FILE | WRITE_FILE) & fs)
        _add(fd, writable, fs)
    except OSError as e:
        os.close(fd)
        return None, f"Landlock rule refused: {e}"
    layers = ["landlock_fs"] + (["landlock_net"] if net else []) + (["landlock_scope"] if scoped else [])
    return Ruleset(fd, tuple(layers)), ""


def _add(ruleset_fd: int, path: str, rights: int) -> None:
    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        if not os.path.isdir(path):
            rights &= _FILE_RIGHTS
        attr = _PathBeneathAttr(rights, fd)
        if _libc.syscall(_SYS_ADD_RULE, ctypes.c_int(ruleset_fd), ctypes.c_int(_RULE_PATH_BENEATH),
                         ctypes.byref(attr), ctypes.c_uint32(0)) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"{path}: {os.strerror(err)}")
    finally:
        os.close(fd)


def restrict_self(ruleset_fd: int) -> None:
    """Apply the ruleset to this process and everything it starts (needs no-new-privs first)."""
    if _libc.syscall(_SYS_RESTRICT, ctypes.c_int(ruleset_fd), ctypes.c_uint32(0)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"landlock_restrict_self: {os.strerror(err)}")
