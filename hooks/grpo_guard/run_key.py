"""The run key (``~/.local/share/grpo-rlvr/run-key``) signs the records that prove a run passed the gate: no tool
call names it or its folder, reads included, and no command reads a folder above it whole (``grep -r .
~/.local/share``, ``rg``, ``cp -r ~/.local``, ``tar c ~``, ``find ~ | xargs cat``), nor does the Grep tool search
one."""

from __future__ import annotations

import os

from grpo_guard.paths import fragments, inside, resolve
from grpo_guard.programs import NAMES_ONLY, reads_recursively
from grpo_guard.protected import RUN_KEY_WORD, run_key_dirs
from grpo_guard.shell_words import SUBST, Reading, program, unwrap
from grpo_guard.shell_writes import find_commands

RUN_KEY = ("this {tool} call {how} grpo-rlvr's run key ({key}/run-key), which signs the records that prove a run "
           "passed the gate (output/provenance.json, checkpoints.json); the agent neither reads nor writes it, and "
           "nothing but grpo-rlvr itself needs it (`grpo-rlvr train`, `grpo-rlvr diagnose`).")


def names_run_key(text: str, cwds, reading: Reading | None = None) -> bool:
    """``text`` (a command, or a tool's path argument) names the run key or its folder, however spelled."""
    if RUN_KEY_WORD.search(text):
        return True
    words = [text.strip("'\"")]
    if reading is not None:
        words += [f for w in reading.words() for f in fragments(w)]
        words += [w for w in reading.words() if RUN_KEY_WORD.search(w)]
        cwds = list(reading.cwds) or list(cwds)
    keys = run_key_dirs()
    return any(inside(p, keys) for w in dict.fromkeys(words) for c in cwds for p in resolve(w, c))


def _above_key(path: str, hidden_skipped: bool) -> bool:
    """``path`` is a folder above the run key's, and a walk from it reaches the key (a walk that skips hidden
    folders does not, when a ``.``-folder is on the way)."""
    for key in run_key_dirs():
        if path != key and inside(key, [path]):
            below = os.path.relpath(key, path).split(os.sep)
            if not (hidden_skipped and any(part.startswith(".") for part in below)):
                return True
    return False


def reaches_run_key(reading: Reading) -> str | None:
    """How the command reads the run key through a folder above it, or None."""
    cmds = reading.all_commands()
    cwds = reading.cwds or [os.getcwd()]
    for cmd in cmds:
        words = unwrap(cmd.words)
        roots = reads_recursively(words)
        if not roots:
            continue
        hidden_skipped = roots[0] == "!hidden"
        for root in roots[1:] if hidden_skipped else roots:
            for c in cmd.cwds or cwds:
                if any(_above_key(p, hidden_skipped) for p in resolve(root, c)):
                    return f"reads {root} whole with `{program(words)}`, and the key is below it"
    named = [w for w in dict.fromkeys(f for w in reading.words() for f in fragments(w))
             if any(_above_key(p, False) for c in cwds for p in resolve(w, c))]
    if not named:
        return None
    for cmd in cmds:
        words = unwrap(cmd.words)
        name = program(words)
        feeds = name == "xargs" or (name == "find" and any(program(r) not in NAMES_ONLY for r in
                                                            find_commands(words[1:])[1]))
        if feeds or (name not in NAMES_ONLY and any(SUBST in w for w in words[1:])):
            return f"names {named[0]}, above the key, and `{name}` reads files found at run time"
    return None


def grep_tool_reaches_key(path: str | None, cwd: str | None) -> bool:
    """The Grep tool searching ``path`` (its working folder when none) would read the key."""
    return any(_above_key(p, False) or inside(p, run_key_dirs()) for p in resolve(path or ".", cwd))
