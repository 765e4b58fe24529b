"""The process tree of one execution, measured from outside through ``/proc``: its tasks and its memory.

``RLIMIT_AS`` caps one process and ``RLIMIT_NPROC`` only counts processes for a uid of the sandbox's own, so
without a cgroup nothing caps a tree: 64 processes of 512 MB each are 32 GB. The supervisor therefore walks
the tree of its own children every ``TICK_S`` (``/proc/PID/task/TID/children``, leaving out the template's
subtree) and adds up the tasks (threads count, as for ``RLIMIT_NPROC``) and the memory no other process
shares: anonymous pages above what every execution inherits from the template (counted once) plus shared
memory. Past a limit the supervisor kills the execution and the sample scores 0. The walk costs ~30 µs per
process.
Covered: memory and task counts of every process and thread under the supervisor, whatever its session,
group or parent. Not covered: allocations faster than one tick (the OOM killer then takes a sandbox process
first, see ``isolation.template``), kernel memory (pipes, sockets), files in the working directory (capped by the
jail's tmpfs size, or per file by ``RLIMIT_FSIZE``).
"""

from __future__ import annotations

import os

TICK_S = 0.01  # seconds between two walks of a running execution's tree


def available(host_pid: int) -> str:
    """"" when this process can walk its own children in ``/proc``, else why not."""
    try:
        with open(f"/proc/{host_pid}/task/{host_pid}/children", "rb"):
            pass
        with open(f"/proc/{host_pid}/status", "rb"):
            pass
    except OSError as e:
        return f"no process-tree cap: /proc cannot be read ({e})"
    return ""


def _read(path: str) -> bytes | None:
    """A small ``/proc`` file's bytes (None when it is gone): ``os.open``/``os.read``, as ``open()`` would add a
    ``fstat``, an ``ioctl`` and an ``lseek`` per file, and the walk reads two files per process every tick."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        chunks = []
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)


def _children(pid: int, threads: int) -> list[int]:
    tids = [pid] if threads <= 1 else _tids(pid)
    found = []
    for tid in tids:
        data = _read(f"/proc/{pid}/task/{tid}/children")
        if data is None:
            continue  # gone meanwhile
        try:
            found += [int(p) for p in data.split()]
        except ValueError:
            continue
    return found


def _tids(pid: int) -> list[int]:
    try:
        return [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except (OSError, ValueError):
        return []


def _status(pid: int) -> tuple[int, int] | None:
    """(threads, private KiB beyond the template's: anonymous + shared memory), None when gone."""
    data = _read(f"/proc/{pid}/status")
    if data is None:
        return None
    try:
        threads, anon, shmem = (_field(data, name) for name in (b"\nThreads:", b"\nRssAnon:", b"\nRssShmem:"))
    except (ValueError, IndexError):
        return None
    return threads, anon + shmem


def _field(status: bytes, name: bytes) -> int:
    """The number after ``name`` (a line's start, with its newline) in a ``/proc`` status file, 0 when absent (a
    zombie has no memory lines). Found, not parsed line by line: the walk reads one per process every tick."""
    at = status.find(name)
    if at < 0:
        return 0
    return int(status[at + len(name):status.find(b"\n", at + 1)].split()[0])


def measure(supervisor: int, template: int, baseline_kb: int) -> tuple[int, int, list[int]]:
    """(tasks, memory in bytes, the supervisor's other children) of everything under ``supervisor`` but the
    ``template`` subtree. Host pids throughout; a process that exits mid-walk is skipped."""
    tasks = kb = 0
    first = [p for p in _children(supervisor, 1) if p != template]
    todo = list(first)
    seen = 0
    while todo:
        pid = todo.pop()
        status = _status(pid)
        if status is None:
            continue
        threads, private = status
        tasks += max(1, threads)
        kb += max(0, private - baseline_kb)  # what it shares with the template is counted once, below
        seen += 1
        todo += _children(pid, threads)
    if seen:
        kb += baseline_kb
    return tasks, kb * 1024, first
