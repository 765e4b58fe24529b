"""The writes of a shell command, judged against what is protected: its redirections, what each program writes
(``programs.WRITERS``: copies, moves, removals, archives, in-place edits), git by what git tracks
(``git_writes``), inline code that writes, and writes whose target exists only at run time (``xargs``,
``find -exec``/``-delete``, a target built by a substitution or a variable set at run time).

A copy of a whole protected folder to a place that does not exist yet is reading it (``cp -r out/inspection
backup/``); removing an ``inspection.bak-*`` backup whole is allowed; anything else that creates, overwrites or
removes a protected path is denied, and so is a write into a folder whose tree holds one.
"""

from __future__ import annotations

import os
import re

from grpo_guard.git_writes import _patch_paths, judge_git
from grpo_guard.paths import braces, resolve
from grpo_guard.programs import INTERPRETERS, Args, Writes, writes_of
from grpo_guard.protected import (
    BACKUP_DIR,
    anchors,
    guarded,
    holds_protected,
    is_artifact,
    is_backup,
    launch_path,
    protected_below,
    protected_path,
    protected_resolved,
)
from grpo_guard.shell_words import STDIN_PATHS, SUBST, Cmd, folded_output, program

# Inline code (python -c, perl -e, a here-doc) that writes, renames or deletes files.
CODE_WRITES = re.compile(r"open\s*\([^,()]*,\s*(?:mode\s*=\s*)?['\"][rbt]*[wax+]|\.write\b|write_(?:text|bytes)|unlink|"
                         r"remove|rename|replace\s*\(|rmtree|shutil|copyfile|move|truncate|symlink|chmod|mkdir|"
                         r"makedirs|os\.system|subprocess|popen|\bdump\s*\(|writeFile|appendFile|File\.write|sysopen|"
                         r"open\s*\(?\s*\w*\s*,?\s*['\"]\s*[>+]|\bexec\s*\(|\beval\s*\(|__import__|importlib|"
                         r"getattr\s*\(\s*os", re.IGNORECASE)


class Found:
    """A write the hook denies: ``target`` (what it writes) and ``runtime`` (True when the target is known only
    at run time, so what counts is whether anything protected is near)."""

    __slots__ = ("target", "runtime", "scope")

    def __init__(self, target: str, runtime: bool = False, scope: list[str] | None = None):
        self.target, self.runtime, self.scope = target, runtime, scope


def _is_dir(cwds):
    def is_dir(path: str) -> bool:
        return any(os.path.isdir(p) for c in cwds for p in resolve(path, c))
    return is_dir


def _exists(path: str, cwds) -> bool:
    return any(os.path.lexists(p) for c in cwds for p in resolve(path, c))


def _faithful_copies(writes: Writes, cwds) -> set[str]:
    """Landings of copies that only read: a whole protected folder (an inspection, an artifact) copied to a place
    that does not exist yet."""
    fresh = set()
    for source, landed in writes.copies:
        whole = any(os.path.isdir(p) and (protected_path(p) or is_artifact(p)) for c in cwds
                    for p in resolve(source, c))
        if whole and not _exists(landed, cwds):
            fresh.add(landed)
    return fresh


def _expanded(paths: list[str]) -> list[str]:
    return [b for p in paths for b in braces(p)]


def _check_path(path: str, cwds, exempt: set[str], check) -> bool:
    if path in exempt:
        return False
    return any(check(path, c) for c in cwds)


def judge_writes(writes: Writes, cwds, incoming, content) -> Found | None:
    """The first protected path ``writes`` touches (in any of the folders ``cwds``), or None."""
    exempt = _faithful_copies(writes, cwds)
    holds = " (it holds an inspection, a run's files or records, or one of grpo-rlvr's own)"
    # each kind of write: its targets, the copies exempt, what makes a target protected, what the refusal adds
    kinds = ((writes.files, exempt, lambda p, c: launch_path(p, c) or guarded(p, c, incoming, content), ""),
             (writes.linked, set(), protected_path, " (a link gives it a name the hook does not know)"),
             (writes.removed, set(), lambda p, c: protected_path(p, c) and not is_backup(p), ""),
             (writes.into, exempt, lambda p, c: protected_path(p, c) or holds_protected(p, c), holds),
             (writes.removed_trees, set(), _removes_protected, holds))
    for targets, exempted, protects, why in kinds:
        for path in _expanded(targets):
            if SUBST in path:
                return Found(path, runtime=True)
            if _check_path(path, cwds, exempted, protects):
                return Found(f"{path}{why}")
    for path in _expanded(writes.whole_trees):
        if any(protected_below(path, c, review_only=True) for c in cwds):
            return Found(f"{path} (a patch writes files anywhere in this tree, which holds an inspection or a run's "
                         "files and records)")
    return None


def _in_backup(path: str) -> bool:
    return any(BACKUP_DIR.match(part) for part in path.split("/"))


def _removes_protected(path: str, cwd: str) -> bool:
    """Removing ``path`` whole removes something protected (an ``inspection.bak-*`` backup may go, whole)."""
    for p in resolve(path, cwd):
        if is_backup(p):
            continue
        if protected_resolved(p) or any(not _in_backup(f) for f in protected_below(p, None)) or any(
                a != p and a.startswith(p.rstrip("/") + "/") for a in anchors()):
            return True
    return False


# -------------------------------------------------------------------------------- commands and what they write


def xargs_command(args: list[str]) -> list[str]:
    """The command ``xargs`` runs, its input items (known at run time) in place: at ``-I``'s placeholder, or at
    the end."""
    a_valued = {"-n", "-L", "-P", "-s", "-d", "-E", "-e", "-I", "-i", "-a", "--delimiter", "--arg-file",
                "--max-args", "--max-lines", "--max-procs", "--max-chars", "--eof", "--replace", "--process-slot-var"}
    k, placeholder = 0, None
    while k < len(args) and args[k].startswith("-"):
        flag = args[k]
        if flag in ("-I", "--replace") and k + 1 < len(args):
            placeholder = args[k + 1]
        elif flag.startswith("-I") and len(flag) > 2:
            placeholder = flag[2:]
        elif flag in ("-i",) or flag.startswith("--replace="):
            placeholder = flag.split("=", 1)[1] if "=" in flag else "{}"
        k += 2 if flag in a_valued and flag not in ("-i",) and "=" not in flag else 1
    inner = args[k:] or ["echo"]
    if placeholder:
        return [w.replace(placeholder, SUBST) for w in inner]
    return inner + [SUBST]


def find_commands(args: list[str]) -> tuple[list[str], list[list[str]], bool]:
    """(its roots, each command ``-exec``/``-execdir``/``-ok`` runs with ``{}`` as a value known at run time,
    whether it deletes or writes a list itself: ``-delete``, ``-fprint``…)."""
    roots = []
    for a in args:
        if a.startswith(("-", "(", "!", ")")) or a == ",":
            break
        roots.append(a)
    runs, k = [], 0
    while k < len(args):
        if args[k] in ("-exec", "-execdir", "-ok", "-okdir"):
            end = next((j for j in range(k + 1, len(args)) if args[j] in (";", "+")), len(args))
            runs.append([w.replace("{}", SUBST) for w in args[k + 1:end]])
            k = end
        k += 1
    writes = any(a in ("-delete", "-fprint", "-fprint0", "-fprintf", "-fls") for a in args)
    return roots or ["."], runs, writes


def _patch_writes(words: list[str], cmd: Cmd) -> Writes:
    a = Args(words[1:], {"-d", "--directory", "-i", "--input", "-o", "--output", "-p", "-B", "--prefix", "-r",
                         "--reject-file", "-z", "--suffix", "-D", "--ifdef", "-F", "--fuzz"})
    folder = a.value("-d", "--directory") or "."
    diff = a.value("-i", "--input") or (a.operands[1] if len(a.operands) > 1 else None) or next(
        (t for op, t in cmd.redirects if op == "<"), None)
    if a.value("-o", "--output") or a.operands[:1]:
        return writes_of(words, _is_dir(cmd.cwds))
    named = _patch_paths([diff], cmd.cwds[-1] if cmd.cwds else os.getcwd()) if diff and SUBST not in diff else None
    if named is None:
        return Writes(whole_trees=[folder])
    return Writes(files=[os.path.join(folder, p) for p in named])


def writes_of_command(cmd: Cmd, words: list[str]) -> tuple[Writes | None, str | None]:
    """(what the command writes, or None when it cannot be followed; why git is refused, or None)."""
    name = program(words)
    cwds = cmd.cwds or (os.getcwd(),)
    if name == "git":
        for c in cwds[-1:]:
            if any(w.startswith(("GIT_DIR=", "GIT_WORK_TREE=")) for w in cmd.words):
                return None, None
            verdict = judge_git(words, c)
            if verdict.runs:
                return None, None
            return verdict.writes, verdict.reason
    if name == "patch":
        return _patch_writes(words, cmd), None
    return writes_of(words, _is_dir(cwds), cwds), None


# Per interpreter family: the options that give code, and the options that take a value.
_FAMILIES = (
    (re.compile(r"^(?:python|pypy)"), re.compile(r"^-[A-Za-z]*c$"), {"-W", "-X", "--check-hash-based-pycs"}),
    (re.compile(r"^(?:perl|ruby|lua|julia|Rscript|osascript)"), re.compile(r"^-[A-Za-z]*[eE]$"),
     {"-I", "-M", "-m", "-r", "-C", "-x", "-l"}),
    (re.compile(r"^(?:node|nodejs|bun|deno)"), re.compile(r"^(?:-e|--eval|-p|--print)$"),
     {"-r", "--require", "--import", "--loader", "--input-type", "--conditions", "-C"}),
    (re.compile(r"^php"), re.compile(r"^-r$"), {"-d", "-c", "-z"}),
)


def interpreter_program(words: list[str]) -> tuple[str, str]:
    """What an interpreter runs: ``("code", TEXT)`` (``python -c``, ``perl -e``…), ``("module", NAME)``
    (``python -m``), ``("script", PATH)``, or ``("stdin", "")`` (its program comes from a here-document or a
    pipe)."""
    name = program(words)
    code_flag, valued = next(((c, v) for f, c, v in _FAMILIES if f.match(name)), (re.compile(r"^-e$"), set()))
    args, k = words[1:], 0
    while k < len(args):
        a = args[k]
        if code_flag.match(a):
            return "code", args[k + 1] if k + 1 < len(args) else ""
        if name.startswith(("python", "pypy")) and (a == "-m" or re.fullmatch(r"-m\S+", a)):
            return "module", (args[k + 1] if k + 1 < len(args) else "") if a == "-m" else a[2:]
        if a in STDIN_PATHS:   # /dev/stdin: the here-document or the pipe is the program
            return "stdin", ""
        if SUBST in a:   # <(…), "$(…)": a program made at run time, not a file the agent wrote
            return "code", SUBST
        if a == "--":
            return ("script", args[k + 1]) if k + 1 < len(args) else ("stdin", "")
        if not a.startswith("-"):
            return "script", a
        k += 2 if a in valued else 1
    return "stdin", ""


def inline_code_writes(cmd: Cmd, words: list[str]) -> bool:
    """An interpreter given code on its command line, in a here-document or through a pipe, that writes files
    (or code made at run time)."""
    if not INTERPRETERS.match(program(words)):
        return False
    kind, value = interpreter_program(words)
    if kind == "code":
        code = value
    elif kind == "stdin":
        code = cmd.stdin if cmd.stdin is not None else (folded_output(cmd.piped) or SUBST if cmd.piped else "")
    else:
        return False
    return bool(code.strip()) and (SUBST in code or bool(CODE_WRITES.search(code)))
