"""Near a protected path only what reads runs: the allow-list of programs that only read (their stdout is theirs to
write), readers with an option that writes a file or runs a program (each refused by that option), and
grpo-rlvr's own commands other than ``review``. A shell command that touches a protected path anywhere, or names a
folder above one, runs only if every simple command in it is on that list and no redirection writes there."""

from __future__ import annotations

import glob
import os
import re

from grpo_guard.bash_reading import SUBST as _SUBST
from grpo_guard.protected import (
    _GLOB,
    INSPECTION_FILES,
    WALK_LIMIT,
    _file_looks_like_manifest,
    _fragments,
    _protected_resolved,
    about_to_hold,
    above_protected,
    holds_protected,
    looks_like_manifest,
    protected_path,
    resolve,
)
from grpo_guard.shell_writes import INTERPRETERS, _braces, _expand, _targets

PROGRAMS = re.compile(r"(?:^|/)(?:grpo-rlvr|grpo-rlvr-plugin|grpo_rlvr)$")
# Programs that only read (stdout is theirs to write), with no option that writes a file or runs a program.
READERS = {"cat", "tac", "head", "tail", "more", "wc", "ls", "stat", "du", "diff", "cmp", "sha256sum", "sha1sum",
           "sha512sum", "sha224sum", "sha384sum", "md5sum", "b2sum", "cksum", "grep", "egrep", "fgrep", "jq", "echo",
           "printf", "true", "false", "test", "[", "pwd", "basename", "dirname", "realpath", "readlink", "nl", "od",
           "hexdump", "strings", "cut", "tr", "comm", "paste", "join", "fold", "column"}
# Readers with a flag that writes a file or runs a program: what is refused in their arguments (checked below).
CHECKED_READERS = {"rg", "less", "file", "sort", "uniq", "xxd", "base64", "sed", "find", "cp", "xargs"}
PRODUCT_SUBCOMMANDS = {"inspect", "gate", "render", "validate", "score", "preflight", "train", "diagnose", "watch",
                       "report", "memory", "demo", "merge"}
SAFE_ASSIGN = re.compile(r"^(?:LC_\w+|LANG|LANGUAGE|TZ|NO_COLOR|COLUMNS|TERM|HF_HUB_OFFLINE|TRANSFORMERS_OFFLINE|"
                         r"HF_DATASETS_OFFLINE|CUDA_VISIBLE_DEVICES|GRPO_RLVR_PLUGIN_\w+)$")
SHELL_WORDS = {"!", "{", "}", "then", "do", "else", "elif", "if", "while", "until", "fi", "done", "time"}
_REDIRECT = re.compile(r"^(?:&?>>?|>\||>&|<>|<<<|<<-?|<&|<)$")
_WRITE_REDIRECT = {">", ">>", ">|", "&>", "&>>", "<>", ">&"}
READ_HINT = ("near an inspection, a run's rendered files and records, startup hooks or the installed grpo-rlvr the agent runs "
             "only commands that read (cat, head, tail, less, wc, ls, stat, file, grep, rg, diff, cmp, sha256sum, jq, "
             "python -m json.tool FILE, sed -n, sort/uniq without an output file) and grpo-rlvr's own commands other "
             "than review. To make an inspection run `grpo-rlvr inspect BRIEF`, to write a run `grpo-rlvr render`, to "
             "start or continue one `grpo-rlvr train RUN [--resume]` (it alone writes the run's checkpoints.json "
             "and provenance.json); only a person runs `grpo-rlvr review DIR`, in their own terminal.")



def _trusted_program(word: str) -> bool:
    """A bare name, or a path whose folder is a ``bin`` (/usr/bin/cat, .venv/bin/python, the plugin's bin)."""
    return "/" not in word or os.path.basename(os.path.dirname(word)) == "bin"




def _short_flags(args: list[str]) -> str:
    """The letters of the short options among ``args`` (``-no`` gives ``no``)."""
    return "".join(a[1:] for a in args if re.match(r"^-[A-Za-z]", a))


def _operands(args: list[str], valued: tuple[str, ...] = ()) -> list[str]:
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in valued:
            skip = True
        elif a == "-" or not a.startswith("-"):
            out.append(a)
    return out


def _sed_writes(args: list[str]) -> bool:
    """sed that edits in place, reads its script from a file, or whose script writes (``w``) or runs (``e``)."""
    if any(a.startswith(("--in-place", "--file", "-f")) or (re.match(r"^-[a-zA-Z]+$", a) and ("i" in a or "f" in a))
           for a in args):
        return True
    scripts = [args[k + 1] for k, a in enumerate(args[:-1]) if a in ("-e", "--expression")]
    scripts += [a.split("=", 1)[1] for a in args if a.startswith("--expression=")]
    if not scripts:
        scripts = _operands(args)[:1]
    for script in scripts:
        rest, i = [], 0
        while i < len(script):   # drop /regex/ addresses and the two parts of s/// and y///, keep the flags
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
        if re.search(r"[wWe]", "".join(rest)):
            return True
    return False


def _reader_refusal(name: str, args: list[str]) -> str | None:
    """Why a reader's arguments make it write (a file, or by running a program), or None."""
    flags = _short_flags(args)
    if name == "rg" and any(a.startswith("--pre") for a in args):
        return "rg --pre runs a program"
    if name == "less" and (any(a.startswith(("+", "--log-file", "--LOG-FILE")) for a in args) or re.search("[oO]", flags)):
        return "less -o writes a log file"
    if name == "file" and ("C" in flags or "--compile" in args):
        return "file -C writes a magic file"
    if name == "sort" and (re.search("[oT]", flags) or any(a.startswith(("--output", "--temporary-directory",
                                                                          "--compress-program")) for a in args)):
        return "sort -o writes its output file"
    if name == "uniq" and len(_operands(args, ("-f", "-s", "-w"))) > 1:
        return "uniq IN OUT writes OUT"
    if name == "xxd" and (any(a.startswith("-r") for a in args) or len(_operands(
            args, ("-c", "-g", "-l", "-s", "-o", "-n", "-cols", "-len", "-seek", "-groupsize", "-offset", "-name"))) > 1):
        return "xxd -r / xxd IN OUT writes a file"
    if name == "base64" and len(_operands(args, ("-w",))) > 1:
        return "base64 with two files"
    if name == "sed" and _sed_writes(args):
        return "sed -i, or a sed script that writes or runs"
    if name == "find" and (any(a in ("-delete", "-fprint", "-fprint0", "-fprintf", "-fls") for a in args)
                           or any(not _runs_a_reader(args[k + 1:]) for k, a in enumerate(args)
                                  if a in ("-exec", "-execdir", "-ok", "-okdir"))):
        return "find -delete, or -exec of a program that does not only read"
    if name == "cp" and (re.search("[ls]", flags) or any(a in ("--link", "--symbolic-link") for a in args)):
        return "cp -l/-s links to the file instead of copying it"
    return None


def _xargs_command(args: list[str]) -> list[str]:
    """The command ``xargs`` runs (its words after xargs' own options)."""
    skip = False
    for k, a in enumerate(args):
        if skip:
            skip = False
        elif a in ("-n", "-L", "-P", "-s", "-d", "-E", "-I", "-a", "--delimiter", "--arg-file"):
            skip = True
        elif not a.startswith("-"):
            return args[k:]
    return []


def _runs_a_reader(rest: list[str]) -> bool:
    """``find -exec`` runs ``rest`` up to its ``;`` or ``+``: a reader there only reads."""
    end = next((k for k, a in enumerate(rest) if a in (";", "+")), len(rest))
    return bool(rest[:end]) and _program_refusal(rest[:end])[1] is None


def _program_refusal(seg: list[str]) -> tuple[str, str | None]:
    """(the program, why it is refused, or None when it only reads) for one simple command without redirections."""
    while seg and (seg[0] in SHELL_WORDS or re.match(r"^[A-Za-z_]\w*=", seg[0])):
        if "=" in seg[0] and seg[0] not in SHELL_WORDS and not SAFE_ASSIGN.match(seg[0].split("=", 1)[0]):
            return seg[0].split("=", 1)[0], "it sets a variable a reader does not need"
        seg = seg[1:]
    while seg and seg[0] in ("command", "env", "nice", "timeout", "time"):   # wrappers that run the rest as it is
        wrapper, seg = seg[0], seg[1:]
        if wrapper == "env" and any(a.startswith(("-S", "--split", "-C", "--chdir")) for a in seg):
            return "env", "env -S/-C"
        while seg and (seg[0].startswith("-") or (wrapper == "env" and re.match(r"^[A-Za-z_]\w*=", seg[0]))
                       or (wrapper in ("timeout", "nice") and re.match(r"^[\d.]+[smhd]?$", seg[0]))):
            if wrapper == "env" and "=" in seg[0] and not SAFE_ASSIGN.match(seg[0].split("=", 1)[0]):
                return seg[0].split("=", 1)[0], "it sets a variable a reader does not need"
            seg = seg[1:]
    if not seg:
        return "", None
    word, args = seg[0], seg[1:]
    name = word.rsplit("/", 1)[-1]
    if _SUBST in word or "$" in word or not _trusted_program(word):
        return word, "a program named at run time or by a path outside a bin folder"
    if name in ("cd", "pushd", "popd") or (name == "for" and len(args) > 1 and args[1] == "in"):
        return name, None
    if name in READERS:
        return name, None
    if name == "xargs":   # it runs a command: that command must read only too
        return _program_refusal(_xargs_command(args) or ["echo"])
    if name in CHECKED_READERS:
        return name, _reader_refusal(name, args)
    if PROGRAMS.search(name):   # grpo-rlvr's own commands, review excepted (denied before this)
        sub = next((a for a in args if not a.startswith("-")), None)
        return name, None if sub is None or sub in PRODUCT_SUBCOMMANDS else f"`{name} {sub}`"
    if INTERPRETERS.match(name) and name.startswith("python"):
        return _python_refusal(name, args)
    return name, "it is not a program that only reads"


def _python_refusal(name: str, args: list[str]) -> tuple[str, str | None]:
    """``python -m json.tool FILE`` and ``python -m grpo_rlvr`` read; any other python runs code."""
    k = 0
    while k < len(args) and re.match(r"^-[ISEsBuOqb]+$", args[k]):
        k += 1
    mod, rest = (args[k + 1], args[k + 2:]) if k + 1 < len(args) and args[k] == "-m" else (None, [])
    if mod == "json.tool" and len(_operands(rest, ("--indent",))) <= 1:
        return f"{name} -m json.tool", None
    if mod in ("grpo_rlvr", "grpo_rlvr.cli"):
        sub = next((a for a in rest if not a.startswith("-")), None)
        return f"{name} -m {mod}", None if sub is None or sub in PRODUCT_SUBCOMMANDS else f"`{mod} {sub}`"
    return name, "python that runs code (only `python -m json.tool FILE` and `python -m grpo_rlvr` read here)"


class _Near:
    """What a command comes near: the paths it names (words, option values, where a copy lands), the folders it
    runs in, the inspection files folders are about to receive."""

    def __init__(self, command: str, reading, cwd: str):
        self.segs = [[b for x in seg for b in _braces(_expand(x, reading.assigned))] for seg in reading.segments]
        self.cwds = [cwd]
        for seg in self.segs:
            if seg and seg[0] in ("cd", "pushd") and len(seg) > 1:
                self.cwds.append(os.path.realpath(os.path.join(self.cwds[-1], os.path.expanduser(seg[1]))))
        self.names = [f for seg in self.segs for w in seg for f in _fragments(w)] + self._landings()
        self.incoming: dict[str, set[str]] = {}
        for f in self.names:
            if os.path.basename(f) in INSPECTION_FILES:
                for c in self.cwds:
                    p = os.path.realpath(os.path.join(c, os.path.expanduser(f)))
                    self.incoming.setdefault(os.path.dirname(p), set()).add(os.path.basename(p))
        self.manifest_text = self._manifest_text(command)

    def _landings(self) -> list[str]:
        """Where each file lands when a copy or move places it into a folder."""
        out = []
        for seg in self.segs:
            prog = seg[0].rsplit("/", 1)[-1] if seg else ""
            if prog in ("cp", "mv", "install", "rsync", "ln") and len(seg) > 2:
                ops = _operands(seg[1:])
                tdir = [seg[k + 1] for k, a in enumerate(seg[:-1]) if a in ("-t", "--target-directory")]
                dest = tdir[0] if tdir else (ops[-1] if len(ops) > 1 else None)
                if dest:
                    out += [os.path.join(dest, os.path.basename(s.rstrip("/"))) for s in ops if s != dest]
        return out

    def _manifest_text(self, command: str) -> str:
        text = command if "manifest.json" in command else ""
        if text and not looks_like_manifest(text):   # copied from a file that reads like one
            copied = any(os.path.isfile(os.path.join(c, f)) and _file_looks_like_manifest(
                os.path.realpath(os.path.join(c, f))) for f in self.names for c in self.cwds)
            text = "format_version: seal:" if copied else ""
        return text

    def guarded(self, path: str) -> bool:
        """``path`` is protected (or an inspection file a folder is about to hold), from any of the folders."""
        for c in self.cwds:
            if _GLOB.search(path):   # a pattern (find -name '*.py') counts by what it matches now
                found = [os.path.realpath(m) for m in glob.glob(os.path.join(c, os.path.expanduser(path)))[:WALK_LIMIT]]
                if any(_protected_resolved(p) or about_to_hold(p, self.incoming, self.manifest_text) for p in found):
                    return True
            elif protected_path(path, c) or any(about_to_hold(p, self.incoming, self.manifest_text)
                                                 for p in resolve(path, c)):
                return True
        return False

    def touched(self, above: bool) -> str | None:
        """The first protected path the command names; with ``above``, or a folder above one."""
        found = next((f for f in self.names if self.guarded(f)), None)
        if found is None and above:
            found = next((f"{f} (a folder above {a})" for f in self.names if f != "/" for c in self.cwds
                          if (a := above_protected(f, c))), None)
        return found


def touched_path(command: str, reading, cwd: str) -> str | None:
    """The protected path (or folder above one) ``command`` names, or None."""
    return _Near(command, reading, cwd).touched(above=True)


def _segment_refusal(seg: list[str], near: _Near) -> str | None:
    """Why this simple command does not only read (a redirection into a protected path, a program off the list)."""
    for k, w in enumerate(seg[:-1]):
        target = seg[k + 1]
        if w in _WRITE_REDIRECT and not (w == ">&" and re.match(r"^(?:\d+|-)$", target)):
            if _SUBST in target or "$" in target or near.guarded(target):
                return f"this command redirects into {target.replace(_SUBST, '$(...)')}: {READ_HINT}"
    plain = [x for k, x in enumerate(seg) if not _REDIRECT.match(x) and not (k > 0 and _REDIRECT.match(seg[k - 1]))]
    prog, why = _program_refusal(plain)
    if why is None and prog == "cp":
        paths, trees = _targets("cp", plain[1:], near.cwds[-1])
        if any(near.guarded(p) for p in paths) or any(holds_protected(t, c) for t in trees for c in near.cwds):
            why = "it copies onto an inspection file (or a folder about to hold one)"
    return f"`{prog}` ({why})" if why else None


def read_only_refusal(command: str, reading, cwd: str) -> str | None:
    """When the command touches a protected path (or an inspection file a folder is about to hold), the reason one
    of its simple commands is not a reader or a redirection writes there; when a program that is not a reader names
    a folder above a protected path, that. None when it only reads, or touches nothing protected."""
    near = _Near(command, reading, cwd)
    refusals = [r for seg in near.segs if (r := _segment_refusal(seg, near))]
    if not refusals:
        return None
    touched = near.touched(above=True)
    if touched is None:
        return None
    first = refusals[0]
    if first.startswith("this command redirects"):
        return first
    return f"this command runs {first} where it touches {touched}: {READ_HINT}"
