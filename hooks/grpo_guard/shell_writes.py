"""The known writers of a shell command, each with its own reason: redirections, ``tee``, ``cp``, ``mv``, ``rm``,
``ln``, ``rsync``, ``tar`` (where it extracts, and the archive's member names), ``sed -i``, editors, inline code
that writes, ``find -exec``, ``xargs``, and the writers that name no target: ``git`` branch switches, merges,
rebases, pulls, cherry-picks, ``git apply``/``am``/``stash``/``reset --hard``/``clean`` and ``patch``, each a
write to the whole tree they run in (the repository's top for git, the folder ``patch`` works in)."""

from __future__ import annotations

import os
import re
import tarfile

from grpo_guard.protected import PROTECTED_WORD, WALK_LIMIT, holds_protected, holds_review, protected_path

# Inline code (python -c, perl -e, a here-doc) that writes, renames or deletes files.
CODE_WRITES = re.compile(r"open\s*\([^,()]*,\s*(?:mode\s*=\s*)?['\"][rbt]*[wax+]|\.write\b|write_(?:text|bytes)|unlink|remove|"
                         r"rename|replace\s*\(|rmtree|shutil|copyfile|move|truncate|symlink|chmod|mkdir|makedirs|"
                         r"os\.system|subprocess|popen|\bdump\s*\(|writeFile|appendFile|File\.write|sysopen|"
                         r"open\s*\(?\s*\w*\s*,?\s*['\"]\s*[>+]", re.IGNORECASE)
INTERPRETERS = re.compile(r"^(?:python[\d.]*|pypy[\d.]*|perl|ruby|node|nodejs|deno|bun|php|lua|Rscript|julia|osascript)$")
WRITERS = {"tee", "cp", "mv", "rm", "dd", "truncate", "touch", "ln", "install", "rsync", "chmod", "chown", "chgrp",
           "unlink", "shred", "rmdir", "mkdir", "sed", "perl", "ruby", "awk", "gawk", "patch", "tar", "unzip",
           "setfacl", "chattr", "sponge", "vi", "vim", "nvim", "ed", "ex", "nano", "emacs", "sqlite3", "git", "find",
           "xargs"}
EDITORS = {"sponge", "vi", "vim", "nvim", "ed", "ex", "nano", "emacs", "sqlite3"}
# git subcommands that write files: of the paths named (checkout/restore/rm/mv with paths), else of the whole tree
# (a branch switch, a merge, a rebase, a pull, a cherry-pick, a patch: the files they write are named nowhere).
GIT_PATH_WRITES = {"checkout", "restore", "rm", "mv"}
GIT_TREE_WRITES = {"checkout", "switch", "merge", "rebase", "pull", "cherry-pick", "revert", "am", "apply", "stash",
                   "reset", "clean", "read-tree", "checkout-index", "restore", "bisect", "worktree", "filter-branch",
                   "sparse-checkout", "submodule"}
COPIERS = {"cp", "install", "rsync"}
WRAPPERS = {"sudo", "env", "command", "nohup", "exec", "time", "nice", "ionice", "stdbuf", "timeout", "doas"}


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
    if prog == "git":
        return _git_targets(args, cwd)
    if prog == "patch":   # writes the files its diff names, under -d DIR (or here)
        folder = next((args[k + 1] for k, a in enumerate(args[:-1]) if a in ("-d", "--directory")), cwd)
        return [], [os.path.join(cwd, folder)]
    trees = operands if prog in ("rm", "mv", "chmod", "chown", "chgrp") and (recursive or prog == "mv") else []
    return operands, trees


def _repository_top(folder: str) -> str | None:
    """The top of the git work tree that holds ``folder`` (None outside one)."""
    here = os.path.realpath(folder)
    while True:
        if os.path.exists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _git_writes_files(sub: str, rest: list[str], operands: list[str]) -> bool:
    """Whether this git subcommand writes the work tree: not ``stash list``/``show``, not a ``reset`` that keeps
    the files (``--soft``, mixed), not a new branch made where HEAD is (``checkout -b NAME``, ``switch -c NAME``)."""
    if sub == "stash":
        return rest[:1] not in (["list"], ["show"])
    if sub == "reset":
        return any(a in ("--hard", "--merge", "--keep") for a in rest)
    if sub in ("checkout", "switch") and any(a in ("-b", "-B", "-c", "-C", "--create", "--force-create", "--orphan")
                                           for a in rest):
        return len(operands) > 1   # a start point: the files of another commit
    return True


def _git_targets(args: list[str], cwd: str) -> tuple[list[str], list[str]]:
    """(paths, trees) a git command writes: the paths it names, or its whole work tree."""
    k = 0
    while k < len(args) and args[k].startswith("-"):   # git -C DIR / -c key=value before the subcommand
        if args[k] == "-C" and k + 1 < len(args):
            cwd = os.path.join(cwd, args[k + 1])
            k += 1
        elif args[k] == "-c":
            k += 1
        k += 1
    sub, rest = (args[k], args[k + 1:]) if k < len(args) else ("", [])
    paths = [a for a in (rest[rest.index("--") + 1:] if "--" in rest else rest) if not a.startswith("-")]
    if sub in ("restore", "rm", "mv") and paths and "." not in paths:
        return paths, []
    if sub == "checkout" and "--" in rest and paths and "." not in paths:
        return paths, []
    if sub not in GIT_TREE_WRITES or not _git_writes_files(sub, rest, paths):
        return [], []
    return paths, [_repository_top(cwd) or cwd]   # outside a repository git writes nothing: judged as here


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


def _command_words(seg: list[str]) -> list[str]:
    """A simple command without its redirections, prefix assignments and wrappers (sudo, env, nohup…)."""
    seg = [x for i, x in enumerate(seg) if x not in _REDIRECTS and not (i > 0 and seg[i - 1] in _REDIRECTS)]
    while seg and (re.match(r"^[A-Za-z_]\w*=", seg[0]) or seg[0].rsplit("/", 1)[-1] in WRAPPERS):
        seg = [x for x in seg[1:] if "=" not in x or x.startswith("of=")] if seg[0].rsplit("/", 1)[-1] in (
            "env", "sudo") else seg[1:]
    return seg


_REDIRECTS = (">", ">>", ">|", "&>", "&>>", "<", "<<", "<<<", "<>", ">&")


def _segment_write(seg: list[str], command: str, cwd: str) -> str | None:
    """The protected path this simple command writes (its redirections, its program's targets), or None."""
    for target in _redirect_targets(seg):
        if protected_path(target, cwd):
            return target
    seg = _command_words(seg)
    prog = seg[0].rsplit("/", 1)[-1] if seg else ""
    if prog == "find":
        roots = [a for a in seg[1:] if not a.startswith(("-", "(", "!"))][:1] or ["."]
        if _dynamic_write(seg, command) and any(holds_protected(r, cwd) or protected_path(r, cwd) for r in roots):
            return f"{roots[0]} (find -exec/-delete in a tree that holds an inspection)"
        return None
    if prog not in WRITERS or prog == "xargs":
        return None
    paths, trees = _targets(prog, seg[1:], cwd)
    target = next((t for t in paths if protected_path(t, cwd)), None)
    if target:
        return target
    if prog in ("git", "patch"):   # writes to a whole tree: what they may write is what the tree holds
        tree = next((t for t in trees if protected_path(t, cwd) or holds_review(t, cwd)), None)
        return (f"{tree} (`{prog} {' '.join(seg[1:3])}` writes files anywhere in this tree, which holds an inspection "
                "or a run's files and records)") if tree else None
    tree = next((t for t in trees if holds_protected(t, cwd)), None)
    return f"{tree} (it holds an inspection, a lock or a startup hook)" if tree else None


def writes_protected(command: str, reading, cwd: str | None = None) -> str | None:
    """The protected path a known writer in ``command`` (read as ``reading``) writes, or None."""
    cwd = cwd or os.getcwd()
    command = command.replace("\\\n", "")   # a backslash-newline joins two lines into one word, as bash does
    segs = reading.segments + reading.nested
    words = [w for seg in segs for w in seg]
    dynamic = None
    for seg in segs:
        seg = [b for x in seg for b in _braces(_expand(x, reading.assigned))]
        plain = _command_words(seg)
        if plain and plain[0] in ("cd", "pushd") and len(plain) > 1:   # later commands run from there
            cwd = os.path.realpath(os.path.join(cwd, os.path.expanduser(plain[1])))
            continue
        dynamic = dynamic or _dynamic_write(plain, command)
        found = _segment_write(seg, command, cwd)
        if found:
            return found
    plain = _unquoted(command)
    built = re.search(r">\|?\s*[^\s;&|]*(?:\$\(|`)", plain) or any(
        re.search(rf"(?:^|[\s;&|(/]){re.escape(w)}\b[^;&|\n]*(?:\$\(|`|[<>]\()", plain) for w in WRITERS)
    if built and _mentions_protected(command, words, cwd):
        dynamic = dynamic or "a write whose target is built by command substitution"
    if dynamic and _mentions_protected(command, words, cwd):
        return f"a protected path ({dynamic}, naming an inspection, a lock or a startup file)"
    return None
