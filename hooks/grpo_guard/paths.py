"""How a word of a command names paths: resolved from a folder (``~``, ``..``, symlinks), a glob pattern by what it
matches now, brace alternatives, an option's value. Nothing here raises: a link the hook may not read
(``/proc/1/cwd``) is kept as written, and a word holding a value known only at run time names no path."""

from __future__ import annotations

import os
import re

from grpo_guard.shell_words import SUBST

GLOB = re.compile(r"[*?\[]")
WALK_LIMIT = 5000     # entries looked at below a folder before a recursive write is judged
MAX_PATH = 4096


def real(path: str) -> str:
    """``os.path.realpath`` that never raises (a link the hook may not read stays as written)."""
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return os.path.normpath(path)


def inside(path: str, folders) -> bool:
    """``path`` is one of ``folders`` or below one."""
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in folders)


def names_a_path(word: str) -> bool:
    return bool(word) and SUBST not in word and "\0" not in word and len(word) < MAX_PATH


_resolved: dict[tuple[str, str | None], list[str]] = {}   # for one decision: cleared by forget()


def forget() -> None:
    """Drop what was resolved (a decision starts from the disk as it is now)."""
    _resolved.clear()


def resolve(word: str, cwd: str | None) -> list[str]:
    """The absolute paths ``word`` names from ``cwd``: resolved, and for a glob pattern each match now."""
    key = (word, cwd)
    if key not in _resolved:
        _resolved[key] = _resolve(word, cwd)
    return list(_resolved[key])


def _resolve(word: str, cwd: str | None) -> list[str]:
    word = str(word).strip("'\"")
    if not names_a_path(word):
        return []
    full = os.path.join(cwd or os.getcwd(), os.path.expanduser(word))
    found = [real(full)]
    if GLOB.search(full):
        import glob

        try:
            found += [real(m) for m in glob.glob(full)[:WALK_LIMIT]]
        except (OSError, ValueError, RecursionError):
            pass
    return found


def braces(word: str, limit: int = 64) -> list[str]:
    """Bash brace expansion (``out/{inspection,x}/f`` gives both paths), outermost group first, at most ``limit``."""
    m = re.search(r"(?<!\$)\{([^{}]*,[^{}]*)\}", word)
    if not m:
        return [word]
    out: list[str] = []
    for alt in m.group(1).split(","):
        out += braces(word[:m.start()] + alt + word[m.end():], limit)
        if len(out) >= limit:
            break
    return out[:limit]


def fragments(word: str) -> list[str]:
    """The parts of a word that may name a path: the word, an option's value (``-oFILE``, ``--out=FILE``,
    ``of=FILE``), and the pieces of inline text split at quotes, brackets, commas and spaces (but for ``.`` and
    ``..``: code that names the folder it runs in is judged as code that computes its paths, ``os.getcwd()``)."""
    found = {word}
    if word.startswith("-"):
        found.discard(word)
        if "=" in word:
            found.add(word.split("=", 1)[1])
        elif not word.startswith("--") and len(word) > 2:
            found.add(word[2:])
    # a piece of inline text that is only dots is a string of code ('a.b'.split('.')), not the folder it runs in
    found.update(p for p in re.split(r"[\s'\"(),;:=<>|&`{}\[\]]+", word) if p.strip(".") or p == word)
    return [f for f in found if f and not f.startswith("-") and names_a_path(f)]


def cd_into(args: list[str], base: str | None) -> tuple[str | None, str | None]:
    """(the folder ``cd ARGS`` moves to from ``base``, or None with why it is known only at run time)."""
    args = [a for a in args if a not in ("-L", "-P", "-e", "-@", "--")]
    target = args[0] if args else os.path.expanduser("~")
    if SUBST in target or target == "-" or "\0" in target:
        return None, f"cd {target.replace(SUBST, '$(…)')} (a folder chosen at run time)"
    return real(os.path.join(base or os.getcwd(), os.path.expanduser(target))), None
