"""The identity of the model and the data a review read: their content and resolved commit, never their spelling.

- A local model folder: the SHA-256 of each file that loading can read (weights, configs, tokenizer, custom
  code), by name. Left out: hidden files, docs (``*.md``, licences) and the training records TRL writes beside a
  model (``trainer_state.json``, ``training_args.bin``, ``*_results.json``, event logs); sub-folders
  (``checkpoint-*/``, ``runs/``) are not loaded as the model and are left out too, except the shards a
  ``*.index.json`` names (transformers joins those names to the folder, so ``shards/a.safetensors`` or
  ``../a.safetensors`` load as weights and count as such).
- A PEFT adapter folder (it has ``adapter_config.json``): its own files as above, plus the identity of the base
  model its config names (``base_model_name_or_path``, with ``revision``).
- A hub model or dataset: the commit its revision resolves to in the local Hugging Face cache (``main`` when the
  brief names none, so an unpinned id is pinned to the commit inspect saw) and the content hash of each cached
  file, checked against the bytes (``hub_cache``). Not in the cache: the commit is ``None``, which matches no
  review. ``render`` writes that commit into the run, and the run loads that snapshot's folder.
- A local dataset file: its SHA-256; a folder: each file's SHA-256 by relative name (hidden files and ``*.md``
  left out, except ``README.md`` and ``.huggingface.yaml``, whose ``configs`` choose the files ``datasets``
  loads). A folder whose ``configs`` name files outside it, hidden files or URLs is refused: those files would
  load without being part of the identity. With the split, columns, subset and prompt settings, which change
  what the review read.

Paths resolve through symlinks and the hash is of the bytes, so ``./model``, ``/abs/model`` and a copy of the
folder elsewhere have one identity. Hashes come from ``hash_cache`` (read once, then checked by stat).
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
from pathlib import Path

import yaml

from grpo_rlvr.errors import InputFileError
from grpo_rlvr.identity import hub_cache
from grpo_rlvr.identity.hash_cache import sha256_files

ADAPTER_CONFIG = "adapter_config.json"
# Files beside a model that loading never reads: changing them changes nothing the review saw.
_NOT_MODEL = ("*.md", "LICENSE*", "NOTICE*", "USE_POLICY*", "trainer_state.json", "training_args.bin",
              "*_results.json", "events.out.tfevents*", "*.png", "*.jpg", "*.jpeg", "*.gif")
_NOT_DATA = ("*.md", "LICENSE*")
DATA_CARDS = ("README.md", ".huggingface.yaml")   # read by `datasets` for a folder's configs (data_files)


def _kept(rel: str, skip: tuple[str, ...]) -> bool:
    parts = rel.split("/")
    return not any(p.startswith(".") for p in parts) and not any(fnmatch.fnmatch(parts[-1], pat) for pat in skip)


def _hash_named(files: dict[str, Path], what: str) -> dict[str, str]:
    try:
        digests = sha256_files(list(files.values()))
    except OSError as e:
        raise InputFileError(f"{e.filename}: cannot read this {what} file ({e.strerror}); make it readable, or "
                             "point the brief at a copy you can read") from None
    return {name: digests[p] for name, p in sorted(files.items())}


def folder_files(folder: Path, recursive: bool, skip: tuple[str, ...]) -> dict[str, Path]:
    """``relative name -> path`` of the regular files (symlinks followed) that count for a folder's identity."""
    found = folder.rglob("*") if recursive else folder.iterdir()
    out = {}
    for p in found:
        rel = p.relative_to(folder).as_posix()
        if _kept(rel, skip) and p.is_file():
            out[rel] = p
    return out


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


def local_model_identity(folder: Path) -> dict:
    folder = Path(folder).resolve()
    found = folder_files(folder, recursive=False, skip=_NOT_MODEL)
    files = _hash_named({**found, **_index_shards(folder, found)}, "model")
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
        return {"kind": "hub", "id": repo_id, "commit": snap.commit,
                "files": snap.files(lambda rel: _kept(rel, _NOT_MODEL))}
    _refuse_escaping_configs(snap.folder, f"dataset {repo_id} (commit {snap.commit[:12]})")
    return {"kind": "hub", "id": repo_id, "commit": snap.commit,
            "files": snap.files(lambda rel: rel in DATA_CARDS or _kept(rel, _NOT_DATA))}


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
        found = folder_files(p, recursive=True, skip=_NOT_DATA)
        found.update({c: p / c for c in DATA_CARDS if (p / c).is_file()})
        ident["source"] = {"kind": "folder", "files": _hash_named(found, "dataset")}
    else:
        ident["source"] = {"kind": "file", "sha256": _hash_named({p.name: p}, "dataset")[p.name]}
    return ident


def fingerprint(model: dict, dataset: dict, rewards: list[dict], sampling: dict) -> str:
    """The brief's fingerprint: one SHA-256 over what a review is bound to."""
    ident = {"model": model, "dataset": dataset, "rewards": rewards, "sampling": sampling}
    return hashlib.sha256(json.dumps(ident, sort_keys=True, default=str).encode()).hexdigest()
