"""What the hook protects: the paths, how a path (as written, resolved, or a glob) is matched against them, and
the folders that hold them or are about to.

Protected: anything under a folder named ``inspection`` (or an ``inspection.bak-*`` backup) or in any folder that
holds an inspection's ``manifest.json`` and ``samples.jsonl`` (``inspect --out DIR``), an inspection file a folder
is about to hold, a run's ``brief.lock.json`` and the files ``render`` wrote beside it, a run's records
(``checkpoints.json``, ``provenance.json``, by name, anywhere), startup hooks and the files that decide how even
``python -I -S`` starts (``sitecustomize.py``, ``usercustomize.py``, ``*.pth``, ``*._pth``, ``pyvenv.cfg``), every
installed library (anything under a ``site-packages`` or ``dist-packages`` folder: grpo-rlvr and the TRL,
transformers, torch it trains with), this plugin's own folder, the content-hash cache, the signed-review policy
(the user's ``~/.config/grpo-rlvr`` under ``$HOME`` and the password database's home, ``$XDG_CONFIG_HOME``'s, and
the system's ``/etc/grpo-rlvr``) and the run key's folder (``~/.local/share/grpo-rlvr``).

A folder *above* a protected path (:func:`above_protected`) is a path too: moving or emptying ``~/.config`` removes
the signers as surely as deleting the file.
"""

from __future__ import annotations

import fnmatch
import functools
import glob
import os
import re

from grpo_guard.bash_reading import SUBST as _SUBST

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
_GLOB = re.compile(r"[*?\[]")
WALK_LIMIT = 5000   # entries looked at below a folder before a recursive write is judged
SYSTEM_POLICY_DIR = "/etc/grpo-rlvr"   # root's signed-review policy (grpo_rlvr/protected_targets.py)
LIBRARY_DIRS = ("site-packages", "dist-packages")


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
    if any(p in LIBRARY_DIRS for p in parts[:-1]):   # an installed library: grpo-rlvr, or one training imports
        return True
    return _inside(path, anchor_dirs())


def anchor_dirs() -> list[str]:
    """The folders protected whole: this plugin, the hash cache, the signed-review policy (the user's, under both
    homes, and the system's) and the run key's folder."""
    return [d for d in (_plugin_root(), _hash_cache(), _user_config(), _account_config(), SYSTEM_POLICY_DIR,
                        *_run_key_dirs()) if d]


def protected_path(path: str, cwd: str | None = None) -> bool:
    """The path as written, or any path it resolves to (cwd, ``~``, symlinks, glob matches), is protected."""
    written = str(path).strip("'\"")
    if not written or "\0" in written:
        return False
    if _protected_resolved(written):
        return True
    return any(_protected_resolved(p) for p in resolve(written, cwd))


def resolve(path: str, cwd: str | None) -> list[str]:
    if "\0" in path:   # a word built by a substitution: judged by what the substitution runs, not as a path
        return []
    full = os.path.join(cwd or os.getcwd(), os.path.expanduser(path))
    found = [os.path.realpath(full)]
    if _GLOB.search(full):
        found += [os.path.realpath(m) for m in glob.glob(full)[:WALK_LIMIT]]
    return found


_PRUNED = {".git", "node_modules", "__pycache__", *LIBRARY_DIRS}


def holds_review(path: str, cwd: str | None, limit: int = 4 * WALK_LIMIT) -> bool:
    """A folder whose tree holds an inspection, a run's files or records, or a startup hook outside a virtual
    environment (searched up to ``limit`` entries; ``.git``, ``node_modules`` and virtual environments, which no
    branch switch or patch writes, are not entered)."""
    seen = 0
    for top in resolve(path, cwd):
        if not os.path.isdir(top):
            continue
        for dirpath, dirs, files in os.walk(top):
            if "pyvenv.cfg" in files and dirpath != top:
                dirs[:] = []
                continue
            dirs[:] = [d for d in dirs if d not in _PRUNED]
            for name in dirs + files:
                seen += 1
                full = os.path.join(dirpath, name)
                if _protected_resolved(full) and not (name == "pyvenv.cfg"):
                    return True
            if seen > limit:
                return False
    return False


def above_protected(path: str, cwd: str | None) -> str | None:
    """The protected folder ``path`` is above, when it names an existing folder that holds one: an anchor
    (``~/.config/grpo-rlvr``, the run key's folder…) by where it is, an inspection or a run's records by a walk
    (:func:`holds_review`). None otherwise."""
    for p in resolve(path, cwd):
        below = next((a for a in anchor_dirs() if a != p and _inside(a, [p])), None)
        if below:
            return below
        if os.path.isdir(p) and holds_review(p, None, WALK_LIMIT):
            return f"an inspection or a run's records under {p}"
    return None


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



# The files an inspection holds. A folder "about to hold" one (it holds, or this call writes, the other file, or a
# manifest.json that reads like an inspection's) is protected before `inspect` would have finished it.
INSPECTION_FILES = ("manifest.json", "samples.jsonl", "report.html")
MANIFEST_KEYS = ("format_version", "samples_digest", "seal", "fingerprint", "sample_count", "prompt_count")
_MANIFEST_KEY = re.compile(r"[\"']?\b(" + "|".join(MANIFEST_KEYS) + r")\b[\"']?\s*:")


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


