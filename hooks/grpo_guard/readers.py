"""Near a protected path only what reads runs. A command that names a protected path (or an inspection file a
folder is about to hold), or names a folder above one, runs only if each of its simple commands is a program
that reads (the allow-list), a writer whose writes the hook follows (they were judged already: a copy out, an
archive), grpo-rlvr's own commands other than ``review``, or the agent's own script run by an interpreter
(``python3 analysis.py out/inspection/samples.jsonl``: what a script does is a limit docs/threat-model.md states)."""

from __future__ import annotations

import os
import re

from grpo_guard.paths import GLOB, braces, fragments, resolve
from grpo_guard.product import product_call, product_refusal
from grpo_guard.programs import CHECKED_READERS, INTERPRETERS, READERS, WRITERS, Args
from grpo_guard.protected import (
    INSPECTION_FILES,
    about_to_hold,
    above_protected,
    file_looks_like_manifest,
    looks_like_manifest,
    protected_path,
    protected_resolved,
)
from grpo_guard.shell_words import SHELLS, SUBST, Cmd, Reading, program, unwrap
from grpo_guard.shell_writes import find_commands, interpreter_program, writes_of_command, xargs_command

SAFE_ASSIGN = re.compile(r"^(?:LC_\w+|LANG|LANGUAGE|TZ|NO_COLOR|COLUMNS|TERM|HF_HUB_OFFLINE|TRANSFORMERS_OFFLINE|"
                         r"HF_DATASETS_OFFLINE|CUDA_VISIBLE_DEVICES|GRPO_RLVR_PLUGIN_\w+|PAGER|GIT_PAGER|LESS)$")
READ_HINT = ("near an inspection, a run's rendered files and records, startup hooks or the installed grpo-rlvr the agent "
             "runs only commands that read (cat, head, tail, less, wc, ls, stat, file, grep, rg, diff, cmp, sha256sum, "
             "jq, python -m json.tool FILE, sed -n, sort/uniq without an output file, a copy or archive made "
             "elsewhere, your own script reading a file) and grpo-rlvr's own commands other than review. To make an "
             "inspection run `grpo-rlvr inspect BRIEF`, to write a run `grpo-rlvr render`, to start or continue one "
             "`grpo-rlvr train RUN [--resume]` (it alone writes the run's checkpoints.json and provenance.json); "
             "only a person runs `grpo-rlvr review DIR`, in their own terminal.")


def trusted_program(word: str) -> bool:
    """A bare name, or a path whose folder is a ``bin`` (/usr/bin/cat, .venv/bin/python, the plugin's bin)."""
    return "/" not in word or os.path.basename(os.path.dirname(word)) == "bin"


def _sed_writes(args: list[str]) -> bool:
    """sed that reads its script from a file, or whose script writes (``w``) or runs (``e``). (``-i`` edits the
    files it names: judged as their write.)"""
    if any(a.startswith(("--file", "-f")) or (re.match(r"^-[a-zA-Z]+$", a) and "f" in a) for a in args):
        return True
    scripts = [args[k + 1] for k, a in enumerate(args[:-1]) if a in ("-e", "--expression")]
    scripts += [a.split("=", 1)[1] for a in args if a.startswith("--expression=")]
    if not scripts:
        scripts = Args(args).operands[:1]
    return any(re.search(r"[wWe]", _sed_commands(s)) for s in scripts)


def _sed_commands(script: str) -> str:
    """A sed script without its ``/regex/`` addresses and the two parts of each ``s///`` and ``y///``."""
    rest, i = [], 0
    while i < len(script):
        c = script[i]
        if c in "sy" and i + 1 < len(script) and not script[i + 1].isalnum() and script[i + 1] not in " \n;":
            d, parts, i = script[i + 1], 0, i + 2
            while i < len(script) and parts < 2:
                if script[i] == "\\":
                    i += 1
                elif script[i] == d:
                    parts += 1
                i += 1
            continue
        if c == "/":
            i += 1
            while i < len(script) and script[i] != "/":
                i += 2 if script[i] == "\\" else 1
            i += 1
            continue
        rest.append(c)
        i += 1
    return "".join(rest)


def _awk_writes(args: list[str]) -> bool:
    a = Args(args, {"-f", "-v", "-F", "-i", "--include", "-E"})
    if a.value("-f", "-E") is not None:
        return True
    script = a.operands[0] if a.operands else ""
    return bool(re.search(r"system\s*\(|print[f]?[^;{}]*[>|]|\|\s*getline|getline\s*<", script))


_REFUSALS = {
    "rg": lambda a, f: "rg --pre runs a program" if any(x.startswith("--pre") for x in a) else None,
    "less": lambda a, f: "less -o writes a log file" if any(x.startswith(("+", "--log-file", "--LOG-FILE"))
                                                            for x in a) or re.search("[oO]", f) else None,
    "file": lambda a, f: "file -C writes a magic file" if "C" in f or "--compile" in a else None,
    "base64": lambda a, f: "base64 with two files" if len(Args(a, {"-w"}).operands) > 1 else None,
    "sed": lambda a, f: "a sed script that writes or runs, or comes from a file" if _sed_writes(a) else None,
    "awk": lambda a, f: "an awk program that writes or runs" if _awk_writes(a) else None,
    "gawk": lambda a, f: "an awk program that writes or runs" if _awk_writes(a) else None,
    "iconv": lambda a, f: "iconv -o writes a file" if "o" in f or any(x.startswith("--output") for x in a) else None,
}


def _find_refusal(args: list[str]) -> str | None:
    _, runs, writes = find_commands(args)
    if writes:
        return "find -delete/-fprint writes"
    for run in runs:
        why = refusal(Cmd(run), run)
        if why:
            return f"find -exec {why}"
    return None


def refusal(cmd: Cmd, words: list[str]) -> str | None:
    """Why this simple command (its words, unwrapped) is not one that only reads, or None."""
    if not words or words[0] == "{…}":
        return None
    first = cmd.words[0] if cmd.words else ""
    if "=" in first and not SAFE_ASSIGN.match(first.split("=", 1)[0]) and re.match(r"^[A-Za-z_]\w*=", first):
        return f"it sets {first.split('=', 1)[0]}, which a reader does not need"
    name = program(words)
    if SUBST in words[0] or not trusted_program(words[0]):
        return "a program named at run time or by a path outside a bin folder"
    call = product_call(words)
    if call is not None:
        return product_refusal(call[0])
    if name in CHECKED_READERS or name in READERS or name in WRITERS or name == "git":
        return _reader_or_writer(cmd, words, name)
    if INTERPRETERS.match(name) or name in SHELLS:
        return _interpreter_refusal(cmd, words, name)
    return "it is not a program that only reads"


def _reader_or_writer(cmd: Cmd, words: list[str], name: str) -> str | None:
    args = words[1:]
    if name == "xargs":
        inner = xargs_command(args)
        return refusal(Cmd(inner, piped=cmd.piped), inner)
    if name == "find":
        return _find_refusal(args)
    check = _REFUSALS.get(name)
    flags = "".join(a[1:] for a in args if re.match(r"^-[A-Za-z]", a))
    why = check(args, flags) if check else None
    if why:
        return why
    if name in WRITERS or name == "git":
        writes, _ = writes_of_command(cmd, words)
        return None if writes is not None else f"`{name}` with an option that runs a program the hook cannot follow"
    return None


def _interpreter_refusal(cmd: Cmd, words: list[str], name: str) -> str | None:
    """``python -m json.tool FILE`` and ``python -m grpo_rlvr`` read; a script the agent wrote runs as its own
    program (unless it is a protected file: a run's train.py or launch.sh); code on the command line or from a
    pipe does not only read. A shell's ``-c`` text, here-document or piped text was read as commands of its own."""
    cwds = cmd.cwds or (None,)
    if name in SHELLS:
        if any(re.fullmatch(r"-[a-zA-Z]*c[a-zA-Z]*", a) for a in words[1:]):
            return None
        script = next((a for a in words[1:] if not a.startswith(("-", "+"))), None)
        return f"{name} runs {script}, a protected file" if script and any(
            protected_path(script, c) for c in cwds) else None
    kind, value = interpreter_program(words)
    if kind == "module":
        rest = words[words.index(value) + 1:] if value in words else []
        if value == "json.tool" and len(Args(rest, {"--indent"}).operands) <= 1:
            return None
        return f"python -m {value} (only `python -m json.tool FILE` and `python -m grpo_rlvr` read here)"
    if kind == "script":
        return f"{name} runs {value}, a protected file" if any(protected_path(value, c) for c in cwds) else None
    return "python that runs code (only `python -m json.tool FILE` and `python -m grpo_rlvr` read here)" if \
        name.startswith("python") else f"{name} running code from the command line or a pipe"


def _runs_code(cmd: Cmd) -> bool:
    """Its stdin is a program: an interpreter or a shell reading a here-document."""
    name = program(unwrap(cmd.words))
    return bool(INTERPRETERS.match(name)) or name in SHELLS


def _is_a_cwd(word: str, cwd: str, cwds: list[str]) -> bool:
    return any(p in cwds for p in resolve(word, cwd)[:1])


class Near:
    """What a command comes near: the paths it names (words, option values, where a copy lands), the folders it
    runs in, the inspection files folders are about to receive."""

    def __init__(self, command: str, reading: Reading, cwd: str):
        self.cmds = reading.commands
        self.cwds = list(dict.fromkeys(reading.cwds or [cwd]))
        named = [c for c in self.cmds if program(unwrap(c.words)) not in ("cd", "pushd", "popd")]   # see cwds
        words = [b for c in named for w in (*c.words, *(t for _, t in c.redirects)) for b in braces(w)]
        self.names = list(dict.fromkeys(f for w in words for f in fragments(w))) + self._landings()
        code = [(f, c.stdin) for c in named if c.stdin and _runs_code(c) for w in c.stdin.split() for f in fragments(w)]
        self.names += [f for f, text in dict.fromkeys(code) if f not in self.names and self._path_like(f, text)]
        self.incoming: dict[str, set[str]] = {}
        for f in self.names:
            if os.path.basename(f) in INSPECTION_FILES:
                for c in self.cwds:
                    for p in resolve(f, c)[:1]:
                        self.incoming.setdefault(os.path.dirname(p), set()).add(os.path.basename(p))
        self.manifest_text = self._manifest_text(command)

    def _path_like(self, word: str, code: str) -> bool:
        """A word of a here-document of code that may name a path: it has a ``/``, a ``.`` or a ``~``, or is a
        quoted string naming something in a folder the command runs in (``shutil.rmtree('out')``; a variable
        ``out = []`` is not a path)."""
        if re.search(r"[/.~]", word):
            return True
        quoted = re.search(r"(['\"])" + re.escape(word) + r"\1", code) is not None
        return quoted and any(os.path.lexists(os.path.join(c, word)) for c in self.cwds)

    def _landings(self) -> list[str]:
        """Where each file lands when a copy or move places it into a folder."""
        out = []
        for cmd in self.cmds:
            words = unwrap(cmd.words)
            if program(words) in ("cp", "mv", "install", "rsync", "ln") and len(words) > 2:
                a = Args(words[1:], {"-t", "--target-directory"})
                dest = a.value("-t", "--target-directory") or (a.operands[-1] if len(a.operands) > 1 else None)
                if dest:
                    out += [os.path.join(dest, os.path.basename(s.rstrip("/"))) for s in a.operands if s != dest]
        return out

    def _manifest_text(self, command: str) -> str:
        text = command if "manifest.json" in command else ""
        if text and not looks_like_manifest(text):   # copied from a file that reads like one
            copied = any(file_looks_like_manifest(p) for f in self.names for c in self.cwds for p in resolve(f, c)[:1]
                         if os.path.isfile(p))
            text = "format_version: seal:" if copied else ""
        return text

    def guarded(self, path: str) -> bool:
        """``path`` is protected (or an inspection file a folder is about to hold), from any of the folders; a
        glob pattern (``find -name '*.py'``) counts by what it matches now."""
        for c in self.cwds:
            found = resolve(path, c)
            if GLOB.search(path):
                found = found[1:]   # what it matches, not what it could match (a write is judged that way)
            elif protected_path(path, c):
                return True
            if any(protected_resolved(p) or about_to_hold(p, self.incoming, self.manifest_text) for p in found):
                return True
        return False

    def touched(self, above: bool = True, beside_cwds: bool = False) -> str | None:
        """The first protected path the command names; with ``above``, or a folder above one. With
        ``beside_cwds``, a folder it runs in anyway (``gofmt -w .``) is not counted as named, and a folder it runs
        in that is itself protected is."""
        found = next((f for f in self.names if self.guarded(f)), None)
        if found is None and beside_cwds:
            found = next((c for c in self.cwds if protected_path(c)), None)
        if found is None and above:
            found = next((f"{f} (a folder above {a})" for f in self.names if f != "/" for c in self.cwds
                          if not (beside_cwds and _is_a_cwd(f, c, self.cwds)) and (a := above_protected(f, c))),
                         None)
        return found


def read_only_refusal(near: Near) -> str | None:
    """When the command touches a protected path (or a folder above one), why one of its simple commands does
    not only read; None when it only reads, or touches nothing protected."""
    refusals = [(cmd, why) for cmd in near.cmds if (why := refusal(cmd, unwrap(cmd.words)))]
    if not refusals:
        return None
    touched = near.touched(above=True, beside_cwds=True)
    if touched is None:
        return None
    cmd, why = refusals[0]
    return f"this command runs `{program(unwrap(cmd.words)) or cmd.words[0]}` ({why}) where it touches {touched}: " \
           f"{READ_HINT}"
