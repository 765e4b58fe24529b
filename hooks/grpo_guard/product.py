"""grpo-rlvr's own commands, as the hook sees them: every subcommand but ``review`` runs (a test checks this list
against the CLI's), ``review`` never does, and what a subcommand writes (``--out``, ``--apply``, ``--filter``) is
judged like any write, with each subcommand's own job left to it: ``inspect`` writes an inspection, ``render`` a
run folder."""

from __future__ import annotations

import re

from grpo_guard.paths import inside, resolve
from grpo_guard.programs import Args
from grpo_guard.protected import LIBRARY_DIRS, anchors, guarded, holds_protected, launch_path
from grpo_guard.shell_words import Cmd

PROGRAMS = re.compile(r"(?:^|/)(?:grpo-rlvr|grpo-rlvr-plugin|grpo_rlvr)$")
PRODUCT_SUBCOMMANDS = {"inspect", "gate", "render", "validate", "score", "preflight", "train", "diagnose", "watch", "report",
                       "memory", "demo", "merge"}
# The options of each subcommand that name what it writes, and whether it writes there as a folder.
WRITE_OPTIONS = {"inspect": {"--out": "folder"}, "render": {"--out": "folder"}, "merge": {"--out": "folder"},
                 "diagnose": {"--out": "folder", "--apply": "file"}, "preflight": {"--filter": "file"}}
_VALUED = {"--out", "--apply", "--filter", "--brief", "--inspection", "--input", "--reward", "--option", "--role",
           "--samples", "--prompts", "--k", "--keep-share", "--reviewer", "--sign", "--max-steps", "--interval",
           "--timeout", "--size", "--method", "--gpu", "--num-gpus", "--sharding", "--vllm-mode", "--task",
           "--steps", "--warmup-steps", "--seed", "--eval-samples", "--completion-length", "--prompt-length",
           "--batch-size"}


def product_call(words: list[str]) -> tuple[str, list[str]] | None:
    """(subcommand, its arguments) when ``words`` run grpo-rlvr (``grpo-rlvr``, the plugin's wrapper,
    ``python -m grpo_rlvr``), else None. The subcommand is ``""`` when there is none (``--help``)."""
    if not words:
        return None
    start = None
    if PROGRAMS.search(words[0]):
        start = 1
    else:
        for i, w in enumerate(words[:-1]):
            if w == "-m" and words[i + 1] in ("grpo_rlvr", "grpo_rlvr.cli"):
                start = i + 2
                break
    if start is None:
        return None
    rest = words[start:]
    while rest and rest[0] in ("-v", "--verbose", "--plugin-where"):
        rest = rest[1:]
    if not rest or rest[0].startswith("-"):
        return "", rest
    return rest[0], rest[1:]


def runs_review(command: str, commands: list[Cmd]) -> bool:
    """The command runs ``grpo-rlvr review`` however it is reached, or imports ``grpo_rlvr.review``."""
    if re.search(r"grpo_rlvr\s*\.\s*review\b|from\s+grpo_rlvr\s+import\s+[^\n;]*\breview\b", command):
        return True
    for cmd in commands:
        for i in range(len(cmd.words)):
            call = product_call(cmd.words[i:])
            if call and call[0] == "review":
                return True
    # a name hidden in a variable or assembled at run time: refuse when both parts appear in one command
    words = [w for c in commands for w in c.words]
    return any(re.search(r"grpo[-_]rlvr", w) for w in words + [command]) and "review" in words


def product_refusal(sub: str) -> str | None:
    """Why this grpo-rlvr subcommand does not run near a protected path (``review``, or one the hook does not
    know), or None."""
    return None if sub == "" or sub in PRODUCT_SUBCOMMANDS else f"`grpo-rlvr {sub}`"


def product_write(sub: str, args: list[str], cwds) -> str | None:
    """The protected path a grpo-rlvr subcommand would write through its options, or None. ``inspect`` may write
    an inspection and ``render`` a run folder (their job); none may write into grpo-rlvr's own files, the
    policy, the run key's folder, a folder above them, or what the hook runs under."""
    a = Args(args, _VALUED)
    for option, kind in WRITE_OPTIONS.get(sub, {}).items():
        for value in a.values.get(option, []):
            for c in cwds:
                why = _target_refusal(sub, value, kind, c)
                if why:
                    return f"{value} ({why})"
    return None


def _target_refusal(sub: str, value: str, kind: str, cwd: str) -> str | None:
    paths = resolve(value, cwd) or [value]
    if any(inside(p, anchors()) or any(a != p and inside(a, [p]) for a in anchors()) for p in paths):
        return "grpo-rlvr's own files, the signed-review policy or the run key's folder, or a folder above them"
    if any(launch_path(p) for p in paths):
        return "a program the hook runs under"
    if (sub == "inspect" or sub == "render") and kind == "folder":   # their own job: an inspection, a run folder
        libraries = any(part in LIBRARY_DIRS for p in paths for part in p.split("/"))
        return "an installed library" if libraries else None
    if guarded(value, cwd) or (kind == "folder" and holds_protected(value, cwd)):
        return "an inspection, a run's files or records, or a folder that holds one"
    return None
