"""Run a command as if inside a default Docker container: namespaces and mounts refused, Docker's capabilities.

Docker's (and Kubernetes' RuntimeDefault) seccomp profile refuses, to a process without CAP_SYS_ADMIN,
``unshare``, ``setns``, every mount call, ``clone`` with a namespace flag (EPERM), and ``clone3`` (ENOSYS, so
that libc falls back to ``clone``, whose flags a filter can read); and the container keeps only Docker's
default capabilities. This wrapper loads such a filter (with ``pyseccomp``), drops every capability outside
Docker's default set from the bounding set, then execs the command, which inherits both.

Usage: ``python scripts/simulate-container.py COMMAND [ARG...]`` (``scripts/test-container.sh`` runs the
sandbox tests this way). Linux only; needs libseccomp2 and pyseccomp.
"""

from __future__ import annotations

import ctypes
import errno
import os
import sys

import pyseccomp as seccomp

# CAP_CHOWN, DAC_OVERRIDE, FOWNER, FSETID, KILL, SETGID, SETUID, SETPCAP, NET_BIND_SERVICE, NET_RAW, SYS_CHROOT,
# MKNOD, AUDIT_WRITE, SETFCAP: Docker's default set (moby's oci/caps/defaults.go).
DOCKER_CAPS = {0, 1, 3, 4, 5, 6, 7, 8, 10, 13, 18, 27, 29, 31}
CLONE_NEW_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000, 0x00000080)
REFUSED = ("unshare", "setns", "mount", "umount2", "pivot_root", "open_tree", "move_mount", "fsopen", "fsconfig",
           "fsmount", "fspick", "mount_setattr")
PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP = 38, 24


def load_filter() -> None:
    f = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in REFUSED:
        try:
            f.add_rule(seccomp.ERRNO(errno.EPERM), name)
        except (RuntimeError, ValueError, OSError):
            continue  # not a call on this architecture
    for flag in CLONE_NEW_FLAGS:  # CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME
        f.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    f.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    f.load()


def drop_capabilities() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    with open("/proc/sys/kernel/cap_last_cap") as fh:
        last = int(fh.read())
    for cap in range(last + 1):
        if cap not in DOCKER_CAPS and libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), f"cannot drop capability {cap} from the bounding set")


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit("usage: simulate-container.py COMMAND [ARG...]")
    if os.geteuid() != 0:  # a plain user may load a filter only with no-new-privs
        ctypes.CDLL(None).prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    load_filter()
    if os.geteuid() == 0:
        drop_capabilities()  # exec then grants root only what the bounding set still holds
    os.execvp(sys.argv[1], sys.argv[1:])


if __name__ == "__main__":
    main()
