"""One review at a time per inspection folder: an advisory ``flock`` on ``DIR/.review.lock``.

The kernel drops an ``flock`` when its holder dies, however it dies (``kill -9`` included), so a crashed
review never blocks the next one. The file also records who holds it (pid, host, reviewer, since); a file
that still names a holder while nobody holds the lock is a stale lock from a review that was killed, and the
next review says so and takes over. ``inspect`` asks :func:`holder` before replacing a folder.

Limits: ``flock`` is advisory (only processes that ask honour it) and is emulated on NFS; the review's saves
therefore also merge with what is on disk (see ``review.save_verdict``) rather than trusting the lock alone.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import time
from pathlib import Path

from grpo_rlvr.errors import ReviewError

LOCK_NAME = ".review.lock"


def _read(fd: int) -> dict | None:
    os.lseek(fd, 0, os.SEEK_SET)
    raw = os.read(fd, 4096)
    try:
        info = json.loads(raw.decode()) if raw.strip() else None
    except (UnicodeDecodeError, json.JSONDecodeError):
        return {"raw": raw.decode(errors="replace")}
    return info if isinstance(info, dict) else None


def _describe(info: dict | None) -> str:
    if not info:
        return "another review"
    return (f"the review by {info.get('reviewer', '?')} (pid {info.get('pid', '?')} on {info.get('host', '?')}, "
            f"since {info.get('since', '?')})")


def holder(directory: str | Path) -> dict | None:
    """Who holds the review lock of ``directory`` now, or None when no review is running."""
    path = Path(directory) / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read(fd) or {}
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


@contextlib.contextmanager
def review_lock(directory: str | Path, reviewer: str, notice=None):
    """Hold the review lock for the duration of the block.

    Raises:
        ReviewError: another live review holds it (names that review and what to do).
    """
    path = Path(directory) / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as e:
        raise ReviewError(f"{directory}: cannot open {path.name} for writing ({e.strerror}); the review saves every "
                          "verdict into this folder, so run it as a user who can write there") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ReviewError(f"{directory}: {_describe(_read(fd))} is still running on this inspection; one review "
                              "at a time. Finish or quit that one (its verdicts are saved), then run "
                              f"`grpo-rlvr review {directory}` again") from None
        stale = _read(fd)
        if stale and notice is not None:
            notice(f"A previous review ended without releasing its lock ({_describe(stale)}); its saved verdicts "
                   "are kept and this review takes over.\n")
        info = {"pid": os.getpid(), "host": socket.gethostname(), "reviewer": reviewer,
                "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, json.dumps(info).encode())
        os.fsync(fd)
        try:
            yield info
        finally:
            os.ftruncate(fd, 0)   # a clean exit leaves no holder behind; the flock goes with the fd
    finally:
        os.close(fd)
