"""SHA-256 of files, remembered by what the kernel says about them, so a 15 GB model is read once.

A hash is kept in ``<user cache>/file-hashes/<device>-<inode>.json`` with the file's size, ``mtime_ns`` and
``ctime_ns`` when it was read. Later it is reused only while all five (device, inode, size, mtime, ctime) are
unchanged; anything else reads the file again.

What the cache trusts, and why that holds against a rewrite:
- Any write through the file system moves ``mtime`` and ``ctime``. ``touch -d`` (or ``os.utime``) can put
  ``mtime`` back but sets ``ctime`` to now: no system call sets ``ctime``, so a rewrite that keeps the size and
  restores the old ``mtime`` is still caught. Replacing the file (write elsewhere, rename over it) gives it
  another inode, or the same number with a new ``ctime``.
- A file changed within ``RACY_NS`` before it was hashed is not cached (timestamps tick coarsely, so a second
  write in the same tick would leave them equal); nor is one whose stat changed while it was being read.

The cache folder is written by whoever runs grpo-rlvr, so a program running as that user can forge an entry (the
stamp of new weights beside the old weights' hash). The check before training therefore reads every byte
(:func:`distrust_disk_cache`, set by ``clean_interpreter`` for the run check): the folder only makes ``gate``,
``inspect`` and ``render`` fast. Within one process each file is read once (an in-memory memo, same stamps).

Every file hashed or looked up is remembered with its stamps (:func:`checked_files`), so the trainer can see,
after it has loaded the model and data, whether one of them was replaced since the check
(:func:`changed_since`).

Not covered: root changing the system clock around a write (``ctime`` is read from it) and writing the block
device under the file system. A lost or unwritable cache only costs time: every hash is then computed from the
bytes.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from grpo_rlvr.user_cache import cache_root

log = logging.getLogger(__name__)

CACHE_FOLDER = "file-hashes"
RACY_NS = 2_000_000_000   # 2 s: coarser than any file system's timestamp tick (FAT's is 2 s, ext4's ~4 ms)
_WORKERS = 4              # files hashed at once; hashlib releases the GIL on large buffers
_memo: dict[tuple[int, int], tuple[dict, str]] = {}   # (device, inode) -> (stamp, sha256), read by this process
_checked: dict[str, dict] = {}                         # absolute path -> its stamps when it was hashed
_disk_trusted = True


def distrust_disk_cache() -> None:
    """From now on, in this process, hashes come from the bytes (and this process's memo), never the folder."""
    global _disk_trusted
    _disk_trusted = False


def cache_dir() -> Path:
    return cache_root() / CACHE_FOLDER


def _stamp(st: os.stat_result) -> dict:
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns}


def _entry_path(st: os.stat_result) -> Path:
    return cache_dir() / f"{st.st_dev}-{st.st_ino}.json"


def _cached(st: os.stat_result) -> str | None:
    memo = _memo.get((st.st_dev, st.st_ino))
    if memo is not None and memo[0] == _stamp(st):
        return memo[1]
    if not _disk_trusted:
        return None
    try:
        entry = json.loads(_entry_path(st).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or any(entry.get(k) != v for k, v in _stamp(st).items()):
        return None
    digest = entry.get("sha256")
    return digest if isinstance(digest, str) and len(digest) == 64 else None


def _remember(path: Path, st: os.stat_result, digest: str) -> None:
    target = _entry_path(st)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps({**_stamp(st), "sha256": digest, "path": str(path)}))
        os.replace(tmp, target)
    except OSError as e:  # a read-only or full cache only costs time
        log.debug("content hash of %s not cached: %s", path, e)
        with contextlib.suppress(OSError):
            tmp.unlink()


def sha256_file(path: str | Path) -> str:
    """The SHA-256 (hex) of the file's bytes: from the cache when its stat is unchanged, else read and cached.

    Symlinks are followed: the hash is the target's content. Raises OSError when the file cannot be read.
    """
    path = Path(path)
    st = _note(path)
    hit = _cached(st)
    if hit is not None:
        return hit
    started = time.time_ns()
    with path.open("rb") as fh:
        digest = hashlib.file_digest(fh, "sha256").hexdigest()
    after = os.stat(path)
    changed_while_read = _stamp(after) != _stamp(st) or after.st_ino != st.st_ino
    racy = max(st.st_mtime_ns, st.st_ctime_ns) >= started - RACY_NS
    if not changed_while_read and not racy:
        _memo[(st.st_dev, st.st_ino)] = (_stamp(st), digest)
        _remember(path, st, digest)
    return digest


def _stamps(path: Path) -> dict:
    """What says a path still names the same bytes: the file's device, inode, size, mtime and ctime, and the
    same for the link itself when the path is a symlink (a link re-pointed and put back moves its ctime)."""
    st, lst = os.stat(path), os.lstat(path)
    out = {"file": [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]}
    if lst.st_ino != st.st_ino or lst.st_dev != st.st_dev:
        out["link"] = [lst.st_dev, lst.st_ino, lst.st_ctime_ns]
    return out


def _note(path: Path) -> os.stat_result:
    st = os.stat(path)
    _checked[os.path.abspath(path)] = _stamps(path)
    return st


def forget() -> None:
    """Forget what this process has read and noted, as a new process starts (benchmarks measure with it)."""
    _memo.clear()
    _checked.clear()


def start_checking() -> None:
    """Forget the files noted so far: :func:`checked_files` then lists those a check reads from here on."""
    _checked.clear()


def checked_files() -> dict[str, dict]:
    """``absolute path -> stamps`` of every file this process hashed (or found in the cache), as it was then."""
    return dict(_checked)


def changed_since(checked: dict[str, dict]) -> list[str]:
    """The paths of ``checked`` (from :func:`checked_files`) that are gone or name other bytes now."""
    out = []
    for path, stamps in sorted(checked.items()):
        try:
            now = _stamps(Path(path))
        except OSError:
            out.append(path)
            continue
        if now != {k: list(v) for k, v in stamps.items()}:
            out.append(path)
    return out


def sha256_files(paths: list[Path]) -> dict[Path, str]:
    """``sha256_file`` of each path; the files not in the cache are read a few at a time."""
    found = {}
    for p in paths:   # the warm case: one stat and one small read each, no threads started
        hit = _cached(_note(p))
        if hit is not None:
            found[p] = hit
    missing = [p for p in paths if p not in found]
    if len(missing) <= 1:
        found.update({p: sha256_file(p) for p in missing})
    else:
        with ThreadPoolExecutor(max_workers=min(_WORKERS, len(missing))) as pool:
            found.update(zip(missing, pool.map(sha256_file, missing), strict=True))
    return {p: found[p] for p in paths}
