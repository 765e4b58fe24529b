"""Atomic file writes: a failure never leaves a half-written artifact over a good one.

Files are written to a temporary sibling and renamed into place (``os.replace`` is atomic on POSIX);
directories are built in a temporary sibling and swapped in. None of them writes in, at or above a trust anchor
(``protected_targets.refuse_anchor``: the signed-review policy, the run key, the hash cache), and a folder is not
replaced while it holds a reviewed inspection or a run's records (``protected_targets.refuse_replacing``),
whichever command asked.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from grpo_rlvr.protected_targets import refuse_anchor, refuse_replacing


def write_text_atomic(path: Path, text: str, mode: int | None = None) -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the new one, never a mix."""
    path = Path(path)
    refuse_anchor(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_json_atomic(path: Path, data) -> None:
    write_text_atomic(path, json.dumps(data, indent=2, sort_keys=False, ensure_ascii=False) + "\n")


def write_jsonl_atomic(path: Path, rows) -> None:
    write_text_atomic(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


@contextlib.contextmanager
def atomic_directory(target: Path) -> Iterator[Path]:
    """Yield a temporary directory; on success it replaces ``target`` (the old one is removed after the swap)."""
    target = Path(target)
    refuse_replacing(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old = None
    if target.exists():
        old = target.with_name(f".{target.name}.old-{os.getpid()}")
        os.replace(target, old)
    os.replace(tmp, target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def move_aside(path: Path, label: str = "bak") -> Path:
    """Rename ``path`` to ``<name>.<label>-<UTC time>`` beside it (never over an existing one); returns the new path."""
    path = Path(path)
    refuse_anchor(path, "move")
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    dest = path.with_name(f"{path.name}.{label}-{stamp}")
    n = 1
    while dest.exists():
        n += 1
        dest = path.with_name(f"{path.name}.{label}-{stamp}-{n}")
    os.replace(path, dest)
    return dest
