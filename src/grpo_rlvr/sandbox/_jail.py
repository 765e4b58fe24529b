"""Namespaces and the read-only file-system jail, set up once per zygote and entered by each child.

The zygote (root, or an unprivileged user allowed user namespaces: it then first becomes root of a user
namespace mapped onto its own uid) creates a PID namespace and forks into it, so the zygote proper is PID 1
of a namespace it owns: it can give each execution a nested PID namespace and return to its own afterwards
(``setns`` back into a namespace owned by another user namespace is refused, which is why a plain user
cannot keep the zygote in the host's), and ``kill(-1)`` sweeps every process an execution left. The process
that started it only relays its exit. The zygote then enters a fresh network namespace (only a loopback
device, left down) and a private mount namespace in which it builds a jail root: a read-only tmpfs holding
read-only, nosuid bind mounts of the system directories and of the Python paths only. Before each
execution a fresh size-capped tmpfs is mounted at ``/sandbox`` with an empty working directory owned by the
execution's uid; afterwards it is detached whole, so clean-up takes constant time whatever tree the
program left (deep, unwritable, symlinked, full). The child ``chroot``s into the jail, so the home
directory, datasets, the test files, the rest of ``/tmp`` and ``/proc`` are not visible, then drops every
capability (``_child``). Without a jail, the working directory is a host temp dir removed by
``remove_tree`` (iterative, bounded, never follows a symlink).
Not covered: the contents of the Python paths and system directories (read-only, but readable), kernel
vulnerabilities.
"""

from __future__ import annotations

import errno
import os
import signal
import stat
import sys

from . import _syscalls as sc

UID_BASE = 1_500_000_000  # + the zygote's pid: the uid of its executions (see execution_uid)
SANDBOX_DIR = "/sandbox"  # inside the jail: a tmpfs holding the working directory of the running execution
WORKDIR = SANDBOX_DIR + "/run"
SANDBOX_TMPFS_MB = 64  # disk for the running execution, in MiB (tmpfs pages count in host RAM)
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_DEVICES = ("null", "zero", "full", "random", "urandom")
MAX_TREE_ENTRIES = 1_000_000  # remove_tree gives up past this many entries (the zygote is then replaced)
_NAME_TAKEN = (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR, errno.EISDIR)
_host_pid = os.getpid()  # our pid as the host sees it (after the fork into our own PID namespace, getpid() is 1)


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
        self.pid1 = False  # we are PID 1 of our own PID namespace: kill(-1) reaches exactly our programs
        self.userns = False  # we run in a user namespace of our own (an unprivileged zygote)
        self.last_cap = 63  # the highest capability number, for dropping them all in the child
        self.seccomp: sc.SeccompProgram | None = None  # the child's seccomp filter
        self.caps_locked = False  # bounding and ambient sets emptied, securebits locked (inherited by children)


def execution_uid() -> int:
    """The uid a child runs as when the zygote is privileged: unique on the host among live zygotes, and a
    zygote runs one execution at a time."""
    return UID_BASE + _host_pid


def setup_zygote(unprivileged: bool, seccomp: bytes | None, no_seccomp: str) -> ZygoteState:
    """Enter the zygote-wide namespaces and build the jail. Every step is optional; failures are noted.

    ``unprivileged`` makes a root zygote behave as a plain user without user namespaces (for tests);
    ``seccomp`` is the child's filter (built by the parent), ``no_seccomp`` why there is none.
    """
    state = ZygoteState()
    if sc.available():
        state.last_cap = sc.last_capability()
        if seccomp:
            state.seccomp = sc.SeccompProgram(seccomp)
        else:
            state.problems.append(no_seccomp or "no seccomp filter")
    if unprivileged or not sc.available():
        state.problems.append("running unprivileged: no namespaces, no uid of its own for each execution")
        return state
    if os.geteuid() == 0:
        state.privileged = _can_switch_uid(state)
    elif not _enter_user_namespace(state):
        return state
    else:
        state.userns = True
    state.can_unshare = True
    _become_pid1(state)
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
    try:
        sc.lock_capabilities(state.last_cap)
        state.caps_locked = True
    except OSError as e:
        state.problems.append(f"capabilities not dropped: {e}")
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


def _become_pid1(state: ZygoteState) -> None:
    """Fork into a new PID namespace: the child goes on as the zygote, PID 1 there; this process only waits."""
    global _host_pid
    try:
        sc.unshare(sc.CLONE_NEWPID)
        pid = os.fork()
    except OSError as e:
        state.problems.append(f"no PID namespaces: {e}")
        return
    if pid:
        _relay_exit(pid)
    sc.prctl(sc.PR_SET_PDEATHSIG, signal.SIGKILL)  # the relay killed (the parent gave up on us): die too
    _host_pid = int(os.readlink("/proc/self"))  # /proc is still the host's
    state.pid1 = True
    try:
        state.own_pidns_fd = os.open("/proc/self/ns/pid", os.O_RDONLY)
    except OSError as e:
        state.problems.append(f"no PID namespace per execution: {e}")


def _relay_exit(pid: int) -> None:
    """The zygote's parent-side stub: holds nothing open, exits as the zygote did. Never returns."""
    os.closerange(0, 1 << 16)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            os._exit(70)
    os._exit(min(255, max(0, os.waitstatus_to_exitcode(status))) if not os.WIFSIGNALED(status) else 70)


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
    """A fresh, empty working directory for one execution, owned by its uid; returns the host-side path.

    In the jail: a new tmpfs at ``/sandbox`` (0711: no listing, no creating) holding ``run`` (0700).
    """
    if state.root is not None:
        opts = f"size={SANDBOX_TMPFS_MB}m,nr_inodes=8192,mode=711"
        sc.mount("tmpfs", state.root + SANDBOX_DIR, "tmpfs", sc.MS_NOSUID | sc.MS_NODEV, opts)
        path = state.root + WORKDIR
        os.mkdir(path, 0o700)
    else:
        import tempfile  # only without the jail

        path = tempfile.mkdtemp(prefix="grpo-rlvr-sandbox-", dir=state.tmp_base)
    if uid is not None:
        os.chown(path, uid, uid)
    return path


def remove_workdir(state: ZygoteState, path: str) -> None:
    """Delete the working directory once every process of the execution is dead (OSError if it cannot)."""
    if state.root is not None:
        sc.umount2(state.root + SANDBOX_DIR, sc.MNT_DETACH)  # the whole tmpfs, whatever it holds
    else:
        remove_tree(path)


def remove_tree(path: str, max_entries: int = MAX_TREE_ENTRIES) -> None:
    """Delete ``path`` and everything in it, iteratively, without following symlinks.

    Every directory met is first moved up into ``path`` itself, so no path grows longer than two names and
    no recursion or open-descriptor chain grows with depth; directories the program made unreadable are
    made readable first (it ran as our uid, or we are root). Not ``shutil.rmtree``: importing shutil would
    enlarge the zygote, and it recurses. Raises OSError when the tree cannot be removed or holds more than
    ``max_entries`` entries.
    """
    os.chmod(path, 0o700)
    top = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        pending: list[str | None] = [None]  # directories in ``top`` still to empty (None: top itself)
        seen = spare = 0
        while pending:
            name = pending.pop()
            if name is not None:
                if not stat.S_ISDIR(os.stat(name, dir_fd=top, follow_symlinks=False).st_mode):
                    os.unlink(name, dir_fd=top)
                    continue
                os.chmod(name, 0o700, dir_fd=top)
            fd = os.open("." if name is None else name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=top)
            try:
                with os.scandir(fd) as entries:
                    names = [(e.name, e.is_dir(follow_symlinks=False)) for e in entries]
                for entry, is_dir in names:
                    seen += 1
                    if seen > max_entries:
                        raise OSError(f"{path}: more than {max_entries} entries left by the program")
                    if not is_dir:
                        os.unlink(entry, dir_fd=fd)
                    elif name is None:
                        pending.append(entry)
                    else:
                        os.chmod(entry, 0o700, dir_fd=fd)  # moving a directory rewrites its "..": needs write
                        while True:  # move it up next to the others, under a name not taken there
                            spare += 1
                            try:
                                os.rename(entry, f".rm{spare}", src_dir_fd=fd, dst_dir_fd=top)
                                break
                            except OSError as e:
                                if e.errno not in _NAME_TAKEN or spare > max_entries:
                                    raise OSError(f"{path}: cannot move {entry!r} up: {e}") from e
                        pending.append(f".rm{spare}")
            finally:
                os.close(fd)
            if name is not None:
                os.rmdir(name, dir_fd=top)
    finally:
        os.close(top)
    os.rmdir(path)


def enter_jail(root: str) -> str:
    """In the child, before dropping privileges: ``chroot`` into the jail; returns the working directory."""
    os.chroot(root)
    os.chdir(WORKDIR)
    return WORKDIR
