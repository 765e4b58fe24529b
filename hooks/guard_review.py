#!/usr/bin/env python3
"""PreToolUse hook of the grpo-rlvr plugin: the agent never stands in for the person who reviews.

Claude Code sends every tool call (``hooks.json`` matches all of them, MCP tools included) as JSON on stdin:
``tool_name``, ``tool_input``, ``cwd``. This hook denies (exit 2, the reason on stderr, which Claude Code shows
to the agent):

- running ``grpo-rlvr review`` in a shell command, however it is reached: ``grpo-rlvr``, the plugin's
  ``grpo-rlvr-plugin`` wrapper, ``python -m grpo_rlvr``, a path to either, behind ``env``, ``sh -c '...'``,
  ``$(...)``, ``nohup``, ``script`` and the like, or importing ``grpo_rlvr.review``;
- setting ``PYTHONPATH``, ``PYTHONSTARTUP``, ``PYTHONHOME``, ``PYTHONUSERBASE``, ``LD_PRELOAD`` or ``LD_AUDIT``
  (in a command, with ``export``/``env``, or through ``os.environ``): each can load code into grpo-rlvr; nor
  ``GRPO_RLVR_CACHE``, which would point the content hashes at a cache the agent filled;
- writing, editing, moving or deleting a protected path: anything under a folder named ``inspection`` (or an
  ``inspection.bak-*`` backup) or in any folder holding an inspection's ``manifest.json`` and ``samples.jsonl``
  (``inspect --out DIR``) or a ``manifest.json`` that reads like an inspection's, an inspection file a folder is
  about to hold (``manifest.json`` beside a ``samples.jsonl`` or the reverse, arriving in the same call, or
  written with an inspection manifest's keys), a run's ``brief.lock.json`` and the files ``render`` wrote beside
  it (``train.py``, ``grpo_config.yaml``, ``launch.sh``, ``accelerate.yaml``, ``slurm.sh``), a run's records
  ``checkpoints.json`` and ``provenance.json`` (by name, anywhere), a ``sitecustomize.py``,
  ``usercustomize.py`` or ``*.pth`` file, a ``*._pth`` file or ``pyvenv.cfg`` (they decide how even
  ``python -I -S`` starts), the installed package (``site-packages/grpo_rlvr``, its dist-info and editable
  finder), this plugin's own folder, the content-hash cache (``<grpo-rlvr cache>/file-hashes``) and the user's
  grpo-rlvr config folder (``~/.config/grpo-rlvr``, which holds the allowed signers of signed reviews);
- any tool call, reads included, that names grpo-rlvr's run key or its folder (``~/.local/share/grpo-rlvr``
  under ``$HOME`` or the password database's home, or the word ``run-key``): it signs the records that prove a
  run passed the gate (``grpo_rlvr/runtime/run_key.py``). Running a run folder's ``train.py`` or ``launch.sh``
  (``python train.py``, ``bash launch.sh``, ``accelerate launch``) is denied too, since only readers run near
  those files: ``grpo-rlvr train RUN [--resume]`` is the agent's door.

How a write is refused, in two layers. First the known writers, each with its own message: the Write, Edit,
MultiEdit and NotebookEdit tools; in a shell command (the Bash tool, or any tool's ``command`` argument)
redirections, ``tee``, ``cp``, ``mv``, ``rm``, ``ln``, ``rsync``, ``tar`` (where it extracts, and the archive's
member names), ``sed -i``, ``git checkout/clean/stash -u``, inline code that writes, ``find -exec``, ``xargs``
and the like. Then an allow-list, which is what holds: a shell command that touches a protected path anywhere
(a word, an option's value, a piece of quoted text) runs only if every simple command in it (split on pipes,
``;``, ``&&``, ``||``, newlines, subshells, ``$(...)``, backticks, process substitutions and the substitutions
of unquoted here-documents) only reads: ``cat``, ``head``, ``tail``, ``less``, ``wc``, ``ls``, ``stat``,
``file``, ``grep``, ``rg``, ``diff``, ``cmp``, the checksum tools, ``jq``, ``cut``, ``sort``/``uniq``/``xxd``/
``base64`` without an output file, ``sed`` without ``-i``, ``-f`` or a ``w``/``e`` command, ``find`` without
``-exec``/``-delete``, ``cp`` out of it (not onto an inspection file, not ``-l``/``-s``), ``python -m
json.tool`` with at most one file, and ``grpo-rlvr``/``grpo-rlvr-plugin``/``python -m grpo_rlvr`` with a
subcommand other than ``review``; and no redirection writes into a protected path. Anything else there
(``curl -o``, ``sort -o``, ``busybox``, ``python -c``, a shell) is denied, and the message names the grpo-rlvr
command that writes such files. A tool other than the Bash tool that is not known to only read (Read, Grep,
Glob, LS, WebFetch…, or an MCP tool named ``read_*``/``list_*``/``get_*``/``search_*``) may not take a
protected path in any path-like argument. Every path is resolved before it is matched: against the call's
``cwd`` and the command's own ``cd``, through ``$VAR`` set earlier in the command, ``~``, backslash-newlines,
brace expansion, symlinks (``realpath``) and globs (what they match now).

Everything else is allowed (exit 0, no output), including ``grpo-rlvr gate``, ``inspect`` (which writes the
inspection itself), reading inspection files, and any writer that touches no protected path. Input that is not
a tool call it understands is allowed.

Limits: a shell command is parsed as words, not executed, and a reader is trusted by its name: a ``cat`` that
is not cat (a shell function, an alias, a program the agent put earlier in a ``bin`` folder on PATH), a target
named at run time (``$(echo insp)ection``), an existing hard link to an inspection file, and a program the
agent writes and runs (a Python script that opens samples.jsonl or reads the run key), and a recursive search
started above the key's folder (``grep -r . ~``) are beyond what a command filter can see; the
gate's checks (terminal-only review, reading times, digests, content identity, a clean interpreter, signed
verdicts when the brief asks for them) are the layers behind this one. Standard library only: the hook runs
before the grpo-rlvr package may be installed.
"""

from __future__ import annotations

import fnmatch
import functools
import glob
import json
import os
import re
import shlex
import sys
import tarfile

PROGRAMS = re.compile(r"(?:^|/)(?:grpo-rlvr|grpo-rlvr-plugin|grpo_rlvr)$")
PROTECTED_DIR = re.compile(r"^inspection(?:\.bak-[^/]*)?$")
# Startup hooks, and the files that decide how the interpreter starts even under `python -I -S`: a `<name>._pth`
# beside the executable replaces sys.path (and may re-enable site), `pyvenv.cfg` names the Python home.
STARTUP_FILE = re.compile(r"^(?:sitecustomize\.py|usercustomize\.py|.*\.pth|.*\._pth|pyvenv\.cfg)$")
# A word naming something protected, for commands whose write targets only exist at run time.
PROTECTED_WORD = re.compile(r"inspection|brief\.lock\.json|sitecustomize|usercustomize|\.pth\b|\._pth\b|pyvenv\.cfg|"
                            r"file-hashes|checkpoints\.json|provenance\.json")
# What `grpo-rlvr render` writes into a run folder (the folder that holds brief.lock.json), and the records a
# training writes into its output/ (the ledger and the signed starts): only grpo-rlvr writes them.
RUN_FILES = ("train.py", "grpo_config.yaml", "brief.lock.json", "launch.sh", "accelerate.yaml", "slurm.sh")
RUN_RECORDS = ("checkpoints.json", "provenance.json")
# The per-user key that signs those records (grpo_rlvr/runtime/run_key.py): the agent neither reads nor writes it.
RUN_KEY_WORD = re.compile(r"run-key|\.local/share/grpo-rlvr(?![\w.-])")   # not the plugin's grpo-rlvr-plugin/
# Inline code (python -c, perl -e, a here-doc) that writes, renames or deletes files.
CODE_WRITES = re.compile(r"open\s*\([^,()]*,\s*(?:mode\s*=\s*)?['\"][rbt]*[wax+]|\.write\b|write_(?:text|bytes)|unlink|remove|"
                         r"rename|replace\s*\(|rmtree|shutil|copyfile|move|truncate|symlink|chmod|mkdir|makedirs|"
                         r"os\.system|subprocess|popen|\bdump\s*\(|writeFile|appendFile|File\.write|sysopen|"
                         r"open\s*\(?\s*\w*\s*,?\s*['\"]\s*[>+]", re.IGNORECASE)
INTERPRETERS = re.compile(r"^(?:python[\d.]*|pypy[\d.]*|perl|ruby|node|nodejs|deno|bun|php|lua|Rscript|julia|osascript)$")
SUBSTITUTION = re.compile(r"\$\(|`|<\(|>\(")
# Each can load code into grpo-rlvr's checks; GRPO_RLVR_CACHE would point them at hashes the agent wrote.
ENV_NAMES = ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONUSERBASE", "LD_PRELOAD", "LD_AUDIT", "GRPO_RLVR_CACHE")
_ENV = "|".join(ENV_NAMES)
SETS_ENV = re.compile(rf"(?<![$\w{{]){_ENV}(?:\s*\+?=(?!=)|['\"]\s*\]\s*=)|\b(?:export|setenv|declare\s+-x|typeset\s+-x)"
                      rf"\b[^;&|\n]*\b(?:{_ENV})\b|(?:putenv|setdefault|update)\(\s*['\"]?(?:{_ENV})")
WRITERS = {"tee", "cp", "mv", "rm", "dd", "truncate", "touch", "ln", "install", "rsync", "chmod", "chown", "chgrp",
           "unlink", "shred", "rmdir", "mkdir", "sed", "perl", "ruby", "awk", "gawk", "patch", "tar", "unzip",
           "setfacl", "chattr", "sponge", "vi", "vim", "nvim", "ed", "ex", "nano", "emacs", "sqlite3", "git", "find",
           "xargs"}
EDITORS = {"sponge", "vi", "vim", "nvim", "ed", "ex", "nano", "emacs", "sqlite3"}
GIT_WRITES = {"checkout", "restore", "rm", "mv", "clean", "reset", "stash", "apply", "am", "switch"}
COPIERS = {"cp", "install", "rsync"}
WRAPPERS = {"sudo", "env", "command", "nohup", "exec", "time", "nice", "ionice", "stdbuf", "timeout", "doas"}
SEPARATORS = {";", "&&", "||", "|", "&", "(", ")", "{", "}", "\n", "!"}
WRITE_VERB = re.compile(r"(write|edit|create|move|rename|delete|remove|copy|upload|save|put|patch|apply|append|"
                        r"insert|replace|update|mkdir|touch|chmod|truncate)", re.IGNORECASE)
READ_ONLY_TOOLS = {"Read", "Glob", "Grep", "LS", "NotebookRead", "WebFetch", "WebSearch", "TodoWrite", "Task",
                   "BashOutput", "ExitPlanMode"}
_GLOB = re.compile(r"[*?\[]")
WALK_LIMIT = 5000   # entries looked at below a folder before a recursive write is judged


def _plugin_root() -> str | None:
    root = os.environ.get("CLAUDE_PLUGIN_ROOT")
    return os.path.realpath(root) if root else None


def _hash_cache() -> str:
    root = os.environ.get("GRPO_RLVR_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "grpo-rlvr")
    return os.path.join(os.path.realpath(root), "file-hashes")


def _user_config() -> str:
    """Where the user's allowed-signers file lives (signed reviews): the agent does not add its own key."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(os.path.realpath(base), "grpo-rlvr")


def _account_config() -> str:
    """The same folder under the account's home from the password database, which the gate reads whatever
    ``HOME`` and ``XDG_CONFIG_HOME`` say (``inspection/signing_policy.py``)."""
    import pwd

    return os.path.join(os.path.realpath(pwd.getpwuid(os.getuid()).pw_dir), ".config", "grpo-rlvr")


def _component_protected(part: str, last: bool) -> bool:
    """A path component (maybe a glob pattern) that names, or could name, a protected folder or file."""
    names = ["inspection", "inspection.bak-x"] + (["brief.lock.json", "sitecustomize.py", "usercustomize.py",
                                                   "x.pth", *RUN_RECORDS] if last else [])
    if _GLOB.search(part):
        return any(fnmatch.fnmatchcase(n, part) for n in names)
    return PROTECTED_DIR.match(part) is not None or (last and (part in ("brief.lock.json", *RUN_RECORDS) or bool(
        STARTUP_FILE.match(part))))


def _in_run_folder(path: str) -> bool:
    """A file ``render`` writes, in a folder that holds a brief.lock.json (or a pattern that could name one)."""
    name, folder = os.path.basename(path), os.path.dirname(path)
    if not os.path.isfile(os.path.join(folder, "brief.lock.json")):
        return False
    return name in RUN_FILES or (bool(_GLOB.search(name)) and any(fnmatch.fnmatchcase(f, name) for f in RUN_FILES))


@functools.lru_cache(maxsize=1)
def _run_key_dirs() -> tuple[str, ...]:
    """The folder of grpo-rlvr's run key: under the home the password database names (where grpo-rlvr keeps it)
    and under ``$HOME``, each as written and resolved."""
    homes = {os.path.expanduser("~")}
    try:
        import pwd

        homes.add(pwd.getpwuid(os.getuid()).pw_dir)
    except (ImportError, KeyError):
        pass
    dirs = set()
    for h in homes:
        d = os.path.join(h, ".local", "share", "grpo-rlvr")
        dirs.update({os.path.normpath(d), os.path.realpath(d)})
    return tuple(sorted(dirs))


def _inside(path: str, folders) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in folders)


def names_run_key(text: str, cwd: str | None) -> bool:
    """``text`` (a command, or a tool's path argument) names the run key or its folder, however spelled."""
    if RUN_KEY_WORD.search(text):
        return True
    segs = simple_commands(text)
    cwds = [cwd or os.getcwd()]
    for seg in segs:   # each folder the command cds into: a relative name may be the key's from there
        if seg and seg[0] in ("cd", "pushd") and len(seg) > 1:
            cwds.append(os.path.realpath(os.path.join(cwds[-1], os.path.expanduser(seg[1]))))
    words = [text.strip("'\""), *(f for seg in segs for w in seg for f in _fragments(w))]
    return any(w and len(w) < 4096 and _inside(p, _run_key_dirs()) for w in words for c in cwds for p in resolve(w, c))


def _is_artifact(folder: str) -> bool:
    """A folder `grpo-rlvr inspect` wrote, whatever its name (`inspect --out DIR`): it holds both files, or a
    manifest.json that reads like an inspection's (a forgery being assembled in a fresh folder)."""
    manifest = os.path.join(folder, "manifest.json")
    return os.path.isfile(manifest) and (os.path.isfile(os.path.join(folder, "samples.jsonl"))
                                         or _file_looks_like_manifest(os.path.realpath(manifest)))


def _protected_resolved(path: str) -> bool:
    parts = [p for p in path.split("/") if p]
    if any(_component_protected(p, i == len(parts) - 1) for i, p in enumerate(parts)):
        return True
    if path.startswith("/") and (_is_artifact(path) or _is_artifact(os.path.dirname(path)) or _in_run_folder(path)):
        return True
    for i, p in enumerate(parts[:-1]):   # the installed package, its metadata and editable finder
        if p in ("site-packages", "dist-packages") and (
                parts[i + 1] == "grpo_rlvr" or re.match(r"^(?:__editable__[._]+)?grpo_rlvr", parts[i + 1])):
            return True
    root = _plugin_root()
    inside = [d for d in (root, _hash_cache(), _user_config(), _account_config(), *_run_key_dirs()) if d]
    return _inside(path, inside)


def protected_path(path: str, cwd: str | None = None) -> bool:
    """The path as written, or any path it resolves to (cwd, ``~``, symlinks, glob matches), is protected."""
    written = str(path).strip("'\"")
    if not written:
        return False
    if _protected_resolved(written):
        return True
    return any(_protected_resolved(p) for p in resolve(written, cwd))


def resolve(path: str, cwd: str | None) -> list[str]:
    full = os.path.join(cwd or os.getcwd(), os.path.expanduser(path))
    found = [os.path.realpath(full)]
    if _GLOB.search(full):
        found += [os.path.realpath(m) for m in glob.glob(full)[:WALK_LIMIT]]
    return found


def holds_protected(path: str, cwd: str | None) -> bool:
    """A folder at ``path`` whose tree (searched up to ``WALK_LIMIT`` entries) holds a protected path."""
    seen = 0
    for top in resolve(path, cwd):
        if not os.path.isdir(top):
            continue
        for dirpath, dirs, files in os.walk(top):
            for name in dirs + files:
                seen += 1
                if _protected_resolved(os.path.join(dirpath, name)):
                    return True
            if seen > WALK_LIMIT:
                return False
    return False


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
    out, nested = [], []
    for w in words:
        out.append(w)   # the word stays an argument of its command ...
        if any(c.isspace() for c in w) and w.strip():  # ... and a quoted script is looked into as its own command
            nested.extend(["&&", *_words(w)])
    return out + nested


def _split_at(words: list[str], is_separator) -> list[list[str]]:
    """The runs of ``words`` between separators (empty runs dropped)."""
    segs, cur = [], []
    for w in words:
        if is_separator(w):
            if cur:
                segs.append(cur)
            cur = []
        else:
            cur.append(w)
    if cur:
        segs.append(cur)
    return segs


def _segments(words: list[str]) -> list[list[str]]:
    return _split_at(words, lambda w: w in SEPARATORS or w in ("`", "$("))


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


def _expand(word: str, assigned: dict[str, str]) -> str:
    for name, value in assigned.items():
        word = re.sub(rf"\$(?:{name}\b|\{{{name}\}})", lambda _m, v=value: v, word)
    return os.path.expandvars(word)


def _braces(word: str, limit: int = 64) -> list[str]:
    """Bash brace expansion (``out/{inspection,x}/f`` → both paths), outermost group first, at most ``limit``."""
    m = re.search(r"(?<!\$)\{([^{}]*,[^{}]*)\}", word)
    if not m:
        return [word]
    out = []
    for alt in m.group(1).split(","):
        out += _braces(word[:m.start()] + alt + word[m.end():], limit)
        if len(out) >= limit:
            break
    return out[:limit]


def _targets(prog: str, args: list[str], cwd: str) -> tuple[list[str], list[str]]:
    """(paths this command writes, folders it writes recursively into or removes) for one writer program."""
    opts = [a for a in args if a.startswith("-")]
    operands = [a for a in args if not a.startswith("-")]
    recursive = any(re.match(r"^-[a-zA-Z]*[rRa]", o) or o in ("--recursive", "--archive") for o in opts)
    if prog in ("sed", "perl", "ruby") and not any(a.startswith("--in-place") or (
            a.startswith("-") and not a.startswith("--") and "i" in a[1:].split("=")[0]) for a in args):
        return [], []
    if prog in ("awk", "gawk"):
        inplace = any(a in ("inplace", "-iinplace", "--include=inplace") for a in args)
        return (operands[1:] if inplace else []), []
    if prog in COPIERS:   # the destination, and where each source lands inside it
        tdir = [args[k + 1] for k, a in enumerate(args[:-1]) if a in ("-t", "--target-directory")]
        tdir += [a.split("=", 1)[1] for a in args if a.startswith("--target-directory=")]
        dest = tdir[0] if tdir else (operands[-1] if len(operands) > 1 else None)
        sources = [o for o in operands if o != dest and o not in tdir]
        if dest is None:
            return [], []
        landed = [os.path.join(dest, os.path.basename(s.rstrip("/"))) for s in sources if s.rstrip("/")]
        trees = sources + [dest] if recursive or prog == "rsync" else []
        return [dest, *landed], trees
    if prog == "tar":
        bundle = args[0] if args and not args[0].startswith("-") else ""
        if not (any(o in ("-x", "--extract", "--get") or re.match(r"^-[a-zA-Z]*x", o) for o in opts) or "x" in bundle):
            files = [args[k + 1] for k, a in enumerate(args[:-1]) if a in ("-f", "--file") or re.match(
                r"^-[a-zA-Z]*f$", a)] + [a.split("=", 1)[1] for a in args if a.startswith("--file=")]
            return files, []
        dest = next((args[k + 1] for k, a in enumerate(args[:-1]) if a in ("-C", "--directory")), cwd)
        archives = [args[k + 1] for k, a in enumerate(args[:-1]) if a in ("-f", "--file") or re.match(
            r"^-[a-zA-Z]*f$", a)] or ([operands[1]] if bundle and "f" in bundle and len(operands) > 1 else [])
        members = []
        for a in archives:
            try:
                with tarfile.open(os.path.join(cwd, a)) as tf:
                    members = [os.path.join(dest, m) for m in tf.getnames()[:WALK_LIMIT]]
            except (OSError, tarfile.TarError):
                members.append(os.path.join(dest, "inspection"))  # unreadable archive: judge by where it lands
        return [dest, *members], [dest]
    if prog == "unzip":
        dest = next((args[k + 1] for k, a in enumerate(args[:-1]) if a == "-d"), cwd)
        return [dest], [dest]
    if prog == "dd":
        return [a[3:] for a in args if a.startswith("of=")], []
    if prog == "ln":
        return operands, []
    if prog in EDITORS:
        return operands, []
    if prog == "git":   # git checkout/restore/rm/clean... of paths, or of the whole tree here
        sub = next((a for a in args if not a.startswith("-")), "")
        if sub not in GIT_WRITES:
            return [], []
        paths = [a for a in args[args.index(sub) + 1:] if not a.startswith("-")]
        untracked = any(a in ("-u", "--include-untracked", "-a", "--all") for a in args)
        whole_tree = sub == "clean" or (sub == "stash" and untracked) or (sub == "reset" and "--hard" in args) \
            or "." in paths
        if sub == "stash":
            paths = []
        return paths, [cwd] if whole_tree else []
    trees = operands if prog in ("rm", "mv", "chmod", "chown", "chgrp") and (recursive or prog == "mv") else []
    return operands, trees


def _redirect_targets(seg: list[str]) -> list[str]:
    out = []
    for i, w in enumerate(seg):
        if w in (">", ">>", ">|", "&>", "&>>") and i + 1 < len(seg):
            out.append(seg[i + 1])
        elif (m := re.match(r"^\d*>>?\|?(.+)$", w)) and not w.startswith(">("):
            out.append(m.group(1))
    return out


def _dynamic_write(seg: list[str], command: str) -> str | None:
    """A write whose target is only known at run time: inline code, ``find -exec``/``-delete``, ``xargs``
    running a writer, or a target built by command substitution. Returns what it is, or None."""
    prog = seg[0].rsplit("/", 1)[-1] if seg else ""
    if INTERPRETERS.match(prog) and (any(a in ("-c", "-e", "-E", "-r", "-") or re.match(r"^-[a-zA-Z]*[ce]$", a)
                                         for a in seg[1:]) or "<<" in command) and CODE_WRITES.search(command):
        return f"{prog} code that writes files"
    if prog == "find":
        runs = [seg[i + 1].rsplit("/", 1)[-1] for i, a in enumerate(seg[:-1]) if a in ("-exec", "-execdir", "-ok",
                                                                                      "-okdir")]
        if any(a in ("-delete", "-fprint", "-fprintf", "-fls") for a in seg) or any(
                r in WRITERS or r in ("sh", "bash", "zsh", "dash") or INTERPRETERS.match(r) for r in runs):
            return "find -exec/-delete"
    if prog == "xargs" and any(x.rsplit("/", 1)[-1] in WRITERS for x in seg[1:]):
        return "xargs running a writer"
    return None


def _unquoted(command: str) -> str:
    """The command without here-document bodies and single-quoted text, where bash substitutes nothing."""
    command = re.sub(r"<<-?\s*(['\"]?)(\w+)\1[^\n]*\n.*?(?:^|\n)\2(?:\n|$)", "<<", command, flags=re.DOTALL)
    return re.sub(r"'[^']*'", "''", command)


def _mentions_protected(command: str, words: list[str], cwd: str) -> bool:
    return bool(PROTECTED_WORD.search(command)) or any(
        protected_path(w, cwd) for w in words if w and not w.startswith("-") and len(w) < 4096)


def writes_protected(command: str, cwd: str | None = None) -> str | None:
    cwd = cwd or os.getcwd()
    command = command.replace("\\\n", "")   # a backslash-newline joins two lines into one word, as bash does
    words = _words(command)
    assigned = {}
    for w in words:
        m = re.match(r"^([A-Za-z_]\w*)=(.*)$", w)
        if m:
            assigned[m.group(1)] = m.group(2)
    dynamic = None
    for seg in _segments(words):
        seg = [b for x in seg for b in _braces(_expand(x, assigned))]
        for target in _redirect_targets(seg):   # against the cwd this segment runs in (after an earlier cd)
            if protected_path(target, cwd):
                return target
        seg = [x for i, x in enumerate(seg) if x not in (">", ">>", ">|", "&>", "&>>", "<", "<<", "<<<")
               and not (i > 0 and seg[i - 1] in (">", ">>", ">|", "&>", "&>>", "<", "<<", "<<<"))]
        while seg and (re.match(r"^[A-Za-z_]\w*=", seg[0]) or seg[0].rsplit("/", 1)[-1] in WRAPPERS):
            seg = [x for x in seg[1:] if "=" not in x or x.startswith("of=")] if seg[0].rsplit("/", 1)[-1] in (
                "env", "sudo") else seg[1:]
        prog = seg[0].rsplit("/", 1)[-1] if seg else ""
        if prog in ("cd", "pushd") and len(seg) > 1:
            cwd = os.path.realpath(os.path.join(cwd, os.path.expanduser(seg[1])))
            continue
        dynamic = dynamic or _dynamic_write(seg, command)
        if prog == "find":
            roots = [a for a in seg[1:] if not a.startswith(("-", "(", "!"))][:1] or ["."]
            if _dynamic_write(seg, command) and any(holds_protected(r, cwd) or protected_path(r, cwd) for r in roots):
                return f"{roots[0]} (find -exec/-delete in a tree that holds an inspection)"
            continue
        if prog not in WRITERS or prog == "xargs":
            continue
        paths, trees = _targets(prog, seg[1:], cwd)
        for target in paths:
            if protected_path(target, cwd):
                return target
        for tree in trees:
            if holds_protected(tree, cwd):
                return f"{tree} (it holds an inspection, a lock or a startup hook)"
    plain = _unquoted(command)
    built = re.search(r">\|?\s*[^\s;&|]*(?:\$\(|`)", plain) or any(
        re.search(rf"(?:^|[\s;&|(/]){re.escape(w)}\b[^;&|\n]*(?:\$\(|`|[<>]\()", plain) for w in WRITERS)
    if built and _mentions_protected(command, words, cwd):
        dynamic = dynamic or "a write whose target is built by command substitution"
    if dynamic and _mentions_protected(command, words, cwd):
        return f"a protected path ({dynamic}, naming an inspection, a lock or a startup file)"
    return None


# ---------------------------------------------------------------- near a protected path, only what reads is allowed

# The files an inspection holds. A folder "about to hold" one (it holds, or this call writes, the other file, or a
# manifest.json that reads like an inspection's) is protected before `inspect` would have finished it.
INSPECTION_FILES = ("manifest.json", "samples.jsonl", "report.html")
MANIFEST_KEYS = ("format_version", "samples_digest", "seal", "fingerprint", "sample_count", "prompt_count")
_MANIFEST_KEY = re.compile(r"[\"']?\b(" + "|".join(MANIFEST_KEYS) + r")\b[\"']?\s*:")
# Programs that only read (stdout is theirs to write), with no option that writes a file or runs a program.
READERS = {"cat", "tac", "head", "tail", "more", "wc", "ls", "stat", "du", "diff", "cmp", "sha256sum", "sha1sum",
           "sha512sum", "sha224sum", "sha384sum", "md5sum", "b2sum", "cksum", "grep", "egrep", "fgrep", "jq", "echo",
           "printf", "true", "false", "test", "[", "pwd", "basename", "dirname", "realpath", "readlink", "nl", "od",
           "hexdump", "strings", "cut", "tr", "comm", "paste", "join", "fold", "column"}
# Readers with a flag that writes a file or runs a program: what is refused in their arguments (checked below).
CHECKED_READERS = {"rg", "less", "file", "sort", "uniq", "xxd", "base64", "sed", "find", "cp", "xargs"}
PRODUCT_SUBCOMMANDS = {"inspect", "gate", "render", "validate", "score", "preflight", "train", "diagnose", "memory",
                       "demo", "merge"}
SAFE_ASSIGN = re.compile(r"^(?:LC_\w+|LANG|LANGUAGE|TZ|NO_COLOR|COLUMNS|TERM|HF_HUB_OFFLINE|TRANSFORMERS_OFFLINE|"
                         r"HF_DATASETS_OFFLINE|CUDA_VISIBLE_DEVICES|GRPO_RLVR_PLUGIN_\w+)$")
SHELL_WORDS = {"!", "{", "}", "then", "do", "else", "elif", "if", "while", "until", "fi", "done", "time"}
_REDIRECT = re.compile(r"^(?:&?>>?|>\||>&|<>|<<<|<<-?|<&|<)$")
_WRITE_REDIRECT = {">", ">>", ">|", "&>", "&>>", "<>", ">&"}
_SUBST = "\x00S\x00"   # where a command substitution stood; its body is checked as a command of its own
READ_HINT = ("near an inspection, a run's rendered files and records, startup hooks or the installed grpo-rlvr the agent runs "
             "only commands that read (cat, head, tail, less, wc, ls, stat, file, grep, rg, diff, cmp, sha256sum, jq, "
             "python -m json.tool FILE, sed -n, sort/uniq without an output file) and grpo-rlvr's own commands other "
             "than review. To make an inspection run `grpo-rlvr inspect BRIEF`, to write a run `grpo-rlvr render`, to "
             "start or continue one `grpo-rlvr train RUN [--resume]` (it alone writes the run's checkpoints.json "
             "and provenance.json); only a person runs `grpo-rlvr review DIR`, in their own terminal.")


def looks_like_manifest(text: str) -> bool:
    """Text that carries two or more of an inspection manifest's keys (format_version, seal, samples_digest…)."""
    return len(set(_MANIFEST_KEY.findall(text or ""))) >= 2


@functools.lru_cache(maxsize=512)
def _file_looks_like_manifest(path: str) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return looks_like_manifest(f.read(1 << 16))
    except OSError:
        return False


def about_to_hold(path: str, incoming: dict[str, set[str]] | None = None, content: str = "") -> bool:
    """``path`` (absolute) is an inspection file in a folder that holds, or receives in this call, the other one,
    or a manifest.json written with (or beside) an inspection manifest's content."""
    name, folder = os.path.basename(path), os.path.dirname(path)
    if name not in INSPECTION_FILES:
        return False
    have = set((incoming or {}).get(folder, set())) | {n for n in INSPECTION_FILES
                                                       if os.path.isfile(os.path.join(folder, n))}
    if name == "manifest.json":
        return "samples.jsonl" in have or looks_like_manifest(content)
    if name == "samples.jsonl":
        return "manifest.json" in have
    return {"manifest.json", "samples.jsonl"} <= have


def _trusted_program(word: str) -> bool:
    """A bare name, or a path whose folder is a ``bin`` (/usr/bin/cat, .venv/bin/python, the plugin's bin)."""
    return "/" not in word or os.path.basename(os.path.dirname(word)) == "bin"


def _match_close(text: str, j: int, close: str) -> int:
    """Index of the ``close`` that ends a substitution opened before ``j`` (quotes and nesting followed)."""
    depth, quote, n = 1, None, len(text)
    while j < n:
        c = text[j]
        if quote == "'":
            quote = None if c == "'" else quote
        elif c == "\\":
            j += 1
        elif c in "'\"" and quote is None:
            quote = c
        elif c == '"' and quote == '"':
            quote = None
        elif close == "`" and c == "`":
            return j
        elif close == ")" and quote is None and c == "(":
            depth += 1
        elif close == ")" and quote is None and c == ")":
            depth -= 1
            if depth == 0:
                return j
        j += 1
    return n


def _lift(text: str, quotes: bool = True) -> tuple[str, list[str]]:
    """The command with each ``$(...)``, backtick, ``<(...)`` and ``>(...)`` replaced by a placeholder and
    unquoted newlines by ``;``; the bodies returned to be checked as commands. ``quotes=False`` reads the text as
    a here-document body, where quotes are literal and substitutions still run."""
    out, subs, quote, i, n = [], [], None, 0, len(text)
    while i < n:
        c = text[i]
        if quote == "'":
            out.append(c)
            quote = None if c == "'" else quote
            i += 1
            continue
        if c == "\\" and i + 1 < n:
            out.append(text[i:i + 2])
            i += 2
            continue
        opener = text[i:i + 2]
        if opener == "$(" or c == "`" or (quote is None and quotes and opener in ("<(", ">(")):
            close = "`" if c == "`" else ")"
            start = i + 1 if c == "`" else i + 2
            end = _match_close(text, start, close)
            subs.append(text[start:end])
            out.append(f" {_SUBST} " if quote is None else _SUBST)
            i = end + 1
            continue
        if quotes and c in "'\"" and quote is None:
            quote = c
        elif quotes and c == '"' and quote == '"':
            quote = None
        elif c == "\n" and quote is None:
            c = " ; "
        out.append(c)
        i += 1
    return "".join(out), subs


_HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1[^\n]*\n(.*?)(?:^|\n)[ \t]*\2[ \t]*(?:\n|$)", re.DOTALL)


def simple_commands(command: str, depth: int = 0) -> list[list[str]]:
    """Every simple command in ``command`` as its words: split on pipes, ``;``, ``&&``, ``||``, ``&``, subshells,
    braces, newlines, with command substitutions, process substitutions and unquoted here-documents' substitutions
    taken out and split the same way."""
    extra: list[str] = []

    def heredoc(m: re.Match) -> str:
        if not m.group(1):   # an unquoted here-document still runs its $(...) and backticks
            extra.extend(_lift(m.group(3), quotes=False)[1])
        return "<< " + m.group(2) + "\n"
    command = _HEREDOC.sub(heredoc, command.replace("\\\n", ""))
    command = re.sub(r"(?<![\w/.$-])\d+(?=[<>])", " ", command)   # 2>&1, 1<>file: the fd is not an argument
    text, subs = _lift(command)
    try:
        lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|()<>")
        lexer.whitespace_split = True
        lexer.commenters = ""
        words = list(lexer)
    except ValueError:   # unbalanced quotes: bash would refuse it; read it as plain words, which only denies more
        words = re.split(r"\s+", text)
    segs = _split_at(words, lambda w: bool(w) and all(ch in ";&|()<>" for ch in w) and not _REDIRECT.match(w))
    if depth < 8:
        for body in subs + extra:
            segs += simple_commands(body, depth + 1)
    return segs


def _fragments(word: str) -> list[str]:
    """The parts of a word that may name a path: the word, an option's value (``-oFILE``, ``--out=FILE``,
    ``of=FILE``), and the pieces of inline text split at quotes, brackets, commas and spaces."""
    found = {word}
    if word.startswith("-"):
        found.discard(word)
        if "=" in word:
            found.add(word.split("=", 1)[1])
        elif not word.startswith("--") and len(word) > 2:
            found.add(word[2:])
    found.update(re.split(r"[\s'\"(),;:=<>|&`{}\[\]]+", word))
    return [f for f in found if f and not f.startswith("-") and _SUBST not in f and len(f) < 4096]


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
    if name == "find" and any(a in ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf",
                                    "-fls") for a in args):
        return "find -exec/-delete"
    if name == "cp" and (re.search("[ls]", flags) or any(a in ("--link", "--symbolic-link") for a in args)):
        return "cp -l/-s links to the file instead of copying it"
    return None


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
    if name in CHECKED_READERS:
        if name == "xargs":   # it runs a command: that command must read only too
            rest, skip = [], False
            for k, a in enumerate(args):
                if skip:
                    skip = False
                elif a in ("-n", "-L", "-P", "-s", "-d", "-E", "-I", "-a", "--delimiter", "--arg-file"):
                    skip = True
                elif not a.startswith("-"):
                    rest = args[k:]
                    break
            return _program_refusal(rest or ["echo"])
        return name, _reader_refusal(name, args)
    if PROGRAMS.search(name):   # grpo-rlvr's own commands, review excepted (denied before this)
        sub = next((a for a in args if not a.startswith("-")), None)
        return name, None if sub is None or sub in PRODUCT_SUBCOMMANDS else f"`{name} {sub}`"
    if INTERPRETERS.match(name) and name.startswith("python"):
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
    return name, "it is not a program that only reads"


def read_only_refusal(command: str, cwd: str) -> str | None:
    """When the command touches a protected path, or an inspection file a folder is about to hold, the reason one
    of its simple commands is not a reader (or a redirection writes there); None when it only reads or touches
    nothing protected."""
    segs = simple_commands(command)
    assigned = {}
    for seg in segs:
        for w in seg:
            if m := re.match(r"^([A-Za-z_]\w*)=(.*)$", w):
                assigned[m.group(1)] = m.group(2)
    segs = [[b for x in seg for b in _braces(_expand(x, assigned))] for seg in segs]
    cwds = [cwd]
    for seg in segs:
        if seg and seg[0] in ("cd", "pushd") and len(seg) > 1:
            cwds.append(os.path.realpath(os.path.join(cwds[-1], os.path.expanduser(seg[1]))))
    # Where each inspection file lands: named in a word, or placed by a copy/move into a folder.
    names = [f for seg in segs for w in seg for f in _fragments(w)]
    for seg in segs:
        prog = seg[0].rsplit("/", 1)[-1] if seg else ""
        if prog in ("cp", "mv", "install", "rsync", "ln") and len(seg) > 2:
            ops = _operands(seg[1:])
            tdir = [seg[k + 1] for k, a in enumerate(seg[:-1]) if a in ("-t", "--target-directory")]
            dest = tdir[0] if tdir else (ops[-1] if len(ops) > 1 else None)
            if dest:
                names += [os.path.join(dest, os.path.basename(s.rstrip("/"))) for s in ops if s != dest]
    incoming: dict[str, set[str]] = {}
    for f in names:
        if os.path.basename(f) in INSPECTION_FILES:
            for c in cwds:
                p = os.path.realpath(os.path.join(c, os.path.expanduser(f)))
                incoming.setdefault(os.path.dirname(p), set()).add(os.path.basename(p))
    manifest_text = command if "manifest.json" in command else ""
    if manifest_text and not looks_like_manifest(manifest_text):   # copied from a file that reads like one
        manifest_text = next((f for f in names for c in cwds if os.path.isfile(os.path.join(c, f)) and
                              _file_looks_like_manifest(os.path.realpath(os.path.join(c, f)))), "")
        manifest_text = "format_version: seal:" if manifest_text else ""

    def guarded(path: str) -> bool:
        for c in cwds:
            if _GLOB.search(path):   # a pattern (find -name '*.py') counts by what it matches now
                found = [os.path.realpath(m) for m in glob.glob(os.path.join(c, os.path.expanduser(path)))[:WALK_LIMIT]]
                if any(_protected_resolved(p) or about_to_hold(p, incoming, manifest_text) for p in found):
                    return True
            elif protected_path(path, c) or any(about_to_hold(p, incoming, manifest_text) for p in resolve(path, c)):
                return True
        return False

    touched = next((f for f in names if guarded(f)), None)
    if touched is None:
        return None
    for seg in segs:
        for k, w in enumerate(seg[:-1]):
            target = seg[k + 1]
            if w in _WRITE_REDIRECT and not (w == ">&" and re.match(r"^(?:\d+|-)$", target)):
                if _SUBST in target or "$" in target or guarded(target):
                    return f"this command redirects into {target.replace(_SUBST, '$(...)')}: {READ_HINT}"
        plain = [x for k, x in enumerate(seg) if not _REDIRECT.match(x) and not (k > 0 and _REDIRECT.match(seg[k - 1]))]
        prog, why = _program_refusal(plain)
        if why is None and prog == "cp":
            paths, trees = _targets("cp", plain[1:], cwds[-1])
            if any(guarded(p) for p in paths) or any(holds_protected(t, c) for t in trees for c in cwds):
                why = "it copies onto an inspection file (or a folder about to hold one)"
        if why:
            return f"this command runs `{prog}` ({why}) where it touches {touched}: {READ_HINT}"
    return None


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


def _shell(command: str, cwd: str) -> str | None:
    if runs_review(command):
        return ("`grpo-rlvr review` records a person's verdicts; the agent never runs it. Ask the user to run "
                "`grpo-rlvr review DIR` in their own terminal and wait until they say it is done.")
    env = SETS_ENV.search(command)
    if env:
        return (f"this command sets {env.group(0).strip()[:60]!r}: PYTHONPATH, PYTHONSTARTUP, PYTHONHOME, "
                "PYTHONUSERBASE, LD_PRELOAD and LD_AUDIT can load code into grpo-rlvr's checks, and "
                "GRPO_RLVR_CACHE chooses the hashes they trust, so the agent does not set them; run the command "
                "without it.")
    target = writes_protected(command, cwd)
    if target:
        return (f"this command writes {target}: files under inspection/ (and a run folder's rendered files and "
                "records, startup hooks, the installed package) are written only by grpo-rlvr itself (`grpo-rlvr "
                "inspect`, `render`, `train RUN [--resume]`); the agent does not edit, move or delete them.")
    return read_only_refusal(command, cwd)


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


def decide(event: dict) -> str | None:
    """The reason to deny this tool call, or None to allow it."""
    tool = str(event.get("tool_name") or "")
    args = event.get("tool_input") or {}
    cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
    if not isinstance(args, dict):
        return None
    named = [v for k, v in args.items() if isinstance(v, str) and k in ("command", "cmd", "script", "shell_command")]
    if any(names_run_key(v, cwd) for v in named + _path_values(args)):   # reading it too: it signs the run records
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


if __name__ == "__main__":
    sys.exit(main())
