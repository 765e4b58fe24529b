"""A Hugging Face hub cache built on disk from local files, laid out as huggingface_hub lays it out
(``models--ORG--NAME/{refs,snapshots,blobs}``, snapshot files as relative symlinks to blobs named by their
SHA-256), so hub identities are tested without a download."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path


def add_snapshot(cache: Path, repo_id: str, source: Path, commit: str, repo_type: str = "model",
                 ref: str | None = "main") -> Path:
    """Put ``source``'s files into ``cache`` as the snapshot ``commit`` of ``repo_id``; point ``refs/<ref>`` at it."""
    repo = cache / (f"{repo_type}s--" + repo_id.replace("/", "--"))
    snap = repo / "snapshots" / commit
    files = [source] if source.is_file() else sorted(p for p in source.rglob("*") if p.is_file())
    for f in files:
        rel = f.name if source.is_file() else f.relative_to(source).as_posix()
        blob = repo / "blobs" / hashlib.sha256(f.read_bytes()).hexdigest()
        blob.parent.mkdir(parents=True, exist_ok=True)
        if not blob.exists():
            shutil.copyfile(f, blob)
        link = snap / rel
        link.parent.mkdir(parents=True, exist_ok=True)
        depth = len(Path(rel).parts) + 1  # snapshots/<commit>/<rel> back up to the repo folder
        link.symlink_to(Path(*[".."] * depth) / "blobs" / blob.name)
    if ref:
        (repo / "refs").mkdir(parents=True, exist_ok=True)
        (repo / "refs" / ref).write_text(commit)
    return snap
