"""Which allowed-signers files a review must be signed against, recorded when the inspection is made and re-checked
by the gate, and the ``ssh-keygen`` that verifies.

The policy files:

- the system's, ``/etc/grpo-rlvr/allowed_signers`` (``protected_targets.SYSTEM_POLICY``): the anchor that code running as this
  user cannot remove. It counts once its folder exists, and must then be root's: the file owned by root and not
  writable by group or others, and so every folder above it (a root-owned folder with the sticky bit, such as
  ``/tmp``, counts as not writable: only root may rename or delete what root owns there). A folder that exists
  without the file, or a file or folder this user (or anyone but root) could change, fails the gate: signing
  stays required and nothing signs against it (:func:`system_policy_problems`). The person creates it once
  (``sudo install -d -m 755 /etc/grpo-rlvr`` and ``sudo install -m 644 allowed_signers /etc/grpo-rlvr/``);
- the brief's ``inspection.signing.allowed_signers``, when it sets one;
- the user's, at ``<home>/.config/grpo-rlvr/allowed_signers``, where ``<home>`` is the account's home directory
  from the password database (``pwd.getpwuid(os.getuid()).pw_dir``), never ``$HOME``: pointing ``HOME`` or
  ``XDG_CONFIG_HOME`` at an empty folder does not hide it. A brief cannot turn it off;
- ``$XDG_CONFIG_HOME/grpo-rlvr/allowed_signers`` too, when that names another file that exists: it can only add
  a file to sign against, never take one away.

Signing is required when any of them applies, and the signature must verify against every one. So a user-level
file only adds: with the system's in place, deleting or emptying ``~/.config/grpo-rlvr`` leaves signing required
against the system's file.

``inspect`` records the policy in the manifest (``signing``: required or not, and each file's path, SHA-256 and
principals), so the manifest's seal, which every verdict and the signature carry, covers it. The gate verifies
the signature against the files recorded there as well as those that apply now: deleting
``inspection.signing`` from the brief after inspect leaves signing required, and each recorded file must still
hold the content it held then (pointing the brief at another file adds that file; it never replaces the
recorded one). A recorded file that did not exist at inspect time pins no content. Changing an allowed-signers
file on purpose means inspecting, reviewing and signing again.

The verifier is ``ssh-keygen`` at a fixed system path (:data:`SSH_KEYGEN_PATHS`), never a PATH lookup, so a
stand-in put first on PATH is not what verifies.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from grpo_rlvr import protected_targets
from grpo_rlvr.errors import ReviewError
from grpo_rlvr.protected_targets import account_home

USER_POLICY = Path(".config") / "grpo-rlvr" / "allowed_signers"
# Where OpenSSH installs ssh-keygen; the first that exists, is executable and (unless we are root) is not writable
# by this user is used.
SSH_KEYGEN_PATHS = ("/usr/bin/ssh-keygen", "/bin/ssh-keygen", "/usr/local/bin/ssh-keygen")


def user_allowed_signers() -> Path:
    """The user-level allowed-signers file: a fixed path under the account's home."""
    return account_home() / USER_POLICY


def _user_files() -> list[Path]:
    found = [user_allowed_signers()]
    xdg = os.environ.get("XDG_CONFIG_HOME")
    if xdg:
        found.append(Path(xdg) / "grpo-rlvr" / "allowed_signers")
    return [p for p in found if p.is_file()]


def _unique(paths) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        p = Path(p).expanduser().resolve()
        if p not in out:
            out.append(p)
    return out


def _system_files() -> list[Path]:
    """The system policy, once its folder exists (a missing file then fails the gate: signing stays required)."""
    anchor = protected_targets.SYSTEM_POLICY
    return [anchor] if anchor.parent.exists() or os.path.lexists(anchor) else []


def _not_roots(path: Path, folder: bool) -> str | None:
    """Why ``path`` could be changed by someone other than root (None when only root can)."""
    try:
        st = os.lstat(path)
    except OSError as e:
        return f"{path} cannot be read ({e.strerror})"
    if stat.S_ISLNK(st.st_mode):
        return f"{path} is a symbolic link (whoever owns it can point it elsewhere)"
    if st.st_uid != 0:
        return f"{path} is owned by uid {st.st_uid}, not root"
    writable = st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    if writable and not (folder and st.st_mode & stat.S_ISVTX):
        who = [w for bit, w in ((stat.S_IWGRP, "its group"), (stat.S_IWOTH, "others")) if st.st_mode & bit]
        return f"{path} is writable by {' and '.join(who)}"
    return None


def system_policy_problems() -> list[str]:
    """Why the system policy (``protected_targets.SYSTEM_POLICY``) cannot anchor signed reviews (empty when it can,
    or when its folder does not exist): the file and every folder above it must be root's and writable by no one
    else."""
    anchor = protected_targets.SYSTEM_POLICY
    if not _system_files():
        return []
    if not os.path.lexists(anchor):
        return [f"{anchor.parent} exists but holds no allowed_signers: signing is required and nothing can be "
                f"verified against it; put the reviewers' keys there (`sudo install -m 644 FILE {anchor}`) or "
                "remove the folder"]
    chain = [(anchor, False), *((d, True) for d in anchor.parents)]
    found = [why for path, folder in chain if (why := _not_roots(path, folder))]
    if not found:
        return []
    return [f"the system allowed-signers file {anchor} is not root's alone ({'; '.join(found)}), so code running as "
            "you could change or remove it: make the file and every folder above it owned by root and not writable "
            f"by group or others (`sudo chown root: {anchor} {anchor.parent}` and `sudo chmod go-w {anchor} "
            f"{anchor.parent}`)"]


def policy_files(brief) -> list[Path]:
    """The allowed-signers files that apply to ``brief`` now (empty: signing is not required)."""
    own = [brief.inspection.allowed_signers] if brief.inspection.allowed_signers is not None else []
    return _unique([*_system_files(), *own, *_user_files()])


def _describe(path: Path) -> dict:
    try:
        data = path.read_bytes()
    except OSError:
        return {"path": str(path), "sha256": None, "principals": []}
    principals = [line.split()[0] for line in data.decode(errors="replace").splitlines()
                  if line.strip() and not line.lstrip().startswith("#")]
    return {"path": str(path), "sha256": hashlib.sha256(data).hexdigest(), "principals": principals}


def policy_record(brief) -> dict:
    """What ``inspect`` records in the manifest: whether signing is required, and each file's content digest."""
    files = policy_files(brief)
    return {"required": bool(files), "allowed_signers": [_describe(p) for p in files]}


def files_to_verify(manifest: dict, brief) -> tuple[list[Path], list[str]]:
    """The files the signature must verify against (those recorded at inspect and those that apply now), and
    why the recorded policy does not hold any more (a recorded file's content changed)."""
    rec = manifest.get("signing")
    if rec is None:
        return policy_files(brief), system_policy_problems()
    entries = rec.get("allowed_signers") if isinstance(rec, dict) else None
    if not isinstance(entries, list) or not all(isinstance(e, dict) and isinstance(e.get("path"), str)
                                                for e in entries):
        return policy_files(brief), ["manifest.json: its `signing` record is not what `grpo-rlvr inspect` writes "
                                     "(the manifest was edited); re-run `grpo-rlvr inspect BRIEF`"]
    problems = system_policy_problems()
    for e in entries:
        now = _describe(Path(e["path"]))
        if e.get("sha256") is not None and now["sha256"] != e["sha256"]:
            was, is_now = e["sha256"][:12], (now["sha256"] or "missing")[:12]
            problems.append(f"the allowed-signers file {e['path']} changed since the inspection was made (sha256 "
                            f"{was} → {is_now}; principals then: {', '.join(e.get('principals') or []) or 'none'}): "
                            "the review is bound to the signers it was recorded with; restore the file, or re-run "
                            "`grpo-rlvr inspect BRIEF --force`, review and sign again")
    return _unique([*(e["path"] for e in entries), *policy_files(brief)]), problems


def recorded_required(manifest: dict) -> bool:
    rec = manifest.get("signing")
    return isinstance(rec, dict) and rec.get("required") is True


def _writable(p: str) -> bool:
    return os.access(p, os.W_OK) or os.access(os.path.dirname(p), os.W_OK)


def ssh_keygen() -> str:
    """The absolute path of the system's ssh-keygen (:data:`SSH_KEYGEN_PATHS`); PATH is not searched."""
    root = os.getuid() == 0
    for p in SSH_KEYGEN_PATHS:
        if os.path.isfile(p) and os.access(p, os.X_OK) and (root or not _writable(p)):
            return p
    raise ReviewError(f"signed reviews need OpenSSH's ssh-keygen at one of {', '.join(SSH_KEYGEN_PATHS)} (not "
                      "writable by you; PATH is not searched); install openssh-client")
