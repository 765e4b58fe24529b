"""The identity of the model and the data a review read: their content and resolved commit, never their spelling.

Identity is taken from what the loaders may read, not from a list of names they are thought to read: every file
under the folder, at any depth, symlinked files and folders followed (``walk``; a linked folder that leads back
to one above it is recorded as such, not entered again). transformers reads ``additional_chat_templates/*.jinja``
and prefers its ``default.jinja`` to ``chat_template.jinja``, ``trust_remote_code`` runs whatever ``auto_map``
names (``LICENSE_impl.py`` too), and ``datasets`` loads ``data/LICENSE.jsonl``: no file is left out for its name.
What is left out is a place, top level only, that no loader reads (tests/identity/test_compute_loader_reads.py records
every file transformers, peft and datasets open, and loads with and without these folders):

- ``.git/`` (a clone's store, which can hold the weights a second time) and ``.cache/huggingface/`` (the
  metadata ``hf download --local-dir`` writes: a commit, an etag and the download's time per file, which
  changes when the same bytes are downloaded again);
- in a model folder only, ``checkpoint-*/``: the trainer's checkpoints saved beside a model. Loading the folder
  never reads them (``model_init_kwargs.subfolder`` is refused in the brief), and each can hold the weights with
  their optimizer state, which every check before training would read again. A dataset folder keeps them: there
  ``datasets`` loads ``checkpoint-1/train.jsonl`` like any other data file.

An ``auto_map`` (``config.json``, ``tokenizer_config.json``) whose module is a path (``checkpoint-1/modeling.Policy``,
an absolute file) is refused: with ``trust_remote_code`` transformers runs that file, which the identity does not
hold (``_refuse_nested_auto_map``).

In detail:

- A local model folder: the SHA-256 of each file by relative name, plus the shards a ``*.index.json`` names
  wherever they are (transformers joins those names to the folder, so ``../a.safetensors`` or
  ``checkpoint-9/a.safetensors`` load as weights and count as such).
- A PEFT adapter folder (it has ``adapter_config.json``): its own files as above (a tokenizer saved with the
  adapter too), plus the identity of the base model its config names (``base_model_name_or_path``, with
  ``revision``).
- A hub model or dataset: the commit its revision resolves to in the local Hugging Face cache (``main`` when the
  brief names none, so an unpinned id is pinned to the commit inspect saw) and the content hash of each file of
  that snapshot, found as in a folder and checked against the bytes (``hub_cache``). Not in the cache: the commit
  is ``None``, which matches no review. ``render`` writes that commit into the run, and the run loads that
  snapshot's folder.
- A local dataset file: its SHA-256; a folder: each file's SHA-256 by relative name (``README.md`` and
  ``.huggingface.yaml`` among them: their ``configs`` choose the files ``datasets`` loads). A folder whose
  ``configs`` name files outside it, hidden files or URLs is refused: those would load from places the identity
  does not hold. With the split, columns, subset and prompt settings, which change what the review read.

A folder renamed, or a file added anywhere under it, changes the identity, and ``changes`` names the files. Old
inspections (made when sub-folders and names such as ``LICENSE*`` were left out) fail rule 4 with the files added
since: re-inspect once.

Paths resolve through symlinks and the hash is of the bytes, so ``./model``, ``/abs/model`` and a copy of the
folder elsewhere have one identity. Hashes come from ``hash_cache`` (read once, then checked by stat).
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
from pathlib import Path

import yaml

from grpo_rlvr.errors import InputFileError
from grpo_rlvr.identity import hub_cache
from grpo_rlvr.identity.hash_cache import sha256_files

ADAPTER_CONFIG = "adapter_config.json"
DATA_CARDS = ("README.md", ".huggingface.yaml")   # read by `datasets` for a folder's configs (data_files)
# Top-level sub-folders no loader reads (tests/identity/test_compute_loader_reads.py proves it for transformers, peft and
# datasets, file by file): git's store and the metadata `hf download --local-dir` writes (a commit, an etag and a
# download time per file: it changes on every re-download of the same bytes).
NEVER_READ = (".git", ".cache/huggingface")
# A model folder's trainer checkpoints (top level): loading the folder never reads them (``subfolder=`` is refused
# in the brief), and each can hold the model twice over with its optimizer state. A shard an index names there
# still counts (``_index_shards``).
CHECKPOINTS = "checkpoint-*"
MODEL_LEFT_OUT = (*NEVER_READ, CHECKPOINTS)
MAX_FILES = 1_000_000   # names in one folder's identity; more is refused (a tree of links that multiplies names)
LOOP = "loop:"        # the identity of a linked folder that leads back to a folder above it


def _left_out(rel: str, leave_out: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(rel, pat) for pat in leave_out)


def _hash_named(files: dict[str, Path], what: str) -> dict[str, str]:
    try:
        digests = sha256_files(list(files.values()))
    except OSError as e:
        raise InputFileError(f"{e.filename}: cannot read this {what} file ({e.strerror}); make it readable, or "
                             "point the brief at a copy you can read") from None
    return {name: digests[p] for name, p in sorted(files.items())}


def walk(folder: Path, leave_out: tuple[str, ...] = NEVER_READ) -> tuple[dict[str, Path], dict[str, str]]:
    """Every regular file under ``folder`` at any depth, symlinked files and folders followed, by relative name
    (``{name: path}``), and the linked folders that lead back to a folder above them (``{name/: "loop:<that
    folder>"}``: such a link is part of the identity, so adding one that makes a reviewed file readable under a
    new name is seen). Only the top-level folders ``leave_out`` names (by relative path) are not entered.

    Raises:
        InputFileError: a folder cannot be listed, or it holds more than ``MAX_FILES`` names.
    """
    files: dict[str, Path] = {}
    loops: dict[str, str] = {}

    def visit(d: str, rel: str, above: dict[tuple[int, int], str]) -> None:
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError as e:
            raise InputFileError(f"{d}: cannot list this folder ({e.strerror}); make it readable, or point the "
                                 "brief at a copy you can read") from None
        for e in entries:
            name = rel + e.name
            try:
                is_dir = e.is_dir()   # follows a symlink; a dangling link is neither, and nothing can load it
                st = os.stat(e.path) if is_dir else None
            except OSError:
                continue
            if is_dir:
                if _left_out(name, leave_out):
                    continue
                key = (st.st_dev, st.st_ino)
                if key in above:
                    loops[name + "/"] = LOOP + (above[key] or ".")
                    continue
                visit(e.path, name + "/", {**above, key: name})
            elif e.is_file():
                files[name] = Path(e.path)
                if len(files) > MAX_FILES:
                    raise InputFileError(f"{folder}: more than {MAX_FILES} files under it (with its linked "
                                         "folders followed); point the brief at a folder holding only the model "
                                         "or the data")

    try:
        root = os.stat(folder)
    except OSError as e:
        raise InputFileError(f"{folder}: cannot read this folder ({e.strerror}); check the path in the brief") from None
    visit(str(folder), "", {(root.st_dev, root.st_ino): ""})
    return files, loops


def folder_identity(folder: Path, leave_out: tuple[str, ...], what: str) -> dict[str, str]:
    """``relative name -> SHA-256`` of every file :func:`walk` finds (and its loops' markers)."""
    files, loops = walk(folder, leave_out)
    return {**_hash_named(files, what), **loops}


def adapter_base(folder: Path) -> tuple[str, Path | None, str | None] | None:
    """The base model a PEFT adapter folder names: (as written, the local folder or None for a hub id, revision).

    None when ``folder`` is not an adapter or its config names no base. A relative base path is tried against
    the adapter folder, then the working directory (where PEFT itself would look).
    """
    cfg_path = Path(folder) / ADAPTER_CONFIG
    if not cfg_path.is_file():
        return None
    try:
        cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise InputFileError(f"{cfg_path}: unreadable ({e}); the adapter folder needs a valid {ADAPTER_CONFIG}") \
            from None
    base = cfg.get("base_model_name_or_path") if isinstance(cfg, dict) else None
    if not isinstance(base, str) or not base.strip():
        return None
    revision = cfg.get("revision") if isinstance(cfg.get("revision"), str) else None
    p = Path(base).expanduser()
    for candidate in ([p] if p.is_absolute() else [Path(folder) / p, p]):
        if candidate.is_dir():
            return base, candidate.resolve(), revision
    return base, None, revision


def _index_shards(folder: Path, files: dict[str, Path]) -> dict[str, Path]:
    """The files each ``*.index.json`` in ``files`` names (its ``weight_map`` values), by the name as written."""
    out = {}
    for name, p in files.items():
        if not name.endswith(".index.json"):
            continue
        try:
            index = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue   # an unreadable index fails to load, and its own hash is part of the identity
        weight_map = index.get("weight_map") if isinstance(index, dict) else None
        for shard in (weight_map or {}).values() if isinstance(weight_map, dict) else ():
            if isinstance(shard, str) and shard not in files and (folder / shard).is_file():
                out[shard] = folder / shard
    return out


AUTO_MAP_CONFIGS = ("config.json", "tokenizer_config.json")   # where transformers reads ``auto_map``


def _refuse_nested_auto_map(folder: Path, what: str) -> None:
    """Refuse an ``auto_map`` entry whose module is not a file at the folder's top level.

    With ``trust_remote_code``, transformers imports ``auto_map``'s ``module.Class`` from ``<folder>/<module>.py``
    and takes the module as a path: ``checkpoint-1/modeling.Policy`` runs ``checkpoint-1/modeling.py`` (a folder
    the identity leaves out) and ``/elsewhere/modeling.Policy`` a file outside the folder, neither bound to the
    review. transformers itself only ever writes top-level names. (``other/repo--module.Class`` loads another hub
    repo's code: the "cannot stop" table of docs/threat-model.md.)
    """
    for name in AUTO_MAP_CONFIGS:
        p = folder / name
        try:
            cfg = json.loads(p.read_text(encoding="utf-8")) if p.is_file() else {}
        except (OSError, ValueError):
            continue   # an unreadable config fails to load, and its own hash is part of the identity
        auto_map = cfg.get("auto_map") if isinstance(cfg, dict) else None
        refs = auto_map.values() if isinstance(auto_map, dict) else ()
        for ref in (r for v in refs for r in (v if isinstance(v, list) else [v]) if isinstance(r, str)):
            module = ref.split("--")[-1].rpartition(".")[0]
            if "/" in module or "\\" in module or module.startswith("~"):
                raise InputFileError(
                    f"{what}: {name} auto_map names code at {module + '.py'!r}, which transformers would run from "
                    "a path the review is not bound to (a sub-folder such as checkpoint-*/, or outside the "
                    f"folder); move the module to the folder's top level and name it {ref.rpartition('/')[2]!r}")


def local_model_identity(folder: Path) -> dict:
    folder = Path(folder).resolve()
    _refuse_nested_auto_map(folder, f"model folder {folder}")
    found, loops = walk(folder, MODEL_LEFT_OUT)
    files = {**_hash_named({**found, **_index_shards(folder, found)}, "model"), **loops}
    base = adapter_base(folder)
    if base is None:
        return {"kind": "folder", "files": files}
    written, local, revision = base
    return {"kind": "adapter", "files": files,
            "base": local_model_identity(local) if local is not None else hub_identity(written, revision)}


def hub_identity(repo_id: str, revision: str | None, repo_type: str = "model") -> dict:
    snap = hub_cache.snapshot(repo_id, revision, repo_type)
    if snap is None:
        return {"kind": "hub", "id": repo_id, "revision": revision, "commit": None}
    if repo_type == "model":
        _refuse_nested_auto_map(snap.folder, f"model {repo_id} (commit {snap.commit[:12]})")
        found, loops = walk(snap.folder, MODEL_LEFT_OUT)
        found.update(_index_shards(snap.folder, found))
        return {"kind": "hub", "id": repo_id, "commit": snap.commit, "files": {**snap.files(found), **loops}}
    _refuse_escaping_configs(snap.folder, f"dataset {repo_id} (commit {snap.commit[:12]})")
    found, loops = walk(snap.folder, NEVER_READ)
    return {"kind": "hub", "id": repo_id, "commit": snap.commit, "files": {**snap.files(found), **loops}}


def _card_configs(folder: Path) -> list:
    """The ``configs`` entries of a dataset folder's README.md front matter and ``.huggingface.yaml``."""
    found = []
    for name in DATA_CARDS:
        p = folder / name
        if not p.is_file():
            continue
        try:
            text = p.read_text(encoding="utf-8")
            if name == "README.md":
                text = text.split("---", 2)[1] if text.startswith("---") and text.count("---") >= 2 else ""
            data = yaml.safe_load(text) or {}
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
            raise InputFileError(f"{p}: cannot read its YAML ({type(e).__name__}), which `datasets` reads to choose "
                                 "the data files; fix or remove it") from None
        configs = data.get("configs") if isinstance(data, dict) else None
        found += configs if isinstance(configs, list) else [configs] if configs else []
    return found


def _config_paths(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [p for k, v in value.items() if k not in ("config_name", "split", "default") for p in _config_paths(v)]
    if isinstance(value, list):
        return [p for v in value for p in _config_paths(v)]
    return []


def _refuse_escaping_configs(folder: Path, what: str) -> None:
    """Refuse ``configs`` whose ``data_files`` or ``data_dir`` reach outside the folder, into hidden files, or to
    a URL: `datasets` would load them, and the identity (the folder's visible files) would not hold them."""
    for cfg in _card_configs(folder):
        paths = _config_paths({k: v for k, v in cfg.items() if k in ("data_files", "data_dir")}) \
            if isinstance(cfg, dict) else []
        for p in paths:
            parts = p.replace("\\", "/").split("/")
            if p.startswith(("/", "~")) or "://" in p or ":" in parts[0] or any(
                    x == ".." or (x.startswith(".") and x != ".") for x in parts):
                raise InputFileError(
                    f"{what}: its README.md/.huggingface.yaml `configs` name data files at {p!r}, outside the "
                    "folder's visible files, so the review could not be bound to them; move the data into the "
                    "folder and name it by a path inside it")


def model_identity(spec) -> dict:
    """The identity of a brief's ``ModelSpec``: content hashes for a local folder (and an adapter's base), the
    resolved commit and cached files' hashes for a hub id."""
    if spec.is_local:
        return local_model_identity(Path(spec.resolved))
    return hub_identity(spec.resolved, spec.revision)


def dataset_identity(spec) -> dict:
    """The identity of a brief's ``DatasetSpec``: content plus the settings that decide which rows and columns
    the review read (split, subset, prompt column, column map, prompt template)."""
    ident: dict = {"split": spec.split, "prompt_column": spec.prompt_column, "columns": dict(spec.columns)}
    if spec.prompt:
        ident["prompt"] = dict(spec.prompt)
    if spec.subset:
        ident["subset"] = spec.subset
    if not spec.is_local:
        ident["source"] = hub_identity(spec.resolved, getattr(spec, "revision", None), "dataset")
        return ident
    p = Path(spec.resolved).resolve()
    if p.is_dir():
        _refuse_escaping_configs(p, f"dataset folder {p}")
        ident["source"] = {"kind": "folder", "files": folder_identity(p, NEVER_READ, "dataset")}
    else:
        ident["source"] = {"kind": "file", "sha256": _hash_named({p.name: p}, "dataset")[p.name]}
    return ident


def fingerprint(model: dict, dataset: dict, rewards: list[dict], sampling: dict) -> str:
    """The brief's fingerprint: one SHA-256 over what a review is bound to."""
    ident = {"model": model, "dataset": dataset, "rewards": rewards, "sampling": sampling}
    return hashlib.sha256(json.dumps(ident, sort_keys=True, default=str).encode()).hexdigest()
