#!/usr/bin/env python3
"""PreToolUse hook of the grpo-rlvr plugin: the agent never stands in for the person who reviews.

Claude Code sends the tool call as JSON on stdin (``tool_name``, ``tool_input``). This hook denies (exit 2,
the reason on stderr, which Claude Code shows to the agent):

- running ``grpo-rlvr review`` in a Bash command, however it is reached: ``grpo-rlvr``, the plugin's
  ``grpo-rlvr-plugin`` wrapper, ``python -m grpo_rlvr``, a path to either, behind ``env``, ``sh -c '...'``,
  ``$(...)``, ``nohup``, ``script`` and the like, or importing ``grpo_rlvr.review``;
- writing, editing, moving or deleting files under a folder named ``inspection`` (or an ``inspection.bak-*``
  backup): the Write, Edit, MultiEdit and NotebookEdit tools, and Bash redirections (``>``, ``>>``), ``tee``,
  ``cp``, ``mv``, ``rm``, ``sed -i``, ``dd of=``, ``truncate``, ``touch``, ``ln``, ``install``, ``rsync``
  and ``chmod`` naming such a path;
- editing a run's ``brief.lock.json`` (the hashes that let train.py detect edited rendered files).

Everything else is allowed (exit 0, no output), including ``grpo-rlvr gate``, ``inspect`` (which writes the
inspection itself) and reading inspection files. Input that is not a tool call it understands is allowed.

Limits: a shell command is parsed as words, not executed. A program the agent writes and runs (a Python
script that opens samples.jsonl, a name assembled at run time) is beyond what a command filter can see;
the gate's checks (terminal-only review, reading times, digests) are the layer behind this one.
Standard library only: the hook runs before the grpo-rlvr package may be installed.
"""

from __future__ import annotations

import json
import re
import shlex
import sys

PROGRAMS = re.compile(r"(?:^|/)(?:grpo-rlvr|grpo-rlvr-plugin|grpo_rlvr)$")
PROTECTED_DIR = re.compile(r"^inspection(?:\.bak-[^/]*)?$")
WRITERS = {"tee", "cp", "mv", "rm", "dd", "truncate", "touch", "ln", "install", "rsync", "chmod", "unlink",
           "shred", "rmdir", "sed", "perl", "patch"}
COPIERS = {"cp", "install", "rsync", "ln"}
SEPARATORS = {";", "&&", "||", "|", "&", "(", ")", "{", "}", "\n", "!"}


def protected_path(path: str) -> bool:
    """A path with a folder component named inspection (or inspection.bak-*), or a brief.lock.json file."""
    parts = [p for p in str(path).strip("'\"").split("/") if p]
    return any(PROTECTED_DIR.match(p) for p in parts[:-1]) or (bool(parts) and (
        PROTECTED_DIR.match(parts[-1]) is not None or parts[-1] == "brief.lock.json"))


def _words(command: str) -> list[str]:
    """Shell words with quotes removed; nested ``sh -c '...'`` / ``$(...)`` / backticks are split again."""
    text = command.replace("`", " ` ").replace("$(", " $( ")
    try:
        lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|()<>")
        lexer.whitespace_split = True
        lexer.commenters = ""
        words = list(lexer)
    except ValueError:   # unbalanced quotes: fall back to plain splitting, still looking at every word
        words = re.split(r"[\s;&|()<>]+", text)
    out = []
    for w in words:
        if any(c.isspace() for c in w) and w.strip():  # a quoted script: look inside it too
            out.extend(["&&", *_words(w), "&&"])
        else:
            out.append(w)
    return out


def _segments(words: list[str]) -> list[list[str]]:
    segs, cur = [], []
    for w in words:
        if w in SEPARATORS or w in ("`", "$("):
            if cur:
                segs.append(cur)
            cur = []
        else:
            cur.append(w)
    if cur:
        segs.append(cur)
    return segs


def runs_review(command: str) -> bool:
    if re.search(r"grpo_rlvr\s*\.\s*review\b|from\s+grpo_rlvr\s+import\s+[^\n;]*\breview\b", command):
        return True
    for seg in _segments(_words(command)):
        for i, w in enumerate(seg):
            name = w
            if name in ("-m",) and i + 1 < len(seg):
                continue
            if PROGRAMS.search(name) or (i > 0 and seg[i - 1] == "-m" and name in ("grpo_rlvr", "grpo_rlvr.cli")):
                rest = [x for x in seg[i + 1:] if not x.startswith("-")]
                if rest and rest[0] == "review":
                    return True
    # a name hidden in a variable or assembled at run time: refuse when both parts appear in one command
    words = _words(command)
    return any(re.search(r"grpo[-_]rlvr", w) for w in words) and "review" in words


def writes_protected(command: str) -> str | None:
    words = _words(command)
    for i, w in enumerate(words):
        if w in (">", ">>", ">|", "&>", "&>>") and i + 1 < len(words) and protected_path(words[i + 1]):
            return words[i + 1]
        m = re.match(r"^\d*>>?\|?(.+)$", w)
        if m and protected_path(m.group(1)):
            return m.group(1)
    for seg in _segments(words):
        prog = seg[0].rsplit("/", 1)[-1] if seg else ""
        if prog in ("sudo", "env", "command", "nohup", "exec", "xargs", "time") and len(seg) > 1:
            seg = [x for x in seg[1:] if "=" not in x or x.startswith("of=")]
            prog = seg[0].rsplit("/", 1)[-1] if seg else ""
        if prog not in WRITERS:
            continue
        if prog in ("sed", "perl") and not any(a.startswith("--in-place") or (
                a.startswith("-") and not a.startswith("--") and "i" in a[1:].split("=")[0]) for a in seg[1:]):
            continue
        args = seg[1:]
        if prog in COPIERS:  # reading a source is fine; the destination is the last operand or -t DIR
            operands = [a for a in args if not a.startswith("-")]
            tdir = [args[k + 1] for k, a in enumerate(args[:-1]) if a in ("-t", "--target-directory")]
            args = tdir + ([operands[-1]] if operands else []) + [a.split("=", 1)[1] for a in args
                                                                  if a.startswith("--target-directory=")]
        for a in args:
            target = a[3:] if a.startswith("of=") else a
            if protected_path(target):
                return target
    return None


def decide(event: dict) -> str | None:
    """The reason to deny this tool call, or None to allow it."""
    tool = event.get("tool_name")
    args = event.get("tool_input") or {}
    if not isinstance(args, dict):
        return None
    if tool in ("Write", "Edit", "MultiEdit", "NotebookEdit"):
        path = args.get("file_path") or args.get("notebook_path") or ""
        if protected_path(path):
            return (f"{path}: files under inspection/ hold the person's review, and brief.lock.json the render's "
                    "hashes; the agent does not write them. Ask the user to run `grpo-rlvr review DIR` in their "
                    "own terminal, or re-run `grpo-rlvr inspect` / `grpo-rlvr render`.")
    if tool == "Bash":
        command = str(args.get("command") or "")
        if runs_review(command):
            return ("`grpo-rlvr review` records a person's verdicts; the agent never runs it. Ask the user to run "
                    "`grpo-rlvr review DIR` in their own terminal and wait until they say it is done.")
        target = writes_protected(command)
        if target:
            return (f"this command writes {target}: files under inspection/ (and brief.lock.json) are written only "
                    "by grpo-rlvr itself; the agent does not edit, move or delete them.")
    return None


def main() -> int:
    try:
        event = json.loads(sys.stdin.read() or "{}")
    except json.JSONDecodeError:
        return 0
    reason = decide(event) if isinstance(event, dict) else None
    if reason:
        print(f"grpo-rlvr plugin: denied. {reason}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
