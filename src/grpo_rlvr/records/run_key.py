"""The per-user key that authenticates what a run records about itself (``provenance``, ``checkpoint_ledger``).

``output/provenance.json`` and ``output/checkpoints.json`` are plain JSON in the run folder, which anyone who can
write the folder can write. Each record therefore carries an HMAC-SHA256 made with a key kept outside every run
folder: ``<home>/.local/share/grpo-rlvr/run-key``, where ``<home>`` is the user's home directory *from the
password database* (not ``$HOME`` or ``$XDG_DATA_HOME``, which a caller can point at a key of its own). The file
is created on first use with 32 random bytes, mode 0600, and refused when another user owns it or others may
read or write it.

What a valid MAC proves: the record was made by code that read this key, as this user; grpo-rlvr makes them only
where the run check passed (``provenance``) and in the process it passed for (``checkpoint_ledger``). What it
does not prove: code running as the same user can read the key and sign anything (the plugin's hook keeps the
agent's commands off the file; a program the agent writes is beyond it). See the README's "What the gate cannot
stop".
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import pwd
import secrets
import stat
from pathlib import Path

from grpo_rlvr.errors import RunKeyError

KEY_NAME = "run-key"


def home_from_passwd() -> Path:
    """The user's home directory as the password database has it (``$HOME`` is ignored)."""
    try:
        return Path(pwd.getpwuid(os.getuid()).pw_dir)
    except KeyError:
        raise RunKeyError(f"user id {os.getuid()} has no entry in the password database, so grpo-rlvr has no home "
                          "folder to keep its run key in; run as a user with a passwd entry (and a home)") from None


def key_path() -> Path:
    return home_from_passwd() / ".local" / "share" / "grpo-rlvr" / KEY_NAME


def load_key(path: Path | None = None) -> bytes:
    """The key at ``path`` (default :func:`key_path`), created on first use (mode 0600).

    Raises:
        RunKeyError: it cannot be created or read, another user owns it, or group/others may access it.
    """
    path = Path(path) if path is not None else key_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        pass
    except OSError as e:
        raise RunKeyError(f"{path}: cannot create grpo-rlvr's run key ({e.strerror}); make {path.parent} writable "
                          "by you (it is created once, mode 0600)") from None
    else:
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_hex(32) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode):
            raise RunKeyError(f"{path}: grpo-rlvr's run key is not a regular file (a link?); delete it, and a new "
                              "key is made on the next run (runs signed with the old one then read as unproven)")
        if st.st_uid != os.getuid() or st.st_mode & 0o077:
            raise RunKeyError(f"{path}: grpo-rlvr's run key is owned by uid {st.st_uid} with mode "
                              f"{stat.S_IMODE(st.st_mode):o}; it must be yours and private: `chmod 600 {path}` (or "
                              "delete it to make a new one; runs signed with the old key then read as unproven)")
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as e:
        raise RunKeyError(f"{path}: cannot read grpo-rlvr's run key ({e}); delete it to make a new one") from None
    if len(text) < 32:
        raise RunKeyError(f"{path}: grpo-rlvr's run key is too short to be one it made; delete it to make a new one")
    return text.encode("ascii")


def canonical(record: dict) -> bytes:
    return json.dumps(record, sort_keys=True, ensure_ascii=True, separators=(",", ":")).encode()


def sign(record: dict, key: bytes | None = None) -> str:
    """HMAC-SHA256 (hex) of ``record`` (canonical JSON) with the run key."""
    return hmac.new(key if key is not None else load_key(), canonical(record), hashlib.sha256).hexdigest()


def valid(record: dict, proof, key: bytes | None = None) -> bool:
    """``proof`` is the MAC :func:`sign` makes of ``record`` with this user's key."""
    return isinstance(proof, str) and hmac.compare_digest(proof, sign(record, key))
