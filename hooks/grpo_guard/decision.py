"""The decision: what to deny for one tool call, and why, in words the agent reads.

Any tool call that names the run key, or reads a folder above it whole, is denied. A shell command is read once
(``bash_reading``; ``bash_subset`` when tree-sitter-bash is missing) and judged in order: running ``review``;
setting a variable that loads code into grpo-rlvr's checks; a write aimed at a protected path (``shell_writes``,
``git_writes``, ``product``); anything but a reader near a protected path or naming a folder above one
(``readers``); and last what the hook could not read: a write whose target exists only at run time, code whose
text is made at run time, a value set at run time or a part that does not parse, each denied when anything
protected is near (named by the command, or in the tree of the folder it runs in).
"""

from __future__ import annotations

import os
import re

from grpo_guard.paths import resolve
from grpo_guard.product import product_call, product_write, runs_review
from grpo_guard.programs import reads_recursively
from grpo_guard.protected import about_to_hold, forget, launch_path, protected_below, protected_path
from grpo_guard.readers import READ_HINT, Near, read_only_refusal
from grpo_guard.run_key import RUN_KEY, grep_tool_reaches_key, names_run_key, reaches_run_key
from grpo_guard.shell_words import SUBST, Reading, program, unwrap
from grpo_guard.shell_writes import (
    Found,
    find_commands,
    inline_code_writes,
    judge_writes,
    writes_of_command,
    xargs_command,
)

# Each can load code into grpo-rlvr's checks; GRPO_RLVR_CACHE would point them at hashes the agent wrote.
# The clean check starts from its own allowed environment whatever is set; these reach train.py's own process.
ENV_NAMES = ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONUSERBASE", "LD_[A-Z_]+", "OPENSSL_CONF",
             "OPENSSL_MODULES", "OPENSSL_ENGINES", "GCONV_PATH", "GRPO_RLVR_CACHE")
_ENV = "|".join(ENV_NAMES)
SETS_ENV = re.compile(rf"(?<![$\w{{])(?:{_ENV})(?:\s*\+?=(?!=)|['\"]\s*\]\s*=)|\b(?:export|setenv|declare\s+-x|"
                      rf"typeset\s+-x)\b[^;&|\n]*\b(?:{_ENV})\b|(?:putenv|setdefault|update)\(\s*['\"]?(?:{_ENV})")
ENV_NAME = re.compile(rf"^(?:{_ENV})$")
WRITE_VERB = re.compile(r"(write|edit|create|move|rename|delete|remove|copy|upload|save|put|patch|apply|append|"
                        r"insert|replace|update|mkdir|touch|chmod|truncate)", re.IGNORECASE | re.ASCII)
READ_ONLY_TOOLS = {"Read", "Glob", "Grep", "LS", "NotebookRead", "WebFetch", "WebSearch", "TodoWrite", "Task",
                   "BashOutput", "ExitPlanMode", "KillShell", "KillBash", "ListMcpResourcesTool",
                   "ReadMcpResourceTool", "SlashCommand", "Skill", "AskUserQuestion"}
# MCP tools whose name says they only read (read_file, list_directory, search_files…).
READ_ONLY_MCP = re.compile(r"^(?:read|list|get|search|view|show|find|stat|describe|directory_tree|tree)(?:_|$)",
                           re.IGNORECASE | re.ASCII)   # tool names are ASCII (Claude's API); ASCII folding compiles fast
COMMAND_KEYS = ("command", "cmd", "script", "shell_command")
MAX_NAMES = 4000   # distinct words of one command checked as paths (each is resolved on disk)

DENY_WRITE = ("files under inspection/ hold the person's review, a run folder's rendered files (train.py, "
              "grpo_config.yaml, launch.sh, accelerate.yaml, brief.lock.json) and records (output/checkpoints.json, "
              "output/provenance.json) are written only by `grpo-rlvr render` and `grpo-rlvr train`, and "
              "startup hooks (sitecustomize, usercustomize, .pth), the installed grpo-rlvr, this plugin, the Python "
              "its hook runs under, its hash cache and Claude Code's settings decide what the gate checks; the agent "
              "does not write them. Ask the user to run `grpo-rlvr review DIR` in their own terminal, or re-run "
              "`grpo-rlvr inspect` / `grpo-rlvr render`, and start or continue a run with `grpo-rlvr train RUN "
              "[--resume]`.")
WRITES = ("this command writes {target}: files under inspection/ (and a run folder's rendered files and records, "
          "startup hooks, the installed libraries, this plugin and the Python its hook runs under, Claude Code's "
          "settings) are written only by grpo-rlvr itself (`grpo-rlvr inspect`, `render`, `train RUN [--resume]`) "
          "or pip; the agent does not edit, move or delete them.")
REVIEW = ("`grpo-rlvr review` records a person's verdicts; the agent never runs it. Ask the user to run `grpo-rlvr "
          "review DIR` in their own terminal and wait until they say it is done.")
ENV = ("this command sets {name!r}: PYTHONPATH, PYTHONSTARTUP, PYTHONHOME, PYTHONUSERBASE, the dynamic loader's "
       "LD_* (LD_PRELOAD, LD_LIBRARY_PATH…), OPENSSL_CONF and GCONV_PATH can load code into training, and "
       "GRPO_RLVR_CACHE chooses the hashes they trust, so the agent does not set them; run the command without it.")
NO_PARSER = ("The hook reads bash with tree-sitter-bash, which {python} cannot import ({error}); install it where "
             "the hook runs (it comes with grpo-rlvr: `grpo-rlvr-plugin --plugin-where` shows that environment, "
             "or `python3 -m pip install --user tree-sitter==0.26.1 tree-sitter-bash==0.25.1`).")


# ------------------------------------------------------------------------------------------------ reading


def read(command: str, cwd: str) -> tuple[Reading, str | None]:
    """(the command read as bash reads it, why the parser is missing or None)."""
    from grpo_guard.bash_reading import ParserUnavailable, read_command

    try:
        return read_command(command, cwd), None
    except ParserUnavailable as e:
        from grpo_guard.bash_subset import read_subset

        return read_subset(command, cwd), str(e)


def sets_env(command: str, reading: Reading) -> str | None:
    """The variable of ENV_NAMES the command sets (an assignment, ``export``/``declare``/``env``, inline code)."""
    m = SETS_ENV.search(command)
    if m:
        return m.group(0).strip()[:60]
    for name in reading.assigned:
        if ENV_NAME.match(name):
            return name
    for cmd in reading.all_commands():
        for w in cmd.words:
            name = w.split("=", 1)[0]
            if "=" in w and ENV_NAME.match(name.lstrip("-")):
                return name
            if SETS_ENV.search(w):
                return SETS_ENV.search(w).group(0).strip()[:60]
        if program(cmd.words) in ("export", "declare", "typeset", "readonly", "local") and any(
                ENV_NAME.match(w) for w in cmd.words[1:]):
            return next(w for w in cmd.words[1:] if ENV_NAME.match(w))
    return None


# ------------------------------------------------------------------------------------------- what it writes


def _listed_under(piped) -> list[str] | None:
    """The folders below which the paths a command prints lie (``find ROOTS``, ``grep -rl … ROOTS``, ``rg -l``,
    ``ls``, ``fd``), when its output is such a list: where ``… | xargs WRITER`` can write. None when unknown."""
    words = unwrap(piped.words) if piped is not None else []
    name = program(words)
    if name == "find":
        return find_commands(words[1:])[0]
    if name in ("ls", "fd", "fdfind"):
        operands = [w for w in words[1:] if not w.startswith("-")]
        return (operands[1:] if name != "ls" else operands) or ["."]
    lists = any(w in ("-l", "--files-with-matches", "--files") or re.fullmatch(r"-[a-zA-Z]*l[a-zA-Z]*", w)
                for w in words[1:])
    roots = reads_recursively(words) if lists else None
    return [r for r in roots if r != "!hidden"] if roots else None


def _cmd_writes(cmd, near: Near, nested: bool = False) -> tuple[Found | None, list[Found]]:
    """(a protected path this command writes, the writes whose target is known only at run time). A command
    read from a quoted argument (``nested``, in case a program runs it) counts its run-time writes only where
    it names something protected."""
    words = unwrap(cmd.words)
    cwds = cmd.cwds or tuple(near.cwds)
    runtime: list[Found] = []
    from grpo_guard.shell_writes import Writes

    checks = [(Writes(files=cmd.written()), None)]
    name = program(words)
    if name == "xargs":
        inner = xargs_command(words[1:])
        checks.append((writes_of_command(cmd, inner)[0], _listed_under(cmd.piped) or None))
    elif name == "find":
        roots, runs, deletes = find_commands(words[1:])
        checks += [(writes_of_command(cmd, r)[0], roots) for r in runs]
        if deletes:
            runtime.append(Found(f"{roots[0]} (find -delete/-fprint)", runtime=True, scope=roots))
    writes, git_reason = writes_of_command(cmd, words)
    if git_reason:
        return Found(git_reason), runtime
    checks.append((writes, None))
    for w, scope in checks:
        if w is None:
            continue
        found = judge_writes(w, cwds, near.incoming, near.manifest_text)
        if found is not None and found.runtime:
            found.scope = [] if nested else _with_prefix(scope, found.target, cwds)
            runtime.append(found)
        elif found is not None:
            return found, runtime
    if inline_code_writes(cmd, words):
        runtime.append(Found(f"{name} code that writes files", runtime=True, scope=[]))   # its paths are in the code
    call = product_call(words)
    if call is not None:
        target = product_write(call[0], call[1], cwds)
        if target:
            return Found(target), runtime
    return None, runtime


def _with_prefix(scope: list[str] | None, target: str, cwds) -> list[str]:
    """Where a target known only at run time can land: below the folder written before its unknown part
    (``backup/$(…)``), and below ``scope`` (the roots ``find`` or ``xargs``' input come from), or anywhere in the
    folders the command runs in when that is not known."""
    known = target.split(SUBST, 1)[0]
    prefix = [os.path.dirname(known)] if "/" in known else []
    return (list(scope) if scope is not None else list(cwds)) + prefix


def _near(near: Near, scope: list[str] | None) -> str | None:
    """What protected is near a write or code the hook cannot follow: a path the command names (or a folder above
    one), or in the tree of where it acts (``scope``: find's roots; ``[]``: nowhere but what it names; None: the
    folders the command runs in)."""
    touched = near.touched(above=True)
    if touched or scope == []:
        return touched
    for folder in scope or near.cwds:
        for c in near.cwds:
            if protected_path(folder, c):
                return folder
            below = protected_below(folder, c, review_only=True)
            if below:
                return f"{below[0]} (in the tree of {folder})"
    return None


def judge_shell(command: str, cwd: str) -> str | None:
    """The reason to deny a shell command, or None."""
    reading, missing = read(command, cwd)
    if runs_review(command, reading.all_commands()):
        return REVIEW
    env = sets_env(command, reading)
    if env:
        return ENV.format(name=env)
    key = reaches_run_key(reading)
    if key:
        return RUN_KEY.format(tool="Bash", how=key + ": it reads", key=_key_dir())
    near = Near(command, reading, cwd)
    if len(near.names) > MAX_NAMES:
        return (f"this command names {len(near.names)} distinct words that could be paths; the hook checks at most "
                f"{MAX_NAMES} in one command: split it, or put the long text in a file and run that. {READ_HINT}")
    runtime: list[Found] = []
    nested = {id(c) for c in reading.nested}
    for cmd in reading.all_commands():
        found, later = _cmd_writes(cmd, near, id(cmd) in nested)
        if found:
            return WRITES.format(target=found.target)
        runtime += later
    if missing and reading.unreadable:   # the words of a line the subset does not read: what they name counts
        return _unreadable_near(reading, near, runtime, missing)
    return read_only_refusal(near) or _unreadable_near(reading, near, runtime, missing)


def _unreadable_near(reading: Reading, near: Near, runtime: list[Found], missing: str | None) -> str | None:
    hint = " " + NO_PARSER.format(python=_python(), error=missing) if missing else ""
    for found in runtime:
        where = _near(near, found.scope)
        if where:
            target = found.target.replace(SUBST, "$(…)")
            return (f"this command writes {target}, a target known only when it runs, near {where}: "
                    f"spell the target out in the command. {READ_HINT}{hint}")
    if reading.opaque:
        where = _near(near, None)
        if where:
            return (f"this command runs {reading.opaque[0]}, which the hook cannot read, near {where}: run the "
                    f"commands themselves, spelled out. {READ_HINT}{hint}")
    if reading.unreadable:
        where = near.touched(above=True)
        if where:
            return (f"this command comes near {where} and the hook cannot read all of it as bash would: "
                    f"{'; '.join(u.replace(SUBST, '$(…)') for u in reading.unreadable[:3])}. Spell the paths and "
                    f"values out in the command. {READ_HINT}{hint}")
    return None


def _key_dir() -> str:
    from grpo_guard.protected import run_key_dirs

    return run_key_dirs()[0]


def _python() -> str:
    import sys

    return sys.executable or "python3"


# ------------------------------------------------------------------------------------------------ tool calls


def _strings(value) -> str:
    if isinstance(value, dict):
        return "\n".join(_strings(v) for v in value.values())
    if isinstance(value, list):
        return "\n".join(_strings(v) for v in value)
    return value if isinstance(value, str) else ""


def _path_values(value, key: str = "") -> list[str]:
    """Every string in an MCP tool's arguments that names a path."""
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _path_values(v, str(k))]
    if isinstance(value, list):
        return [p for v in value for p in _path_values(v, key)]
    if isinstance(value, str) and ("/" in value or re.search(r"path|file|dest|target|source|dir|name|to|from",
                                                             key, re.IGNORECASE)) and "\n" not in value:
        return [value]
    return []


def _guarded_path(path: str, cwd: str | None, content: str) -> bool:
    """A protected path, one the hook runs under, or an inspection file in a folder about to hold one."""
    return protected_path(path, cwd) or launch_path(path, cwd) or any(
        about_to_hold(p, None, content) for p in resolve(str(path).strip("'\""), cwd))


def _run_key_call(tool: str, args: dict, cwd: str | None) -> str | None:
    cwds = [cwd or os.getcwd()]
    for key in COMMAND_KEYS:
        value = args.get(key)
        if isinstance(value, str) and names_run_key(value, cwds, read(value, cwds[0])[0]):
            return RUN_KEY.format(tool=tool, how="names", key=_key_dir())
    if any(names_run_key(v, cwds) for v in _path_values(args)):
        return RUN_KEY.format(tool=tool, how="names", key=_key_dir())
    if tool == "Grep" and grep_tool_reaches_key(args.get("path") if isinstance(args.get("path"), str) else None, cwd):
        return RUN_KEY.format(tool=tool, how="searches a folder above", key=_key_dir())
    return None


def decide(event: dict) -> str | None:
    """The reason to deny this tool call, or None to allow it. Raises on input it cannot read."""
    forget()
    tool = event.get("tool_name")
    args = event.get("tool_input")
    cwd = event.get("cwd")
    if not isinstance(tool, str) or not tool or not isinstance(args, dict) or not (cwd is None or isinstance(cwd, str)):
        raise ValueError("the event is not a tool call the hook can read (tool_name, tool_input, cwd)")
    key = _run_key_call(tool, args, cwd)
    if key:
        return key
    if tool in READ_ONLY_TOOLS:
        return None
    content = _strings({k: v for k, v in args.items() if k not in ("file_path", "notebook_path")})
    if tool in ("Write", "Edit", "MultiEdit", "NotebookEdit"):
        path = str(args.get("file_path") or args.get("notebook_path") or "")
        return f"{path}: {DENY_WRITE}" if path and _guarded_path(path, cwd, content) else None
    for key in COMMAND_KEYS:
        if isinstance(args.get(key), str):
            reason = judge_shell(args[key], cwd or os.getcwd())
            if reason:
                return reason
    last = tool.rsplit("__", 1)[-1]
    if tool == "Bash" or (tool.startswith("mcp__") and READ_ONLY_MCP.match(last) and not WRITE_VERB.search(last)):
        return None
    # Any other tool (MCP, or one added later) is not known to only read: no path argument of it may be protected.
    for path in _path_values({k: v for k, v in args.items() if k not in (*COMMAND_KEYS, "description")}):
        if _guarded_path(path, cwd, content):
            return f"{tool} on {path}: {DENY_WRITE}"
    return None
