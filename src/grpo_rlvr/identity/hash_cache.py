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

Not covered: root changing the system clock around a write (``ctime`` is read from it), writing the block
device under the file system, and anyone who writes the cache folder itself (the plugin's hook denies the agent
that folder). A lost or unwritable cache only costs time: every hash is then computed from the bytes.
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


def cache_dir() -> Path:
    return cache_root() / CACHE_FOLDER


def _stamp(st: os.stat_result) -> dict:
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns}


def _entry_path(st: os.stat_result) -> Path:
    return cache_dir() / f"{st.st_dev}-{st.st_ino}.json"


def _cached(st: os.stat_result) -> str | None:
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
    st = os.stat(path)
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
        _remember(path, st, digest)
    return digest


def sha256_files(paths: list[Path]) -> dict[Path, str]:
    """``sha256_file`` of each path; the files not in the cache are read a few at a time."""
    found = {}
    for p in paths:   # the warm case: one stat and one small read each, no threads started
        hit = _cached(os.stat(p))
        if hit is not None:
            found[p] = hit
    missing = [p for p in paths if p not in found]
    if len(missing) <= 1:
        found.update({p: sha256_file(p) for p in missing})
    else:
        with ThreadPoolExecutor(max_workers=min(_WORKERS, len(missing))) as pool:
            found.update(zip(missing, pool.map(sha256_file, missing), strict=True))
    return {p: found[p] for p in paths}
