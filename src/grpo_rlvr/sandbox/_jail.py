"""Namespaces and the read-only file-system jail, set up once per zygote and entered by each child.

The zygote (root, or an unprivileged user allowed user namespaces) enters a fresh network namespace (only a
loopback device, left down) and a private mount namespace in which it builds a jail root: a read-only tmpfs
holding read-only, nosuid bind mounts of the system directories and of the Python paths only, plus a
writable, size-capped tmpfs at ``/sandbox``. Before each execution the zygote creates an empty working
directory there, owned by the execution's uid, and deletes it afterwards; the child ``chroot``s into the
jail, so the home directory, datasets, the test files, the rest of ``/tmp`` and ``/proc`` are not visible.
(A mount namespace per execution would cost ~3 ms of wall time each; the jail makes it unnecessary.)
Not covered: the contents of the Python paths and system directories (read-only, but readable), kernel
vulnerabilities.
"""

from __future__ import annotations

import os
import sys

from . import _syscalls as sc

UID_BASE = 1_500_000_000  # + the zygote's pid: the uid of its executions (see execution_uid)
SANDBOX_DIR = "/sandbox"  # inside the jail: a tmpfs holding the working directory of the running execution
WORKDIR = SANDBOX_DIR + "/run"
SANDBOX_TMPFS_MB = 64  # disk for the running execution, in MiB (tmpfs pages count in host RAM)
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_DEVICES = ("null", "zero", "full", "random", "urandom")


class ZygoteState:
    """What the zygote managed to set up; the supervisor and forked children read it.

    A plain class, not a dataclass: importing ``dataclasses`` would pull ``inspect`` and ``ast`` into the
    zygote, whose size every fork pays for.
    """

    def __init__(self) -> None:
        self.privileged = False  # root in the initial user namespace: may give each child its own uid
        self.can_unshare = False  # may create PID/mount/IPC namespaces per execution
        self.own_pidns_fd: int | None = None  # our own PID namespace, to return to after each execution
        self.netns = False
        self.root: str | None = None  # the jail root, when the file-system jail was built
        self.problems: list[str] = []  # why a layer is missing, reported to the parent
        self.tmp_base = os.environ.get("TMPDIR") or "/tmp"  # the host's temp dir (the parent passes it)


def execution_uid() -> int:
    """The uid a child runs as when the zygote is privileged: unique on the host among live zygotes, and a
    zygote runs one execution at a time."""
    return UID_BASE + os.getpid()


def setup_zygote(unprivileged: bool) -> ZygoteState:
    """Enter the zygote-wide namespaces and build the jail. Every step is optional; failures are noted.

    ``unprivileged`` makes a root zygote behave as a plain user without user namespaces (for tests).
    """
    state = ZygoteState()
    if unprivileged or not sc.available():
        state.problems.append("running unprivileged: no namespaces, no uid of its own for each execution")
        return state
    if os.geteuid() == 0:
        state.privileged = _can_switch_uid(state)
    elif not _enter_user_namespace(state):
        return state
    state.can_unshare = True
    try:
        state.own_pidns_fd = os.open("/proc/self/ns/pid", os.O_RDONLY)
    except OSError as e:
        state.problems.append(f"no PID namespaces: {e}")
    try:
        sc.unshare(sc.CLONE_NEWNET)
        state.netns = True
    except OSError as e:
        state.problems.append(f"no network namespace: {e}")
    try:
        sc.unshare(sc.CLONE_NEWNS)
        sc.mount(None, "/", None, sc.MS_REC | sc.MS_PRIVATE)
        state.root = _build_root(state.tmp_base)
    except OSError as e:
        state.problems.append(f"no file-system jail: {e}")
    return state


def _can_switch_uid(state: ZygoteState) -> bool:
    """Root may still lack CAP_SETUID (some containers): try it once in a throwaway child."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setresgid(execution_uid(), execution_uid(), execution_uid())
            os.setresuid(execution_uid(), execution_uid(), execution_uid())
            os._exit(0)
        except BaseException:  # noqa: BLE001
            os._exit(1)
    ok = os.waitpid(pid, 0)[1] == 0
    if not ok:
        state.problems.append("root without CAP_SETUID: programs keep our uid")
    return ok


def _enter_user_namespace(state: ZygoteState) -> bool:
    """Unprivileged: become root of a new user namespace mapped onto our own uid (no uid switching then)."""
    uid, gid = os.geteuid(), os.getegid()
    try:
        sc.unshare(sc.CLONE_NEWUSER)
        for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"), ("gid_map", f"0 {gid} 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    except OSError as e:
        state.problems.append(f"no user namespace: {e}")
        return False
    return True


def _root_mountpoint(base: str) -> str:
    """A directory to mount the jail's tmpfs on (in our private mount namespace only; the host sees it empty).

    One per uid, reused by every zygote (each mounts its own tmpfs over it, privately); not ``tempfile``,
    which would stay imported in the zygote and cache its temp dir in every child.
    """
    path = os.path.join(base, f"grpo-rlvr-sandbox-root-{os.getuid()}")
    try:
        os.mkdir(path, 0o755)
    except FileExistsError:
        pass
    st = os.lstat(path)
    if not os.path.isdir(path) or os.path.islink(path) or st.st_uid != os.getuid():
        path = os.path.join(base, f"grpo-rlvr-sandbox-root-{os.getuid()}-{os.urandom(8).hex()}")
        os.mkdir(path, 0o755)
    return path


def _build_root(tmp_base: str) -> str:
    root = _root_mountpoint(tmp_base)
    sc.mount("tmpfs", root, "tmpfs", sc.MS_NOSUID | sc.MS_NODEV, "size=1m,nr_inodes=4096,mode=755")
    bound: list[str] = []
    for top in _SYSTEM_DIRS:
        if os.path.islink(top):
            os.symlink(os.readlink(top), root + top)
        elif os.path.isdir(top):
            _bind(top, root + top)
            bound.append(top)
    for path in _python_paths():
        if not any(path == b or path.startswith(b.rstrip("/") + "/") for b in bound):
            _bind(path, root + path)
            bound.append(path)
    os.makedirs(root + "/dev", mode=0o755)
    for name in _DEVICES:
        if os.path.exists("/dev/" + name):
            _bind("/dev/" + name, f"{root}/dev/{name}", devices=True)
    os.makedirs(root + SANDBOX_DIR, mode=0o755)
    sc.mount(None, root, None, sc.MS_BIND | sc.MS_REMOUNT | sc.MS_RDONLY | sc.MS_NOSUID | sc.MS_NODEV)
    # Writable, but only through the per-execution directory inside it (0711: no listing, no creating).
    opts = f"size={SANDBOX_TMPFS_MB}m,nr_inodes=8192,mode=711"
    sc.mount("tmpfs", root + SANDBOX_DIR, "tmpfs", sc.MS_NOSUID | sc.MS_NODEV, opts)
    return root


def _python_paths() -> list[str]:
    """Absolute, existing ``sys.path`` entries (the stdlib, site-packages, this package), shortest first."""
    paths = {os.path.realpath(p) for p in sys.path if p and os.path.isabs(p) and os.path.exists(p)}
    return sorted((p for p in paths if p != "/"), key=len)


def _bind(src: str, dst: str, devices: bool = False) -> None:
    """Read-only, nosuid bind of ``src`` at ``dst`` (creating ``dst``); ``devices`` keeps device nodes usable."""
    if os.path.isdir(src):
        os.makedirs(dst, mode=0o755, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(dst), mode=0o755, exist_ok=True)
        open(dst, "a").close()
    sc.mount(src, dst, None, sc.MS_BIND)
    locked = os.statvfs(src).f_flag & (sc.MS_NOSUID | sc.MS_NODEV | sc.MS_NOEXEC)  # same bits as ST_*
    flags = sc.MS_BIND | sc.MS_REMOUNT | sc.MS_RDONLY | sc.MS_NOSUID | locked
    if not devices:
        flags |= sc.MS_NODEV
    sc.mount(None, dst, None, flags)


def make_workdir(state: ZygoteState, uid: int | None) -> str:
    """A fresh, empty working directory for one execution, owned by its uid; returns the host-side path."""
    if state.root is not None:
        path = state.root + WORKDIR
        if os.path.lexists(path):  # left over by an execution whose clean-up failed
            remove_workdir(path)
        os.mkdir(path, 0o700)
    else:
        import tempfile  # only without the jail

        path = tempfile.mkdtemp(prefix="grpo-rlvr-sandbox-", dir=state.tmp_base)
    if uid is not None:
        os.chown(path, uid, uid)
    return path


def remove_workdir(path: str) -> None:
    """Delete the working directory once every process of the execution is dead.

    Not ``shutil.rmtree``: importing shutil would enlarge the zygote. Symlinks are removed, never followed;
    directories the program made unreadable are made readable first (it owned them).
    """
    os.chmod(path, 0o700)
    with os.scandir(path) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                remove_workdir(entry.path)
            else:
                os.unlink(entry.path)
    os.rmdir(path)


def enter_jail(root: str) -> str:
    """In the child, before dropping privileges: ``chroot`` into the jail; returns the working directory."""
    os.chroot(root)
    os.chdir(WORKDIR)
    return WORKDIR
