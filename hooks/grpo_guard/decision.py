"""The decision: what to deny for one tool call, and why, in words the agent reads.

A shell command is read once (``bash_reading``) and judged in order: running ``review``; setting a variable that
loads code into grpo-rlvr's checks; a known writer aimed at a protected path (``shell_writes``); anything but a
reader near a protected path or naming a folder above one (``readers``); and last, a command the hook could not
read (a value set at run time, a part that does not parse) near a protected path. Without the parser the hook
fails closed: a command that names anything protected is denied, and says how to install the parser.
"""

from __future__ import annotations

import json
import os
import re
import sys

from grpo_guard.bash_reading import ParserUnavailable, Reading, read_command
from grpo_guard.protected import (
    PROTECTED_WORD,
    RUN_KEY_WORD,
    _fragments,
    _inside,
    _run_key_dirs,
    about_to_hold,
    above_protected,
    protected_path,
    resolve,
)
from grpo_guard.readers import PROGRAMS, READ_HINT, read_only_refusal, touched_path
from grpo_guard.shell_writes import writes_protected

# Each can load code into grpo-rlvr's checks; GRPO_RLVR_CACHE would point them at hashes the agent wrote.
# The clean check starts from its own allowed environment whatever is set; these reach train.py's own process.
ENV_NAMES = ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONUSERBASE", "LD_[A-Z_]+", "OPENSSL_CONF",
             "OPENSSL_MODULES", "OPENSSL_ENGINES", "GCONV_PATH", "GRPO_RLVR_CACHE")
_ENV = "|".join(ENV_NAMES)
SETS_ENV = re.compile(rf"(?<![$\w{{])(?:{_ENV})(?:\s*\+?=(?!=)|['\"]\s*\]\s*=)|\b(?:export|setenv|declare\s+-x|typeset\s+-x)"
                      rf"\b[^;&|\n]*\b(?:{_ENV})\b|(?:putenv|setdefault|update)\(\s*['\"]?(?:{_ENV})")
WRITE_VERB = re.compile(r"(write|edit|create|move|rename|delete|remove|copy|upload|save|put|patch|apply|append|"
                        r"insert|replace|update|mkdir|touch|chmod|truncate)", re.IGNORECASE)
READ_ONLY_TOOLS = {"Read", "Glob", "Grep", "LS", "NotebookRead", "WebFetch", "WebSearch", "TodoWrite", "Task",
                   "BashOutput", "ExitPlanMode"}


def _cwds(segs: list[list[str]], cwd: str) -> list[str]:
    """The folder the command starts in and each one it ``cd``s into: a relative name may be resolved from any."""
    cwds = [cwd]
    for seg in segs:
        if seg and seg[0] in ("cd", "pushd") and len(seg) > 1:
            cwds.append(os.path.realpath(os.path.join(cwds[-1], os.path.expanduser(seg[1]))))
    return cwds


def names_run_key(text: str, cwd: str | None, reading: Reading | None = None) -> bool:
    """``text`` (a command, or a tool's path argument) names the run key or its folder, however spelled."""
    if RUN_KEY_WORD.search(text):
        return True
    segs = reading.segments + reading.nested if reading is not None else [text.split()]
    words = [text.strip("'\""), *(f for seg in segs for w in seg for f in _fragments(w))]
    if reading is not None:
        words += [w for w in (x for seg in segs for x in seg) if RUN_KEY_WORD.search(w)]
    cwds = _cwds(segs, cwd or os.getcwd())
    return any(w and len(w) < 4096 and _inside(p, _run_key_dirs()) for w in words for c in cwds for p in resolve(w, c))


def runs_review(command: str, reading: Reading) -> bool:
    if re.search(r"grpo_rlvr\s*\.\s*review\b|from\s+grpo_rlvr\s+import\s+[^\n;]*\breview\b", command):
        return True
    segs = reading.segments + reading.nested
    for seg in segs:
        for i, name in enumerate(seg):
            if PROGRAMS.search(name) or (i > 0 and seg[i - 1] == "-m" and name in ("grpo_rlvr", "grpo_rlvr.cli")):
                rest = [x for x in seg[i + 1:] if not x.startswith("-")]
                if rest and rest[0] == "review":
                    return True
    # a name hidden in a variable or assembled at run time: refuse when both parts appear in one command
    words = [w for seg in segs for w in seg]
    return any(re.search(r"grpo[-_]rlvr", w) for w in words + [command]) and "review" in words


def _path_values(value, key: str = "") -> list[str]:
    """Every string in an MCP tool's arguments that names a path."""
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _path_values(v, k)]
    if isinstance(value, list):
        return [p for v in value for p in _path_values(v, key)]
    if isinstance(value, str) and ("/" in value or re.search(r"path|file|dest|target|source|dir|name|to|from",
                                                             key, re.IGNORECASE)) and "\n" not in value:
        return [value]
    return []


DENY_WRITE = ("files under inspection/ hold the person's review, a run folder's rendered files (train.py, "
              "grpo_config.yaml, launch.sh, accelerate.yaml, brief.lock.json) and records (output/checkpoints.json, "
              "output/provenance.json) are written only by `grpo-rlvr render` and `grpo-rlvr train`, and "
              "startup hooks (sitecustomize, usercustomize, .pth), the installed grpo-rlvr, this plugin and its hash "
              "cache decide what the gate checks; the agent does not write them. Ask the user to run `grpo-rlvr "
              "review DIR` in their own terminal, or re-run `grpo-rlvr inspect` / `grpo-rlvr render`, and start or "
              "continue a run with `grpo-rlvr train RUN [--resume]`.")


REVIEW = ("`grpo-rlvr review` records a person's verdicts; the agent never runs it. Ask the user to run `grpo-rlvr "
          "review DIR` in their own terminal and wait until they say it is done.")


def _without_parser(command: str, cwd: str, error: str) -> str | None:
    """Fail closed: without bash's grammar the hook denies any command that names something protected."""
    words = [f for w in command.split() for f in _fragments(w.strip("'\"$();&|<>`"))]
    hidden = re.search(r"[$`\\]", command)   # quoting, escapes, variables and substitutions can spell any name
    near = hidden or PROTECTED_WORD.search(command) or re.search(r"grpo[-_]rlvr|review", command) or any(
        protected_path(w, cwd) or above_protected(w, cwd) for w in words)
    if not near:
        return None
    return (f"this command comes near a protected path, and the hook cannot read it as bash does: its parser is not "
            f"importable by {sys.executable} ({error}). Install it into the plugin's environment (it comes with "
            "grpo-rlvr: `grpo-rlvr-plugin --plugin-where` shows where), or `python3 -m pip install --user "
            "tree-sitter==0.26.1 tree-sitter-bash==0.25.1`; until then only commands that stay away from an "
            f"inspection, a run's files and records and grpo-rlvr's own files run. {READ_HINT}")


def _shell(command: str, cwd: str) -> str | None:
    try:
        reading = read_command(command, cwd)
    except ParserUnavailable as e:
        return _without_parser(command, cwd, str(e))
    if runs_review(command, reading):
        return REVIEW
    env = SETS_ENV.search(command)
    if env:
        return (f"this command sets {env.group(0).strip()[:60]!r}: PYTHONPATH, PYTHONSTARTUP, PYTHONHOME, "
                "PYTHONUSERBASE, the dynamic loader's LD_* (LD_PRELOAD, LD_LIBRARY_PATH…), OPENSSL_CONF and GCONV_PATH can "
                "load code into training, and "
                "GRPO_RLVR_CACHE chooses the hashes they trust, so the agent does not set them; run the command "
                "without it.")
    target = writes_protected(command, reading, cwd)
    if target:
        return (f"this command writes {target}: files under inspection/ (and a run folder's rendered files and "
                "records, startup hooks, the installed libraries) are written only by grpo-rlvr itself (`grpo-rlvr "
                "inspect`, `render`, `train RUN [--resume]`) or pip; the agent does not edit, move or delete them.")
    refused = read_only_refusal(command, reading, cwd)
    if refused:
        return refused
    if reading.unreadable:
        near = touched_path(command, reading, cwd)
        if near:
            return (f"this command comes near {near} and the hook cannot read all of it as bash would: "
                    f"{'; '.join(reading.unreadable[:3])}. Spell the paths and values out in the command. {READ_HINT}")
    return None


def _strings(value) -> str:
    if isinstance(value, dict):
        return "\n".join(_strings(v) for v in value.values())
    if isinstance(value, list):
        return "\n".join(_strings(v) for v in value)
    return value if isinstance(value, str) else ""


def _guarded_path(path: str, cwd: str | None, content: str) -> bool:
    """A protected path, or an inspection file in a folder about to hold an inspection."""
    return protected_path(path, cwd) or any(about_to_hold(p, None, content) for p in resolve(str(path).strip("'\""), cwd))


# MCP tools whose name says they only read (read_file, list_directory, search_files…).
READ_ONLY_MCP = re.compile(r"^(?:read|list|get|search|view|show|find|stat|describe|directory_tree|tree)(?:_|$)",
                           re.IGNORECASE)


def _reading(command: str, cwd: str | None) -> Reading | None:
    try:
        return read_command(command, cwd)
    except ParserUnavailable:
        return None


def decide(event: dict) -> str | None:
    """The reason to deny this tool call, or None to allow it."""
    tool = str(event.get("tool_name") or "")
    args = event.get("tool_input") or {}
    cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
    if not isinstance(args, dict):
        return None
    named = [v for k, v in args.items() if isinstance(v, str) and k in ("command", "cmd", "script", "shell_command")]
    if any(names_run_key(v, cwd, _reading(v, cwd)) for v in named) or any(
            names_run_key(v, cwd) for v in _path_values(args)):   # reading it too: it signs the run records
        return (f"this {tool} call names grpo-rlvr's run key ({_run_key_dirs()[0]}/run-key), which signs the records "
                "that prove a run passed the gate (output/provenance.json, checkpoints.json); the agent neither reads "
                "nor writes it, and nothing but grpo-rlvr itself needs it (`grpo-rlvr train`, `grpo-rlvr diagnose`).")
    if tool in READ_ONLY_TOOLS:
        return None
    content = _strings({k: v for k, v in args.items() if k not in ("file_path", "notebook_path")})
    if tool in ("Write", "Edit", "MultiEdit", "NotebookEdit"):
        path = str(args.get("file_path") or args.get("notebook_path") or "")
        return f"{path}: {DENY_WRITE}" if path and _guarded_path(path, cwd, content) else None
    commands = ("command", "cmd", "script", "shell_command")
    for key in commands:
        if isinstance(args.get(key), str):
            reason = _shell(args[key], cwd or os.getcwd())
            if reason:
                return reason
    last = tool.rsplit("__", 1)[-1]
    if tool == "Bash" or (tool.startswith("mcp__") and READ_ONLY_MCP.match(last) and not WRITE_VERB.search(last)):
        return None
    # Any other tool (MCP, or one added later) is not known to only read: no path argument of it may be protected.
    for path in _path_values({k: v for k, v in args.items() if k not in (*commands, "description")}):
        if _guarded_path(path, cwd, content):
            return f"{tool} on {path}: {DENY_WRITE}"
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

