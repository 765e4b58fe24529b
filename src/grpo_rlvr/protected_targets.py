"""What no grpo-rlvr command writes over, whoever runs it: the trust anchors, a person's review, a run's records.

Every command that writes takes its target from the command line (``inspect --out``, ``merge --out``,
``diagnose --apply`` and ``--out``, ``preflight --filter``, ``render --out``, ``demo --workdir``), so a target is
input to judge, not a place to trust. Two layers:

- :func:`refuse_anchor` (called by every write, replace and move in ``files.py``): nothing is written in, at or
  above an *anchor*: the folders that hold the signed-review policy (``/etc/grpo-rlvr``, the account's
  ``~/.config/grpo-rlvr`` from the password database, ``$XDG_CONFIG_HOME/grpo-rlvr``), the run key's folder
  (``~/.local/share/grpo-rlvr``) and the content-hash cache (``<grpo-rlvr cache>/file-hashes``). grpo-rlvr's own
  writers there (the run key, the hash cache) do not go through ``files.py``. A folder is never replaced while it
  holds, at any depth, an inspection with verdicts or a run's records (:func:`refuse_replacing`).
- :func:`refuse_target` (called by each command on the target it was given): not inside an inspection (a folder
  holding ``manifest.json`` and ``samples.jsonl``), not one of a run's rendered files or records, with the one
  exception the command names (``inspect`` writes its own inspection, ``render`` its own run folder).

Each refusal is bad input (exit 2) that names the target, what it would have replaced and the fix.
Paths are compared resolved (symlinks followed) and as written, so a link to ``~/.config`` is the same folder.
"""

from __future__ import annotations

import os
import pwd
from pathlib import Path

from grpo_rlvr.errors import ConfigError

# The system's signed-review policy: root's folder, which docs/threat-model.md asks the person to create.
SYSTEM_POLICY = Path("/etc/grpo-rlvr") / "allowed_signers"
INSPECTION_FILES = ("manifest.json", "samples.jsonl")
RUN_FILES = ("train.py", "grpo_config.yaml", "brief.lock.json", "launch.sh", "accelerate.yaml", "slurm.sh")
RUN_RECORDS = ("checkpoints.json", "provenance.json")
WALK_LIMIT = 200_000   # entries looked at below a folder about to be replaced; past it the folder is refused


def account_home() -> Path:
    """This user's home as the password database has it (``$HOME`` is not read)."""
    return Path(pwd.getpwuid(os.getuid()).pw_dir)


def anchors() -> dict[Path, str]:
    """``folder -> what it holds`` for every anchor (see the module docstring)."""
    from grpo_rlvr.user_cache import cache_root

    home = account_home()
    found = {SYSTEM_POLICY.parent: "the system's allowed signers of signed reviews",
             home / ".config" / "grpo-rlvr": "the allowed signers of signed reviews",
             home / ".local" / "share" / "grpo-rlvr": "the run key that signs a run's records",
             cache_root() / "file-hashes": "the content hashes the gate trusts"}
    xdg = os.environ.get("XDG_CONFIG_HOME")
    if xdg:
        found[Path(xdg) / "grpo-rlvr"] = "allowed signers of signed reviews"
    return found


def _forms(path: Path) -> set[Path]:
    path = Path(os.path.abspath(Path(path).expanduser()))
    return {path, path.resolve()}


def _above_or_in(target: Path, folder: Path) -> str | None:
    """How ``target`` relates to ``folder``: 'at', 'inside', 'above', or None."""
    for t in _forms(target):
        for f in _forms(folder):
            if t == f:
                return "at"
            if f in t.parents:
                return "inside"
            if t in f.parents:
                return "above"
    return None


def refuse_anchor(target: Path, action: str = "write") -> None:
    """Refuse any ``action`` (write, replace, move) in, at or above an anchor.

    Raises:
        ConfigError: naming the target, the anchor and what it holds.
    """
    for folder, holds in anchors().items():
        where = _above_or_in(Path(target), folder)
        if where:
            said = {"at": "is", "inside": "is inside", "above": "is a folder above"}[where]
            raise ConfigError(f"{target}: grpo-rlvr does not {action} it: it {said} {folder}, which holds {holds}, "
                              "and no grpo-rlvr command writes there or above it; choose a folder of your own (a "
                              "new one under your project)")


def is_inspection(folder: Path) -> bool:
    """A folder ``grpo-rlvr inspect`` wrote (whatever its name): it holds both of an inspection's files."""
    return all((Path(folder) / n).is_file() for n in INSPECTION_FILES)


def holds_verdicts(folder: Path) -> bool:
    """An inspection folder whose samples carry a verdict (a person's review, or part of one)."""
    import json

    try:
        with open(Path(folder) / "samples.jsonl", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                try:
                    row = json.loads(line)
                except ValueError:
                    return True   # a line that is not a sample: judged as a review, not replaced
                if isinstance(row, dict) and row.get("verdict"):
                    return True
    except OSError:
        return False
    return False


def _run_file(path: Path) -> str | None:
    if path.name in RUN_RECORDS:
        return f"a run's record ({path.name}, written only by `grpo-rlvr train`)"
    if path.name in RUN_FILES and (path.parent / "brief.lock.json").is_file():
        return f"a run's rendered file ({path.name} beside brief.lock.json, written only by `grpo-rlvr render`)"
    return None


def refuse_target(target, option: str, own: str | None = None, replaces: bool = False) -> Path:
    """Refuse a command's output ``target`` (given as ``option``) that is an anchor, inside an inspection, or one
    of a run's rendered files or records. ``own``: what the command itself writes there and may replace
    (``"inspection"``: the target may be an inspection folder; ``"run"``: it may be a run folder). ``replaces``:
    the command replaces the whole folder, so what it holds is checked too (:func:`refuse_replacing`), before any
    work is done.

    Returns:
        The target as a Path.
    Raises:
        ConfigError: naming the target, what it would replace and the fix.
    """
    path = Path(target).expanduser()
    refuse_anchor(path)
    fix = "choose another path (a new folder under your project)"
    for p in sorted(_forms(path)):
        inside = [d for d in (p, *p.parents) if is_inspection(d) and not (own == "inspection" and d == p)]
        if inside:
            raise ConfigError(f"{option} {target}: {'is' if inside[0] == p else 'is inside'} the inspection "
                              f"{inside[0]} (a person's review is written only by `grpo-rlvr inspect` and `grpo-rlvr "
                              f"review`); {fix}")
        record = _run_file(p)
        if record and not (own == "run" and p.name in RUN_FILES):
            raise ConfigError(f"{option} {target}: is {record}; {fix}")
    if replaces:
        refuse_replacing(path, below_only=own == "inspection")
    return path


def refuse_replacing(folder: Path, below_only: bool = False) -> None:
    """Refuse replacing or moving ``folder`` when it holds, at any depth, an anchor, an inspection with verdicts or
    a run's records (an inspection without verdicts is the caller's to replace). ``below_only``: the folder itself
    is not judged, only what is under it (``inspect`` judges its own folder's verdicts: ``--force``).

    Raises:
        ConfigError: naming what it holds.
    """
    folder = Path(folder)
    refuse_anchor(folder, "replace")
    if not folder.is_dir():
        return
    seen = 0
    for dirpath, dirs, files in os.walk(folder):
        seen += len(dirs) + len(files)
        here = Path(dirpath)
        if below_only and here == folder:
            continue
        if "samples.jsonl" in files and "manifest.json" in files and holds_verdicts(here):
            raise ConfigError(f"{folder}: not replaced: it holds the reviewed inspection {here} (a person's "
                              "verdicts); move that review out of it first, or choose another folder")
        found = [n for n in files if n in RUN_RECORDS]
        if found:
            raise ConfigError(f"{folder}: not replaced: it holds a run's records ({here / found[0]}, written only "
                              "by `grpo-rlvr train`); choose another folder")
        if seen > WALK_LIMIT:
            raise ConfigError(f"{folder}: not replaced: it holds more than {WALK_LIMIT:,} files and folders, too "
                              "many to check for a review or a run's records; choose a new or smaller folder")
