"""The tree walk's ``/proc`` reads (``isolation.tree``): the fields it takes from a process's status file, for a live
process, a zombie and one that is gone, and the tasks and memory it adds up under a parent."""

from __future__ import annotations

import os
import threading
import time

from grpo_rlvr.sandbox.isolation import tree


def _fields(pid: int) -> dict[str, int]:
    with open(f"/proc/{pid}/status", "rb") as f:
        return {line.split(b":")[0].decode(): int(line.split()[1]) for line in f
                if line.startswith((b"Threads:", b"RssAnon:", b"RssShmem:"))}


def test_status_fields_of_a_live_a_zombie_and_a_gone_process():
    stop = threading.Event()
    worker = threading.Thread(target=stop.wait)
    worker.start()
    try:
        threads, private = tree._status(os.getpid())
        fields = _fields(os.getpid())
        assert threads == fields["Threads"] >= 2
        assert abs(private - (fields["RssAnon"] + fields["RssShmem"])) < 1024  # KiB, read a moment apart
    finally:
        stop.set()
        worker.join()
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    try:
        deadline = time.monotonic() + 10
        while b"Z (zombie)" not in open(f"/proc/{pid}/status", "rb").read() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert tree._status(pid) == (1, 0)  # no memory lines: nothing private left
    finally:
        os.waitpid(pid, 0)
    assert tree._status(pid) is None


def test_measure_counts_each_child_and_its_threads():
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(w)
        for _ in range(2):
            threading.Thread(target=os.read, args=(r, 1), daemon=True).start()
        os.read(r, 1)
        os._exit(0)
    os.close(r)
    try:
        deadline = time.monotonic() + 10
        while tree._status(pid)[0] < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        tasks, memory, children = tree.measure(os.getpid(), -1, 0)
        assert pid in children and tasks >= 3 and memory > 0
    finally:
        os.write(w, b"xxx")
        os.close(w)
        os.waitpid(pid, 0)
