"""Namespaces, the read-only file-system jail, and the private working directory, set up once per supervisor.

The supervisor (root, or an unprivileged user allowed user namespaces: it then first becomes root of a user
namespace mapped onto its own uid) creates a PID namespace and forks into it, so it is PID 1 of a namespace it
owns: each execution then gets a nested PID namespace of its own (``isolation.template``), and when the execution's
first process dies the kernel kills every process in it before that death can be reaped, so nothing an
execution starts outlives it. The process that started the supervisor only relays its exit. The supervisor
then enters a fresh network namespace (only a loopback device, left down) and a private mount namespace in
which it builds a jail root on a tmpfs mounted over the temp directory (in that namespace only: the host sees
nothing): read-only, nosuid bind mounts of the system directories and of the Python paths, never this
project's own source. Before each execution a fresh size-capped tmpfs is mounted at ``/sandbox`` with an empty
working directory owned by the execution's uid, and its own ``/dev/shm`` (a link into that tmpfs: POSIX semaphores
and shared memory, which ``multiprocessing`` needs, private to the execution); afterwards it is detached whole, so clean-up takes constant
time whatever tree the program left (deep, unwritable, symlinked, full). The child ``chroot``s into the jail,
so the home directory, datasets, the test files, the rest of ``/tmp`` and ``/proc`` are not visible, then
drops every capability (``isolation.child``).
Without a jail (no namespaces: a default container), the working directory is ``run`` inside a private
directory of the supervisor's (``workbase``, in the system's shared temp directory, never the trainer's ``TMPDIR``), emptied after each execution by ``remove_tree`` (iterative,
bounded, never follows a symlink) and removed when the supervisor exits (by the pool, when it was killed);
Landlock (``isolation.landlock``) then confines the execution to it and to the read-only system and Python paths.
Not covered: the contents of the Python paths and system directories (read-only, but readable), kernel
vulnerabilities.
"""

from __future__ import annotations

import errno
import os
import signal
import stat
import sys

from . import landlock as _landlock
from . import syscalls as sc

UID_BASE = 1_500_000_000  # + the supervisor's pid: the uid of its executions (see execution_uid)
SANDBOX_DIR = "/sandbox"  # inside the jail: a tmpfs holding the working directory of the running execution
WORKDIR = SANDBOX_DIR + "/run"
SHM_DIR = SANDBOX_DIR + "/shm"  # the jail's /dev/shm: on the execution's own tmpfs, gone with it
SANDBOX_TMPFS_MB = 64  # disk for the running execution, in MiB (tmpfs pages count in host RAM)
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_DEVICES = ("null", "zero", "full", "random", "urandom")
SYSTEM_TMP = ("/tmp", "/var/tmp")  # shared temp directories, where a supervisor without the jail keeps its own
MAX_TREE_ENTRIES = 1_000_000  # remove_tree gives up past this many entries (the supervisor is then replaced)
_NAME_TAKEN = (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR, errno.EISDIR)
_OWN_PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))  # .../grpo_rlvr: kept out of the jail
_host_pid = os.getpid()  # our pid as the host sees it (after the fork into our own PID namespace, getpid() is 1)
# What a test may switch off (``Pool(without=...)``) to act as another machine; "clone": fork executions through a
# launcher, as on an architecture whose raw clone call is not known; "proc": a /proc the supervisor cannot walk
# (no tree caps, and no sweep without a PID namespace).
WITHOUT = ("namespaces", "uid", "landlock", "seccomp", "clone", "proc")


class SandboxState:
    """What the supervisor managed to set up; the template and each execution read it (inherited by fork).

    A plain class, not a dataclass: importing ``dataclasses`` would pull ``inspect`` and ``ast`` into the
    template, whose size every fork pays for.
    """

    def __init__(self) -> None:
        self.privileged = False  # root in the initial user namespace: may give each child its own uid
        self.netns = False
        self.root: str | None = None  # the jail root, when the file-system jail was built
        self.workbase: str | None = None  # without a jail: the private directory holding each working directory
        self.problems: list[str] = []  # why a layer is missing, reported to the parent
        self.tmp_base = os.environ.get("TMPDIR") or "/tmp"  # the host's temp dir (the parent passes it)
        self.pid1 = False  # PID 1 of our own PID namespace: each execution gets a nested one
        self.own_pidns_fd: int | None = None  # that namespace, for the template to return to after each fork
        self.userns = False  # we run in a user namespace of our own (an unprivileged supervisor)
        self.last_cap = 63  # the highest capability number, for dropping them all in the child
        self.seccomp: sc.SeccompProgram | None = None  # the child's seccomp filter
        self.caps_locked = False  # bounding and ambient sets emptied, securebits locked (inherited by children)
        self.landlock: _landlock.Ruleset | None = None  # without a jail: the execution's Landlock ruleset
        self.use_clone = True  # the template forks executions with clone(CLONE_PARENT) where it can


def execution_uid() -> int:
    """The uid a child runs as when the supervisor is privileged: unique on the host among live supervisors,
    and a supervisor runs one execution at a time."""
    return UID_BASE + _host_pid


def host_pid() -> int:
    """This process's pid as ``/proc`` numbers it (differs from ``getpid()`` inside our PID namespace)."""
    return _host_pid


def setup_supervisor(without: set[str], seccomp: tuple[bytes | None, bytes | None], no_seccomp: str) -> SandboxState:
    """Enter the supervisor-wide namespaces and build the jail, or else the private working directory and the
    Landlock ruleset. Every step is optional; failures are noted in ``problems``.

    ``without`` names layers to leave out (tests simulate machines with it, see ``WITHOUT``); ``seccomp`` are the
    child's filters (built by the parent) for an execution in the jail and for one outside it, ``no_seccomp`` why
    there are none.
    """
    state = SandboxState()
    state.use_clone = "clone" not in without
    filters = None
    if sc.available():
        state.last_cap = sc.last_capability()
        if all(seccomp) and "seccomp" not in without:
            filters = seccomp
        else:
            state.problems.append(no_seccomp or "no seccomp filter (switched off)")
    if os.geteuid() == 0 and "uid" not in without and sc.available():
        state.privileged = _can_switch_uid(state)
    if "namespaces" in without or not sc.available():
        state.problems.append("no namespaces (switched off)" if sc.available() else "not Linux: no namespaces")
    else:
        _enter_namespaces(state)
    if filters:  # outside the jail, files beyond the working directory are writable by their owner: see seccomp
        state.seccomp = sc.SeccompProgram(filters[0] if state.root is not None and state.netns else filters[1])
    if state.root is None:
        _make_workbase(state, without)
        hidden = _unreadable_by_others(_python_paths())
        if state.privileged and hidden:
            state.privileged = False
            state.problems.append(f"programs keep our uid: without a jail a uid of their own cannot read the Python "
                                  f"path {hidden} (a parent directory lacks o+x)")
    if state.caps_locked is False and sc.available():
        try:
            sc.lock_capabilities(state.last_cap)
            state.caps_locked = True
        except OSError as e:
            state.problems.append(f"capabilities not dropped: {e}")
    return state


def _enter_namespaces(state: SandboxState) -> None:
    if os.geteuid() != 0:
        if not _enter_user_namespace(state):
            return
        state.userns = True
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


def _make_workbase(state: SandboxState, without: set[str]) -> None:
    """Without a jail: our private directory (0711: nobody lists it) and the Landlock ruleset confining to it."""
    state.workbase = os.path.join(_workbase_parent(state.tmp_base), f"grpo-rlvr-sandbox-{os.urandom(8).hex()}")
    os.mkdir(state.workbase, 0o711)
    if "landlock" in without:
        state.problems.append("no Landlock (switched off)")
        return
    read_only = [p for p in _SYSTEM_DIRS if os.path.isdir(p) and not os.path.islink(p)]
    for path in _python_paths() + _interpreter_files():
        if not _beneath(path, read_only):
            read_only.extend(_visible_entries(path))
    devices = [f"/dev/{name}" for name in _DEVICES if os.path.exists(f"/dev/{name}")]
    state.landlock, why = _landlock.build(read_only, devices, state.workbase)
    if state.landlock is None:
        state.problems.append(why)


def _workbase_parent(tmp_base: str) -> str:
    """Where the private directory goes: the system's shared temp directory (sticky, writable by all, so no
    trainer owns it), not the trainer's own ``TMPDIR`` (which a program keeping the trainer's uid would own and
    whose path it would learn from its working directory); the trainer's only where there is no such directory."""
    for path in SYSTEM_TMP:
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode) and st.st_mode & stat.S_ISVTX and st.st_mode & stat.S_IWOTH \
                and os.access(path, os.W_OK | os.X_OK):
            return path
    return tmp_base


def _unreadable_by_others(paths: list[str]) -> str:
    """The first path another uid cannot reach and list (some directory on the way lacks o+x), else ""."""
    for path in paths:
        parts = path.rstrip("/").split("/")
        for i in range(1, len(parts) + 1):
            here = "/".join(parts[:i]) or "/"
            try:
                mode = os.stat(here).st_mode
            except OSError:
                return path
            if not mode & stat.S_IXOTH or (here == path and not mode & stat.S_IROTH):
                return path
    return ""


def _visible_entries(path: str) -> list[str]:
    """``path``, or - when it holds this project's package - each of its entries but the package and its
    metadata (a Landlock rule cannot exclude a subdirectory)."""
    if os.path.dirname(_OWN_PACKAGE) != path:
        return [path]
    return [os.path.join(path, name) for name in sorted(os.listdir(path)) if not name.startswith("grpo_rlvr")]


def remove_workbase(state: SandboxState) -> None:
    """At exit: delete our private directory (nothing is running any more)."""
    if state.workbase is not None and os.path.isdir(state.workbase):
        empty_dir(state.workbase)
        os.rmdir(state.workbase)


def _can_switch_uid(state: SandboxState) -> bool:
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


def _become_pid1(state: SandboxState) -> None:
    """Fork into a new PID namespace: the child goes on as the supervisor, PID 1 there; this process only waits."""
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
    state.own_pidns_fd = os.open("/proc/self/ns/pid", os.O_RDONLY)  # the template returns to it after each fork


def _relay_exit(pid: int) -> None:
    """The supervisor's parent-side stub: holds nothing open, exits as the supervisor did. Never returns."""
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


def _enter_user_namespace(state: SandboxState) -> bool:
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


def _jail_mountpoint(base: str) -> str:
    """Where to build the jail root (in our private mount namespace only).

    The temp directory itself, hidden under our tmpfs: nothing is created on the host. When a Python path
    lies inside it (a venv under /tmp), that would hide it, so a directory of ours inside it is used instead,
    one per real user, reused by every supervisor (each mounts its own tmpfs over it, privately).
    """
    if not any(p == base or p.startswith(base.rstrip("/") + "/") for p in _python_paths()):
        return base
    path = os.path.join(base, f"grpo-rlvr-sandbox-root-{_real_uid}")
    try:
        os.mkdir(path, 0o755)
    except FileExistsError:
        pass
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        raise OSError(errno.EEXIST, f"{path} exists and is not our directory; remove it")
    return path


_real_uid = os.getuid()  # before any user namespace (inside one, getuid() is 0)


def _build_root(tmp_base: str) -> str:
    root = _jail_mountpoint(tmp_base)
    paths = _python_paths()  # read before the tmpfs may hide a path under the temp directory
    files, aliases = _interpreter_files(), _aliases()  # the same
    sc.mount("tmpfs", root, "tmpfs", sc.MS_NOSUID | sc.MS_NODEV, "size=1m,nr_inodes=4096,mode=755")
    bound: list[str] = []
    for top in _SYSTEM_DIRS:
        if os.path.islink(top):
            os.symlink(os.readlink(top), root + top)
        elif os.path.isdir(top):
            _bind(top, root + top)
            bound.append(top)
    for path in paths + files:
        if not _beneath(path, bound):
            _bind(path, root + path)
            bound.append(path)
    for real, alias in aliases:  # a path as the interpreter names it (a symlinked venv), over its real one
        if not _beneath(alias, bound):
            try:
                _bind(real, root + alias)
            except OSError:  # a directory on the way is a symlink in a bound directory: the link itself is there
                continue
    own = _OWN_PACKAGE
    if os.path.isdir(root + own):  # this project's source is not the program's business: an empty dir over it
        sc.mount("tmpfs", root + own, "tmpfs", sc.MS_NOSUID | sc.MS_NODEV | sc.MS_RDONLY, "size=4k,nr_inodes=1")
    os.makedirs(root + "/dev", mode=0o755)
    for name in _DEVICES:
        if os.path.exists("/dev/" + name):
            _bind("/dev/" + name, f"{root}/dev/{name}", devices=True)
    os.symlink(SHM_DIR, root + "/dev/shm")  # each execution's own (make_workdir): POSIX semaphores, multiprocessing
    os.makedirs(root + SANDBOX_DIR, mode=0o755)
    sc.mount(None, root, None, sc.MS_BIND | sc.MS_REMOUNT | sc.MS_RDONLY | sc.MS_NOSUID | sc.MS_NODEV)
    return root


def _beneath(path: str, dirs: list[str]) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in dirs)


def _interpreter_files() -> list[str]:
    """What running ``sys.executable`` needs besides ``sys.path``, as real paths: the executable, a venv's
    ``pyvenv.cfg``, and the directories of the shared libraries this interpreter has loaded outside the system
    directories (``libpython`` of a pyenv or conda build)."""
    if not sys.executable:
        return []
    exe = os.path.abspath(sys.executable)
    found = [os.path.realpath(exe)]
    for cfg in (os.path.join(os.path.dirname(exe), "pyvenv.cfg"),
                os.path.join(os.path.dirname(os.path.dirname(exe)), "pyvenv.cfg")):
        if os.path.isfile(cfg):
            found.append(os.path.realpath(cfg))
    try:
        with open("/proc/self/maps") as maps:
            libs = {line.split(None, 5)[5].strip() for line in maps if line.count(" ") >= 5 and ".so" in line}
    except (OSError, IndexError):
        libs = set()
    for lib in sorted(libs):
        folder = os.path.dirname(os.path.realpath(lib))
        if lib.startswith("/") and not _beneath(folder, list(_SYSTEM_DIRS)) and folder != "/":
            found.append(folder)
    return sorted({p for p in found if os.path.exists(p) and not _beneath(p, [_OWN_PACKAGE])}, key=len)


def _aliases() -> list[tuple[str, str]]:
    """(real path, the path as named) of each ``sys.path`` entry, the executable and a venv's ``pyvenv.cfg`` that
    are reached through a symlink: inside the jail the interpreter and its children look them up by that name."""
    named = [p for p in sys.path if p and os.path.isabs(p)]
    if sys.executable:
        exe = os.path.abspath(sys.executable)
        named += [exe, os.path.join(os.path.dirname(os.path.dirname(exe)), "pyvenv.cfg")]
    pairs = {(os.path.realpath(p), os.path.abspath(p)) for p in named if os.path.exists(p)}
    return sorted(((real, alias) for real, alias in pairs if real != alias), key=lambda pair: len(pair[1]))


def _python_paths() -> list[str]:
    """Absolute, existing ``sys.path`` entries (the stdlib, site-packages), shortest first; a directory that
    holds nothing but this project's package (an editable install's ``src``) is left out."""
    paths = {os.path.realpath(p) for p in sys.path if p and os.path.isabs(p) and os.path.exists(p)}
    own_parent = os.path.dirname(_OWN_PACKAGE)
    if own_parent in paths and all(n.startswith("grpo_rlvr") for n in os.listdir(own_parent)):
        paths.discard(own_parent)
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


def make_workdir(state: SandboxState, uid: int | None) -> str:
    """A fresh, empty working directory for one execution, owned by its uid; returns the path outside the jail.

    In the jail: a new tmpfs at ``/sandbox`` (0711: no listing, no creating) holding ``run`` (0700). Without
    one: ``run`` (0700) in our private directory, which is empty between executions.
    """
    if state.root is not None:
        opts = f"size={SANDBOX_TMPFS_MB}m,nr_inodes=8192,mode=711"
        sc.mount("tmpfs", state.root + SANDBOX_DIR, "tmpfs", sc.MS_NOSUID | sc.MS_NODEV, opts)
        path = state.root + WORKDIR
        paths = [path, state.root + SHM_DIR]
    else:
        path = os.path.join(state.workbase, "run")
        paths = [path]
    for made in paths:
        os.mkdir(made, 0o700)
        if uid is not None:
            os.chown(made, uid, uid)
    return path


def remove_workdir(state: SandboxState) -> None:
    """Delete what the execution left, once every process of it is dead (OSError if it cannot)."""
    if state.root is not None:
        sc.umount2(state.root + SANDBOX_DIR, sc.MNT_DETACH)  # the whole tmpfs, whatever it holds
    else:
        empty_dir(state.workbase)  # not only run/: a program running as our uid may write next to it


def empty_dir(path: str) -> None:
    """Delete everything inside ``path`` (see ``remove_tree``), keeping ``path`` itself."""
    os.chmod(path, 0o711)
    with os.scandir(path) as entries:
        names = [(e.name, e.is_dir(follow_symlinks=False)) for e in entries]
    for name, is_dir in names:
        if is_dir:
            remove_tree(os.path.join(path, name))
        else:
            os.unlink(os.path.join(path, name))


def remove_tree(path: str, max_entries: int = MAX_TREE_ENTRIES) -> None:
    """Delete ``path`` and everything in it, iteratively, without following symlinks.

    Every directory met is first moved up into ``path`` itself, so no path grows longer than two names and
    no recursion or open-descriptor chain grows with depth; directories the program made unreadable are
    made readable first (it ran as our uid, or we are root). Not ``shutil.rmtree``: importing shutil would
    enlarge the supervisor, and it recurses. Raises OSError when the tree cannot be removed or holds more than
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
