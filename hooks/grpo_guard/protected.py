"""What the hook protects, and how a path (as written, resolved, or a glob) is matched against it.

By name, anywhere: a folder named ``inspection`` (or an ``inspection.bak-*`` backup) and all below it, a folder
that holds an inspection's ``manifest.json`` and ``samples.jsonl`` (``inspect --out DIR``), a run's
``brief.lock.json`` and the files ``render`` wrote beside it, a run's records (``checkpoints.json``,
``provenance.json``), startup hooks and the files that decide how even ``python -I -S`` starts
(``sitecustomize.py``, ``usercustomize.py``, ``*.pth``, ``*._pth``, ``pyvenv.cfg``), every installed library (below
a ``site-packages`` or ``dist-packages`` folder), and Claude Code's settings (``.claude/settings*.json``, which can
turn hooks off).

Whole folders and files (:func:`anchors`): this plugin (its root, and the hook's own), its data folder (the
private grpo-rlvr environment), the hash cache, the signed-review policy (``~/.config/grpo-rlvr`` under ``$HOME``
and the password database's home, ``$XDG_CONFIG_HOME``'s, and ``/etc/grpo-rlvr``), the run key's folder, the
standard library of the Python the hook runs under, Claude Code's user and managed settings and its plugins.

The programs the hook's launcher may start (:func:`launch_paths`: each interpreter it looks for, the paths on
``PATH`` that would be found before it, and each link on the way) may not be written either: a ``/bin/true``
linked over one would turn the hook off. Removing one only sends the launcher to the next.

A folder *above* an anchor (:func:`above_protected`) is a path too: moving or emptying ``~/.config`` removes the
signers as surely as deleting the file.
"""

from __future__ import annotations

import fnmatch
import os
import re
import sys

from grpo_guard.paths import GLOB, WALK_LIMIT, inside, real, resolve
from grpo_guard.paths import forget as paths_forget

PROTECTED_DIR = re.compile(r"^inspection(?:\.bak-[^/]*)?$")
BACKUP_DIR = re.compile(r"^inspection\.bak-[^/]+$")
# Startup hooks, and the files that decide how the interpreter starts even under `python -I -S`: a `<name>._pth`
# beside the executable replaces sys.path (and may re-enable site), `pyvenv.cfg` names the Python home.
STARTUP_FILE = re.compile(r"^(?:sitecustomize\.py|usercustomize\.py|.*\.pth|.*\._pth|pyvenv\.cfg)$")
CLAUDE_SETTINGS = re.compile(r"^settings(?:\.[\w-]+)?\.json$")   # .claude/settings.json, settings.local.json
# A word naming something protected, for commands whose targets only exist at run time.
PROTECTED_WORD = re.compile(r"inspection|brief\.lock\.json|sitecustomize|usercustomize|\.pth\b|\._pth\b|pyvenv\.cfg|"
                            r"file-hashes|checkpoints\.json|provenance\.json|\.claude/settings|disableAllHooks")
# What `grpo-rlvr render` writes into a run folder (the folder that holds brief.lock.json), and the records a
# training writes into its output/ (the ledger and the signed starts): only grpo-rlvr writes them.
RUN_FILES = ("train.py", "grpo_config.yaml", "brief.lock.json", "launch.sh", "accelerate.yaml", "slurm.sh")
RUN_RECORDS = ("checkpoints.json", "provenance.json")
# The per-user key that signs those records (grpo_rlvr/records/run_key.py): the agent neither reads nor writes it.
RUN_KEY_WORD = re.compile(r"run-key|\.local/share/grpo-rlvr(?![\w.-])")   # not the plugin's grpo-rlvr-plugin/
SYSTEM_POLICY_DIR = "/etc/grpo-rlvr"   # root's signed-review policy (grpo_rlvr/protected_targets.py)
LIBRARY_DIRS = ("site-packages", "dist-packages")
HOOK_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # the plugin's root

_cache: dict[str, object] = {}


def _cached(fn):
    def wrapper():
        if fn.__name__ not in _cache:
            _cache[fn.__name__] = fn()
        return _cache[fn.__name__]
    wrapper.__name__, wrapper.__doc__ = fn.__name__, fn.__doc__
    return wrapper


def _homes() -> list[str]:
    """``$HOME`` and the home the password database names (grpo-rlvr reads the latter whatever HOME says)."""
    homes = [os.path.expanduser("~")]
    try:
        import pwd

        homes.append(pwd.getpwuid(os.getuid()).pw_dir)
    except (ImportError, KeyError):
        pass
    return list(dict.fromkeys(homes))


@_cached
def run_key_dirs() -> tuple[str, ...]:
    """The folder of grpo-rlvr's run key under each home, as written and resolved (it also holds the account's log
    of inspection draws, draws.jsonl, found like the key through the password database's home)."""
    dirs = set()
    for h in _homes():
        d = os.path.join(h, ".local", "share", "grpo-rlvr")
        dirs.update({os.path.normpath(d), real(d)})
    return tuple(sorted(dirs))


def plugin_data_dir() -> str:
    """Where ``bin/grpo-rlvr-plugin`` keeps its private grpo-rlvr environment."""
    return os.environ.get("CLAUDE_PLUGIN_DATA") or os.path.join(
        os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share"),
        "grpo-rlvr-plugin")


def _claude_dirs() -> list[str]:
    config = os.environ.get("CLAUDE_CONFIG_DIR")
    return [config] if config else [os.path.join(h, ".claude") for h in _homes()]


@_cached
def anchors() -> tuple[str, ...]:
    """The folders and files protected whole: this plugin and the hook, the plugin's data folder, the hash cache,
    the signed-review policy, the run key's folder, the hook interpreter's standard library, and Claude Code's
    settings and plugins."""
    root = os.environ.get("CLAUDE_PLUGIN_ROOT")
    cache = os.environ.get("GRPO_RLVR_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "grpo-rlvr")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    found = [root, HOOK_ROOT, plugin_data_dir(), os.path.join(cache, "file-hashes"), os.path.join(xdg, "grpo-rlvr"),
             *(os.path.join(h, ".config", "grpo-rlvr") for h in _homes()), SYSTEM_POLICY_DIR, *run_key_dirs(),
             os.path.dirname(os.__file__) if getattr(os, "__file__", None) else None,
             "/etc/claude-code", "/Library/Application Support/ClaudeCode",
             *(os.path.join(h, ".claude.json") for h in _homes())]
    for d in _claude_dirs():
        found += [os.path.join(d, "settings.json"), os.path.join(d, "settings.local.json"), os.path.join(d, "plugins")]
    return tuple(dict.fromkeys(p for f in found if f for p in (os.path.normpath(f), real(f))))


def _link_chain(path: str | None) -> list[str]:
    """``path``, each link it goes through, and where it ends."""
    chain: list[str] = []
    while path and len(chain) < 16 and path not in chain:
        chain.append(os.path.normpath(path))
        try:
            target = os.readlink(path)
        except (OSError, ValueError):
            break
        path = os.path.join(os.path.dirname(path), target)
    if chain:
        chain.append(real(chain[0]))
    return chain


def shebang_python(script: str | None) -> str | None:
    """The interpreter a ``grpo-rlvr`` console script names on its ``#!`` line, when it is a Python."""
    try:
        with open(script or "", "rb") as fh:
            first = fh.readline(512).decode(errors="replace")
    except (OSError, ValueError):
        return None
    parts = first[2:].split() if first.startswith("#!") else []
    return parts[0] if parts and "python" in os.path.basename(parts[0]) else None


def _on_path(name: str) -> tuple[list[str], str | None]:
    """Every place on PATH where ``name`` would be found before (and at) the one that is found, and that one."""
    places = []
    for d in os.environ.get("PATH", "").split(os.pathsep):
        if not d.startswith("/"):
            continue
        candidate = os.path.join(d, name)
        places.append(candidate)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return places, candidate
    return places, None


@_cached
def launch_paths() -> tuple[str, ...]:
    """What ``hooks/guard_review.sh`` may start, in its order (GRPO_RLVR_BIN's interpreter, grpo-rlvr's on PATH,
    the plugin's environment, python3 on PATH), the PATH entries that would be found first, each link on the way,
    and the interpreter running now."""
    bin_ = os.environ.get("GRPO_RLVR_BIN")
    grpo_places, grpo = _on_path("grpo-rlvr")
    py_places, py3 = _on_path("python3")
    found = [*_link_chain(bin_), *_link_chain(shebang_python(bin_)), *grpo_places, *_link_chain(grpo),
             *_link_chain(shebang_python(grpo)), *_link_chain(os.path.join(plugin_data_dir(), "venv", "bin", "python")),
             *py_places, *_link_chain(py3), *_link_chain(sys.executable)]
    return tuple(dict.fromkeys(p for p in found if p))


# ------------------------------------------------------------------------------------------------ matching


def _component_protected(part: str, last: bool, parent: str) -> bool:
    """A path component (maybe a glob pattern) that names, or could name, a protected folder or file."""
    if parent == ".claude" and last and (CLAUDE_SETTINGS.match(part) or (GLOB.search(part) and fnmatch.fnmatchcase(
            "settings.json", part))):
        return True
    names = ["inspection", "inspection.bak-x"] + (["brief.lock.json", "sitecustomize.py", "usercustomize.py",
                                                   "x.pth", *RUN_RECORDS] if last else [])
    if GLOB.search(part):
        return any(fnmatch.fnmatchcase(n, part) for n in names)
    return PROTECTED_DIR.match(part) is not None or (last and (part in ("brief.lock.json", *RUN_RECORDS) or bool(
        STARTUP_FILE.match(part))))


def _in_run_folder(path: str) -> bool:
    """A file ``render`` writes, in a folder that holds a brief.lock.json (or a pattern that could name one)."""
    name, folder = os.path.basename(path), os.path.dirname(path)
    if not os.path.isfile(os.path.join(folder, "brief.lock.json")):
        return False
    return name in RUN_FILES or (bool(GLOB.search(name)) and any(fnmatch.fnmatchcase(f, name) for f in RUN_FILES))


def is_artifact(folder: str) -> bool:
    """A folder `grpo-rlvr inspect` wrote, whatever its name (`inspect --out DIR`): it holds both files, or a
    manifest.json that reads like an inspection's (a forgery being assembled in a fresh folder)."""
    manifest = os.path.join(folder, "manifest.json")
    return os.path.isfile(manifest) and (os.path.isfile(os.path.join(folder, "samples.jsonl"))
                                         or file_looks_like_manifest(real(manifest)))


def by_name(path: str) -> bool:
    """Protected by what the path says: a protected folder or file name, an installed library, an anchor."""
    parts = [p for p in path.split("/") if p]
    if any(_component_protected(p, i == len(parts) - 1, parts[i - 1] if i else "") for i, p in enumerate(parts)):
        return True
    if any(p in LIBRARY_DIRS for p in parts[:-1]):   # an installed library: grpo-rlvr, or one training imports
        return True
    return inside(path, anchors())


def protected_resolved(path: str) -> bool:
    """An absolute, resolved path that is protected (by name, or by what is on disk around it)."""
    if by_name(path):
        return True
    return path.startswith("/") and (is_artifact(path) or is_artifact(os.path.dirname(path)) or _in_run_folder(path))


def protected_path(path: str, cwd: str | None = None) -> bool:
    """The path as written, or any path it resolves to (cwd, ``~``, symlinks, glob matches), is protected."""
    written = str(path).strip("'\"")
    if not written or "\0" in written:
        return False
    if protected_resolved(written):
        return True
    return any(protected_resolved(p) for p in resolve(written, cwd))


def launch_path(path: str, cwd: str | None = None) -> bool:
    """The path is one the hook's launcher may start, or one that would be found before it."""
    found = launch_paths()
    return any(p in found for p in (os.path.normpath(path), *resolve(path, cwd)))


def is_backup(path: str) -> bool:
    """An ``inspection.bak-*`` folder itself (what ``inspect --force`` keeps): removing it whole is allowed."""
    return bool(BACKUP_DIR.match(os.path.basename(path.rstrip("/")))) and not inside(path, anchors())


# ------------------------------------------------------------------------------------------- folders and trees

_PRUNED = {".git", "node_modules", "__pycache__", *LIBRARY_DIRS}


_below: dict[tuple, list[str]] = {}   # for one decision, like paths._resolved


def protected_below(path: str, cwd: str | None, limit: int = WALK_LIMIT, review_only: bool = False) -> list[str]:
    """See :func:`_protected_below` (remembered for the rest of the decision)."""
    key = (path, cwd, limit, review_only)
    if key not in _below:
        _below[key] = _protected_below(path, cwd, limit, review_only)
    return list(_below[key])


def _protected_below(path: str, cwd: str | None, limit: int = WALK_LIMIT, review_only: bool = False) -> list[str]:
    """The protected paths in the tree of the folder ``path`` (searched up to ``limit`` entries). With
    ``review_only``, inspections, run files and records and startup hooks outside a virtual environment
    (``.git``, ``node_modules`` and virtual environments are not entered): what a whole-tree writer (git, patch)
    could reach."""
    found: list[str] = []
    seen = 0
    for top in resolve(path, cwd):
        if not os.path.isdir(top):
            continue
        for dirpath, dirs, files in os.walk(top):
            if review_only:
                if "pyvenv.cfg" in files and dirpath != top:
                    dirs[:] = []
                    continue
                dirs[:] = [d for d in dirs if d not in _PRUNED]
            for name in dirs + files:
                seen += 1
                full = os.path.join(dirpath, name)
                if protected_resolved(full) and not (review_only and name == "pyvenv.cfg"):
                    found.append(full)
                    if name in dirs:
                        dirs.remove(name)   # the folder counts whole
            if seen > limit:
                return found
    return found


def holds_protected(path: str, cwd: str | None) -> bool:
    """A folder at ``path`` whose tree (searched up to ``WALK_LIMIT`` entries) holds a protected path, or that
    is above an anchor."""
    return bool(protected_below(path, cwd)) or any(a != p and inside(a, [p]) for p in resolve(path, cwd)
                                                   for a in anchors())


def above_protected(path: str, cwd: str | None) -> str | None:
    """The protected folder ``path`` is above, when it names an existing folder that holds one: an anchor
    (``~/.config/grpo-rlvr``, the run key's folder…) by where it is, an inspection or a run's records by a walk.
    None otherwise."""
    for p in resolve(path, cwd):
        if p == "/":
            continue
        below = next((a for a in anchors() if a != p and inside(a, [p])), None)
        if below:
            return below
        if os.path.isdir(p) and protected_below(p, None, WALK_LIMIT, review_only=True):
            return f"an inspection or a run's records under {p}"
    return None


# ------------------------------------------------------------------------------------ a folder about to hold one

# The files an inspection holds. A folder "about to hold" one (it holds, or this call writes, the other file, or a
# manifest.json that reads like an inspection's) is protected before `inspect` would have finished it.
INSPECTION_FILES = ("manifest.json", "samples.jsonl", "report.html")
MANIFEST_KEYS = ("format_version", "samples_digest", "seal", "fingerprint", "sample_count", "prompt_count")
_MANIFEST_KEY = re.compile(r"[\"']?\b(" + "|".join(MANIFEST_KEYS) + r")\b[\"']?\s*:")
_manifests: dict[str, bool] = {}


def forget() -> None:
    """Drop what one decision learnt from the disk (walks, manifests, resolved paths)."""
    _below.clear()
    _manifests.clear()
    paths_forget()


def looks_like_manifest(text: str) -> bool:
    """Text that carries two or more of an inspection manifest's keys (format_version, seal, samples_digest…)."""
    return len(set(_MANIFEST_KEY.findall(text or ""))) >= 2


def file_looks_like_manifest(path: str) -> bool:
    if path not in _manifests:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                _manifests[path] = looks_like_manifest(f.read(1 << 16))
        except (OSError, ValueError):
            _manifests[path] = False
    return _manifests[path]


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


def guarded(path: str, cwd: str | None, incoming: dict[str, set[str]] | None = None, content: str = "") -> bool:
    """Protected, or an inspection file a folder is about to hold."""
    return protected_path(path, cwd) or any(about_to_hold(p, incoming, content) for p in resolve(path, cwd))
