"""The draw: which rows an inspection samples, chosen with fresh randomness, and every earlier draw kept in view.

A seeded draw is known in advance: whoever can read the brief can compute the rows a person will read and shape
the others. So each ``inspect`` draws a new 63-bit seed from the operating system (``secrets``) and records it:
the rows, the sampling seed and the pick of samples all follow from it, so the gate can still check the pick.

Drawing again until the sample looks good ("fishing") is made visible, not impossible: each draw is appended to two
logs the new inspection carries and ``review`` and the report show:

- ``inspection/draws.jsonl`` in the folder: the draws made into this folder, carried from the folder a new
  inspection replaces (or moves aside with ``--force``), each with how many verdicts it held when it was replaced;
- ``draws.jsonl`` in grpo-rlvr's data folder of the account (``~/.local/share/grpo-rlvr``, the home taken from
  the password database): every draw for the brief's fingerprint, whichever folder it went to.

Limits: both are files of the account that runs ``inspect``; the plugin's hook keeps the agent from writing them,
a person can still delete them.
"""

from __future__ import annotations

import json
import secrets
import time
from pathlib import Path

from grpo_rlvr.jsonl import jsonl_lines
from grpo_rlvr.records.run_key import home_from_passwd

DRAWS = "draws.jsonl"


def read_log(path: Path) -> list[dict]:
    """A draws log; an unreadable line is kept as a draw that cannot be read (it still counts); none: []."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    out = []
    for _, line in jsonl_lines(text):
        try:
            row = json.loads(line)
        except ValueError:
            row = None
        out.append(row if isinstance(row, dict) else {"unreadable": line[:200]})
    return out


def account_log() -> Path:
    return home_from_passwd() / ".local" / "share" / "grpo-rlvr" / DRAWS


def earlier_in_folder(out: Path, verdicts: int) -> list[dict]:
    """The draws recorded in the inspection folder ``out`` (about to be replaced), the last one marked with how it
    ended (the verdicts it held); :func:`kept_as` adds where it was moved."""
    out = Path(out)
    earlier = read_log(out / DRAWS)
    if not earlier and (out / "manifest.json").is_file():   # an inspection made before draws were logged
        try:
            manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            manifest = {}
        earlier = [{"number": 1, "time": manifest.get("created") if isinstance(manifest, dict) else None,
                    "seed": None, "note": "an inspection made before draws were logged"}]
    if earlier:
        earlier[-1] = {**earlier[-1], "replaced": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                       "verdicts_when_replaced": verdicts}
    return earlier


def kept_as(earlier: list[dict], backup: Path | None) -> list[dict]:
    """``earlier`` with the folder the replaced inspection was moved to (``--force``) named on its last draw."""
    if not earlier or backup is None:
        return earlier
    return [*earlier[:-1], {**earlier[-1], "kept_as": str(backup)}]


def new_draw() -> dict:
    """A fresh draw: its seed from the operating system's randomness, and when."""
    return {"seed": secrets.randbits(63), "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def for_brief(fingerprint: str) -> list[dict]:
    """The draws the account log holds for a brief's fingerprint, oldest first."""
    return [d for d in read_log(account_log()) if d.get("brief") == fingerprint]


def record_draw(draw: dict, earlier: list[dict], out: Path, fingerprint: str, summary: dict) \
        -> tuple[dict, list[dict]]:
    """Number ``draw`` among the earlier ones and log it in the account's log.

    Args:
        draw: from :func:`new_draw`. earlier: the folder's earlier draws (:func:`earlier_in_folder`, read before the
            folder was replaced). out: the inspection folder being written. fingerprint: the brief's.
        summary: what this draw gave (samples, candidates, samples digest, outcomes), recorded with it.
    Returns:
        This draw as recorded (``number`` in the folder, ``of_brief`` on this account, the summary) and the
        folder's draws log to write with the new inspection (earlier draws, then this one).
    """
    folder = list(earlier)
    account = for_brief(fingerprint)
    this = {**draw, "number": len(folder) + 1, "of_brief": len(account) + 1, "folder": str(Path(out).resolve()),
            **summary}
    log = account_log()
    try:
        log.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with log.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"brief": fingerprint, **this}, ensure_ascii=False) + "\n")
    except OSError as e:   # said in the record, never silently
        this["account_log_error"] = f"{log}: {e.strerror or e}"
    return this, [*folder, this]


def earlier_for_brief(fingerprint: str, seed: int | None) -> list[dict]:
    """The account's draws for a brief other than the one with ``seed`` (what review and the report list)."""
    return [d for d in for_brief(fingerprint) if d.get("seed") != seed]
