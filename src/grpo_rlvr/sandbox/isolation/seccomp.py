"""The child's seccomp filter: system calls that tests never need fail with EPERM (namespace ones: EPERM too).

Built once per trainer process (by ``isolation.pool``, not in the template, whose size every fork pays for) with ``pyseccomp`` (ctypes bindings of the maintained C library libseccomp, which
resolves names per architecture and writes the architecture checks), exported as a raw BPF program, and
loaded in each child with one ``prctl`` (~20 µs; ``SyscallFilter.load()`` per child regenerates the program,
~0.7 ms). Denied: debugging other processes (ptrace, process_vm_*), the kernel keyring (keyctl, add_key,
request_key: it outlives a process and would let one completion leave data for the next), every mount
call and chroot, namespace creation and joining (unshare, setns, clone with a CLONE_NEW* flag; clone3 gets
ENOSYS so libc falls back to clone, whose flags the filter can read), bpf, perf_event_open, userfaultfd,
io_uring_*, kexec_*, module loading, personality, and a few others of the same kind (listed below); memory
that no process's RSS shows and that outlives an execution or crosses to the next one (memfd_create, System V
shared memory, semaphores and message queues, POSIX message queues); every socket family but AF_UNIX
(``socket``/``socketpair`` with another domain: AF_INET/AF_INET6, AF_VSOCK, which crosses network namespaces to
the host of a VM, AF_NETLINK, AF_PACKET, ...); and reaching any socket by address (``connect``, ``sendto`` with
an address, ``sendmsg``/``sendmmsg``, which may carry one): Landlock does not guard the path of a UNIX
socket, so without a jail a program could otherwise talk to the trainer's own (a logger's, an inference
server's). ``bind`` fails too: Landlock scopes abstract sockets for connect and send but not for bind, so two
programs running at once could pass bits by holding names. Those four are allowed in the file-system jail with
a network namespace of the supervisor's (``BY_ADDRESS``), where no socket but the execution's own is in reach. A ``socketpair`` (asyncio, multiprocessing's pipes)
still works. Acting on another process by pid fails (``OWN_PROCESS_ONLY``, ``setpriority``, ``ioprio_set``):
its limits, priority, affinity, scheduler, I/O priority and memory placement; the program's own (pid 0) stay
its to change. In every mode, namespaces or not.
No channel between programs that run at once (layer ``no_file_locks``): ``flock`` and the ``fcntl`` commands
that set a record lock (classic and open-file-description) do nothing and return success, as locks are only
ever seen by another process (an execution is alone with its files: a program keeps working as it would alone,
``sqlite3`` included), and asking for another process's lock (``F_GETLK``), leases, directory notification and
inotify fail with EPERM: on the read-only files and ``/dev`` nodes every execution can open, each carried bits
from one program to a sibling.
Without the file-system jail (``build(outside_jail=True)``; layer ``metadata_frozen`` there, which the jail's
read-only mounts give otherwise): changing a file's mode, owner, times or extended attributes does nothing and
returns success. Landlock does not govern those calls, and a program keeping the trainer's uid (or root's, without
capabilities) owns the checkpoints, the interpreter and site-packages; nothing a test checks needs them (a copy
that keeps the mode, ``shutil.copy``, still works, keeping none).
Not covered: machines without libseccomp or pyseccomp (the layer is then reported missing, with the fix).
"""

from __future__ import annotations

import errno
import os

DENIED = (
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    "keyctl", "add_key", "request_key",
    "mount", "umount2", "pivot_root", "chroot", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount",
    "fspick", "mount_setattr",
    "unshare", "setns",
    "bpf", "perf_event_open", "userfaultfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "personality", "acct", "swapon", "swapoff", "reboot", "syslog", "quotactl", "lookup_dcookie",
    "name_to_handle_at", "open_by_handle_at", "iopl", "ioperm", "settimeofday", "clock_settime", "adjtimex",
    "sethostname", "setdomainname", "vhangup", "fanotify_init",
    "memfd_create", "memfd_secret", "shmget", "shmat", "shmctl", "shmdt", "semget", "semop", "semctl",
    "semtimedop", "msgget", "msgsnd", "msgrcv", "msgctl", "mq_open", "mq_unlink", "mq_timedsend",
    "mq_timedreceive", "mq_notify", "mq_getsetattr",
    "process_madvise", "process_mrelease",
)  # fmt: skip
# Reaching a socket by address, and holding one: denied without the jail (module docstring). In the jail the only
# paths are the jail's (its own working directory the only writable one) and abstract names are the supervisor's
# network namespace's, which no execution shares with one running at once: multiprocessing's Manager and
# Listener/Client work there.
BY_ADDRESS = ("connect", "sendmsg", "sendmmsg", "bind")
# Calls that act on another process by pid without a signal or /proc: allowed on the caller only (pid 0). Where an
# execution keeps the trainer's uid (no user namespace, not root), the kernel lets it change the trainer's limits
# (RLIMIT_CPU: killed; RLIMIT_FSIZE: its next write fails), priority, CPU affinity and scheduler, I/O priority and
# the placement of its memory, and neither Landlock nor a jail stands in the way. Argument index of the pid.
OWN_PROCESS_ONLY = (("prlimit64", 0), ("sched_setaffinity", 0), ("sched_setscheduler", 0), ("sched_setparam", 0),
                    ("sched_setattr", 0), ("migrate_pages", 0), ("move_pages", 0))
PRIO_PROCESS = 0  # setpriority(which, who, ...): PRIO_PGRP and PRIO_USER reach other processes even with who 0
IOPRIO_WHO_PROCESS = 1
AF_UNIX = 1  # the one socket family a test program may open (socketpair, asyncio's self-pipe)
_CLONE_NEW = 0x7E020000  # CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET


# fcntl commands (the same numbers on every Linux architecture; 12-14 are F_*LK64 where they differ).
F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW = 5, 6, 7, 36, 37, 38
F_SETLEASE, F_GETLEASE, F_NOTIFY = 1024, 1025, 1026
LOCKS_DONE_NOTHING = (F_SETLK, F_SETLKW, F_OFD_SETLK, F_OFD_SETLKW, 13, 14)
LOCKS_REFUSED = (F_GETLK, F_OFD_GETLK, 12, F_SETLEASE, F_GETLEASE, F_NOTIFY)
NO_SIBLING_CHANNEL = ("inotify_init", "inotify_init1", "inotify_add_watch")
METADATA = ("chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat", "utime", "utimes",
            "utimensat", "futimesat", "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr",
            "fremovexattr", "setxattrat", "removexattrat")


def build(outside_jail: bool = False) -> tuple[bytes | None, str | None]:
    """(raw BPF program, None), or (None, why the filter is unavailable and how to get it). ``outside_jail``: the
    filter for executions without the file-system jail (module docstring)."""
    try:
        import pyseccomp as seccomp
    except ImportError as e:
        return None, f"no seccomp filter: pyseccomp is not importable ({e}); pip install pyseccomp"
    except OSError as e:  # pyseccomp loads libseccomp at import
        return None, f"no seccomp filter: libseccomp is missing ({e}); apt-get install libseccomp2"
    try:
        f = seccomp.SyscallFilter(seccomp.ALLOW)
        deny = seccomp.ERRNO(errno.EPERM)
        for name in DENIED + (BY_ADDRESS if outside_jail else ()):
            try:
                f.add_rule(deny, name)
            except (RuntimeError, ValueError, OSError):  # not a call on this architecture
                continue
        for bit in range(32):
            if _CLONE_NEW & (1 << bit):
                f.add_rule(deny, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, 1 << bit, 1 << bit))
        f.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
        for call in ("socket", "socketpair"):
            f.add_rule(deny, call, seccomp.Arg(0, seccomp.NE, AF_UNIX))
        if outside_jail:
            f.add_rule(deny, "sendto", seccomp.Arg(4, seccomp.NE, 0))  # with an address: an unconnected send
        for call, pid_arg in OWN_PROCESS_ONLY:
            _add_optional(f, deny, call, seccomp.Arg(pid_arg, seccomp.NE, 0))
        for call, own in (("setpriority", PRIO_PROCESS), ("ioprio_set", IOPRIO_WHO_PROCESS)):
            _add_optional(f, deny, call, seccomp.Arg(0, seccomp.NE, own))
            _add_optional(f, deny, call, seccomp.Arg(1, seccomp.NE, 0))
        nothing = seccomp.ERRNO(0)  # the call returns success and does nothing
        _add_optional(f, nothing, "flock")
        for call in ("fcntl", "fcntl64"):
            for cmd in LOCKS_DONE_NOTHING:
                _add_optional(f, nothing, call, seccomp.Arg(1, seccomp.EQ, cmd))
            for cmd in LOCKS_REFUSED:
                _add_optional(f, deny, call, seccomp.Arg(1, seccomp.EQ, cmd))
        for call in NO_SIBLING_CHANNEL:
            _add_optional(f, deny, call)
        for call in METADATA if outside_jail else ():
            _add_optional(f, nothing, call)
        r, w = os.pipe()
        try:
            with open(w, "wb", closefd=False) as sink:
                f.export_bpf(sink)
            os.close(w)
            w = -1
            chunks = []
            while chunk := os.read(r, 65536):
                chunks.append(chunk)
        finally:
            os.close(r)
            if w >= 0:
                os.close(w)
    except (RuntimeError, ValueError, OSError) as e:
        return None, f"no seccomp filter: libseccomp failed ({type(e).__name__}: {e})"
    program = b"".join(chunks)
    if not program or len(program) % 8:
        return None, f"no seccomp filter: libseccomp exported a malformed program ({len(program)} bytes)"
    return program, None


def _add_optional(f, action, call: str, *args) -> None:
    """A rule for ``call``, skipped where the architecture has no such call."""
    try:
        f.add_rule(action, call, *args)
    except (RuntimeError, ValueError, OSError):
        pass
