"""A hub model's or dataset's snapshot in the local Hugging Face cache, read without the network.

Layout (huggingface_hub's): ``<cache>/models--ORG--NAME/`` (``datasets--ORG--NAME/`` for datasets) holds
``refs/<revision>`` (a file with the commit a branch or tag pointed to when last fetched),
``snapshots/<commit>/<file>`` (symlinks) and ``blobs/<content hash>``. A snapshot's file is a symlink to the blob
named by its content hash: SHA-256 for LFS files (weights), git's blob SHA-1 for the rest (configs, tokenizer).

The cache is the one huggingface_hub itself loads from (:func:`hub_dir`, the same environment variables in the
same order), so what is checked here is what transformers, datasets and vLLM read. Each blob's bytes are checked
against its name (SHA-256 through ``hash_cache``, so a large file is read once; git's SHA-1 for the small
ones): a blob rewritten in place keeps its name but no longer matches it, and its identity then says so. A file
that is not a symlink (a cache on a file system without links) is identified by its bytes' SHA-256.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from grpo_rlvr.errors import InputFileError
from grpo_rlvr.identity.hash_cache import sha256_file

COMMIT = re.compile(r"^[0-9a-f]{40}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
ALTERED = "altered:"   # prefix of a blob's identity when its bytes no longer match its name


def hub_dir() -> Path:
    """The hub cache huggingface_hub uses: ``$HF_HUB_CACHE``, ``$HUGGINGFACE_HUB_CACHE``, ``$HF_HOME/hub``,
    ``$XDG_CACHE_HOME/huggingface/hub``, ``~/.cache/huggingface/hub``, in that order (only the first that is
    set counts, as there)."""
    env = os.environ
    hub = env.get("HF_HUB_CACHE") or env.get("HUGGINGFACE_HUB_CACHE") or os.path.join(hf_home(), "hub")
    return Path(os.path.expandvars(os.path.expanduser(hub)))


def hf_home() -> Path:
    """Hugging Face's home folder: ``$HF_HOME``, else ``$XDG_CACHE_HOME/huggingface``, else
    ``~/.cache/huggingface``."""
    env = os.environ
    home = env.get("HF_HOME") or os.path.join(env.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache"), "huggingface")
    return Path(os.path.expandvars(os.path.expanduser(home)))


def _git_blob_sha1(path: Path) -> str:
    h = hashlib.sha1(usedforsecurity=False)
    h.update(b"blob %d\0" % path.stat().st_size)
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def blob_identity(link: Path) -> str:
    """A snapshot file's identity: its blob's name when the bytes match it, else ``altered:<sha256>``."""
    name = link.readlink().name if link.is_symlink() else ""
    if _SHA256.match(name):
        actual = sha256_file(link)
        return name if actual == name else ALTERED + actual
    if COMMIT.match(name):   # git's SHA-1 of a small file: read every time (no cache holds SHA-1s)
        sha256_file(link)    # noted for the check after loading, like every other file
        return name if _git_blob_sha1(link) == name else ALTERED + sha256_file(link)
    return sha256_file(link)


@dataclass(frozen=True)
class Snapshot:
    repo_id: str
    commit: str
    folder: Path

    def files(self, found: dict[str, Path]) -> dict[str, str]:
        """``relative name -> content identity`` of the snapshot's files ``found`` (``compute.walk``'s names)."""
        return {rel: blob_identity(p) for rel, p in sorted(found.items())}


def repo_folder(repo_id: str, repo_type: str = "model") -> Path | None:
    """The cache folder of a hub repo in :func:`hub_dir`, or None."""
    if repo_id.count("/") > 1 or not repo_id.strip("/"):
        return None
    folder = hub_dir() / (f"{repo_type}s--" + repo_id.replace("/", "--"))
    return folder if (folder / "snapshots").is_dir() else None


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


def resolved_commit(repo_id: str, revision: str | None, repo_type: str = "model") -> str | None:
    """The commit ``revision`` (None: ``main``) names in the local cache now, or None when it is not there."""
    snap = snapshot(repo_id, revision, repo_type)
    return None if snap is None else snap.commit


def pinned_folder(repo_id: str, commit: str, repo_type: str = "model") -> str:
    """The local folder of the snapshot ``commit`` that the gate checked, for loading exactly those files.

    Raises:
        InputFileError: the cache has no such snapshot (with the command that fetches it).
    """
    snap = snapshot(repo_id, commit, repo_type)
    if snap is None:
        kind = "--repo-type dataset " if repo_type == "dataset" else ""
        raise InputFileError(f"{repo_type} {repo_id} at the reviewed commit {commit[:12]} is not in this machine's "
                             f"Hugging Face cache ({hub_dir()}); fetch it (`hf download {kind}{repo_id} --revision "
                             f"{commit}`) and run again")
    return str(snap.folder)
