"""A hub model's or dataset's snapshot in the local Hugging Face cache, read without the network.

Layout (huggingface_hub's): ``<cache>/models--ORG--NAME/`` (``datasets--ORG--NAME/`` for datasets) holds
``refs/<revision>`` (a file with the commit a branch or tag pointed to when last fetched),
``snapshots/<commit>/<file>`` (symlinks) and ``blobs/<content hash>``. A snapshot's file is a symlink to the blob
named by its content hash (SHA-256 for LFS files, git's SHA-1 for the rest), so the link target names the
content without reading it.

Trusted: the blob names (huggingface_hub checks an LFS file's SHA-256 as it downloads it). Not covered: a blob
rewritten in place inside the cache keeps its name; a file that is not a symlink (a cache on a file system
without links) is hashed from its bytes instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from grpo_rlvr.identity.hash_cache import sha256_file

COMMIT = re.compile(r"^[0-9a-f]{40}$")
_BLOB = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")


@dataclass(frozen=True)
class Snapshot:
    repo_id: str
    commit: str
    folder: Path

    def files(self, keep) -> dict[str, str]:
        """``relative name -> content hash`` of the snapshot's files that ``keep(relative name)`` accepts."""
        out = {}
        for p in sorted(self.folder.rglob("*")):
            rel = p.relative_to(self.folder).as_posix()
            if not p.is_file() or not keep(rel):
                continue
            target = p.readlink().name if p.is_symlink() else ""
            out[rel] = target if _BLOB.match(target) else sha256_file(p)
        return out


def repo_folder(repo_id: str, repo_type: str = "model") -> Path | None:
    """The cache folder of a hub repo (the first cache that has one), or None."""
    from grpo_rlvr.brief.model_probe import hf_cache_dirs  # here: the brief package imports this one

    if repo_id.count("/") > 1 or not repo_id.strip("/"):
        return None
    name = f"{repo_type}s--" + repo_id.replace("/", "--")
    for cache in hf_cache_dirs():
        if (cache / name / "snapshots").is_dir():
            return cache / name
    return None


def snapshot(repo_id: str, revision: str | None, repo_type: str = "model") -> Snapshot | None:
    """The snapshot ``revision`` (a branch, tag or commit; None means ``main``) resolves to in the local cache,
    or None when the cache holds no such snapshot."""
    repo = repo_folder(repo_id, repo_type)
    if repo is None:
        return None
    rev = revision or "main"
    commit = rev if COMMIT.match(rev) else None
    ref = repo / "refs" / rev
    if commit is None and ref.is_file():
        commit = ref.read_text().strip()
    if commit is None or not COMMIT.match(commit) or not (repo / "snapshots" / commit).is_dir():
        return None
    return Snapshot(repo_id, commit, repo / "snapshots" / commit)
