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
  (``inspect --out DIR``), a run's ``brief.lock.json``, a ``sitecustomize.py``, ``usercustomize.py`` or
  ``*.pth`` file, a ``*._pth`` file or ``pyvenv.cfg`` (they decide how even ``python -I -S`` starts), the
  installed package (``site-packages/grpo_rlvr``, its dist-info and editable finder), this plugin's own
  folder, the content-hash cache (``<grpo-rlvr cache>/file-hashes``) and the user's grpo-rlvr config folder
  (``~/.config/grpo-rlvr``, which holds the allowed signers of signed reviews).

How a write is seen: the Write, Edit, MultiEdit and NotebookEdit tools; MCP and other tools whose name says they
write (``write_file``, ``edit_file``, ``move_file``…), by every path-like argument, and any tool's ``command``
argument as a shell command; in a shell command, redirections, ``tee``, ``cp``, ``mv``, ``rm``, ``ln`` (either
end), ``install``, ``rsync``, ``tar`` (where it extracts, and the archive's member names), ``unzip``,
``sed -i``, ``perl -i``, ``awk -i inplace``, ``dd of=``, ``truncate``, ``touch``, ``chmod``, editors (``vim``,
``ed``, ``sponge``, ``sqlite3``…), ``git checkout/restore/rm/clean/reset --hard/stash -u`` and the like. Every
path is resolved before it is matched: against the call's ``cwd`` and the command's own ``cd`` (redirections
included), through ``$VAR`` set earlier in the command, ``~``, backslash-newlines, brace expansion, symlinks
(``realpath``) and globs (both the pattern, ``insp*``, and what it matches now). A recursive copy, move or
delete whose source or destination tree holds a protected path is denied too. Where the target only exists
at run time (inline code such as ``python -c``/``perl -e``/a here-doc that writes files, ``find -exec``/
``-delete``, ``xargs`` running a writer, a target built by ``$(...)`` or backticks), the command is denied when
it names a protected path or name anywhere.

Everything else is allowed (exit 0, no output), including ``grpo-rlvr gate``, ``inspect`` (which writes the
inspection itself) and reading inspection files. Input that is not a tool call it understands is allowed.

Limits: a shell command is parsed as words, not executed. A program the agent writes and runs (a Python
script that opens samples.jsonl, a name assembled at run time) is beyond what a command filter can see; the
gate's checks (terminal-only review, reading times, digests, content identity, a clean interpreter, signed
verdicts when the brief asks for them) are the layers behind this one. Standard library only: the hook runs
before the grpo-rlvr package may be installed.
"""

from __future__ import annotations

import fnmatch
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
                            r"file-hashes|checkpoints\.json")
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
READ_ONLY_TOOLS = {"Read", "Glob", "Grep", "LS", "NotebookRead", "WebFetch", "WebSearch", "TodoWrite", "Task"}
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


def _component_protected(part: str, last: bool) -> bool:
    """A path component (maybe a glob pattern) that names, or could name, a protected folder or file."""
    names = ["inspection", "inspection.bak-x"] + (["brief.lock.json", "sitecustomize.py", "usercustomize.py",
                                                   "x.pth"] if last else [])
    if _GLOB.search(part):
        return any(fnmatch.fnmatchcase(n, part) for n in names)
    return PROTECTED_DIR.match(part) is not None or (last and (part == "brief.lock.json" or bool(
        STARTUP_FILE.match(part))))


def _is_artifact(folder: str) -> bool:
    """A folder `grpo-rlvr inspect` wrote, whatever its name (`inspect --out DIR`): it holds both files."""
    return os.path.isfile(os.path.join(folder, "manifest.json")) and os.path.isfile(os.path.join(folder, "samples.jsonl"))


def _protected_resolved(path: str) -> bool:
    parts = [p for p in path.split("/") if p]
    if any(_component_protected(p, i == len(parts) - 1) for i, p in enumerate(parts)):
        return True
    if path.startswith("/") and (_is_artifact(path) or _is_artifact(os.path.dirname(path))):
        return True
    for i, p in enumerate(parts[:-1]):   # the installed package, its metadata and editable finder
        if p in ("site-packages", "dist-packages") and (
                parts[i + 1] == "grpo_rlvr" or re.match(r"^(?:__editable__[._]+)?grpo_rlvr", parts[i + 1])):
            return True
    root = _plugin_root()
    inside = [d for d in (root, _hash_cache(), _user_config()) if d]
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in inside)


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


DENY_WRITE = ("files under inspection/ hold the person's review, brief.lock.json the render's hashes, and "
              "startup hooks (sitecustomize, usercustomize, .pth), the installed grpo-rlvr, this plugin and its hash "
              "cache decide what the gate checks; the agent does not write them. Ask the user to run `grpo-rlvr "
              "review DIR` in their own terminal, or re-run `grpo-rlvr inspect` / `grpo-rlvr render`.")


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
        return (f"this command writes {target}: files under inspection/ (and brief.lock.json, startup hooks, the "
                "installed package) are written only by grpo-rlvr itself; the agent does not edit, move or "
                "delete them.")
    return None


def decide(event: dict) -> str | None:
    """The reason to deny this tool call, or None to allow it."""
    tool = str(event.get("tool_name") or "")
    args = event.get("tool_input") or {}
    cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
    if not isinstance(args, dict) or tool in READ_ONLY_TOOLS:
        return None
    if tool in ("Write", "Edit", "MultiEdit", "NotebookEdit"):
        path = str(args.get("file_path") or args.get("notebook_path") or "")
        return f"{path}: {DENY_WRITE}" if protected_path(path, cwd) else None
    for key in ("command", "cmd", "script", "shell_command"):
        if isinstance(args.get(key), str):
            reason = _shell(args[key], cwd or os.getcwd())
            if reason:
                return reason
    if tool != "Bash" and WRITE_VERB.search(tool.rsplit("__", 1)[-1]):
        for path in _path_values(args):
            if protected_path(path, cwd):
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
