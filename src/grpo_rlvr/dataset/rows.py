"""Reading the brief's dataset and mapping its columns to the names rewards and TRL expect.

The brief's ``dataset.columns`` maps a reward argument to a dataset column (``answer: solution``); the prompt
column (or the brief's ``prompt`` template and system message) becomes ``prompt``. The same mapping serves
sampling, scoring and the rendered ``train.py`` (``load_split``). Loading failures are InputFileErrors.

``datasets`` keeps a prepared copy of what it loads (Arrow files in ``$HF_DATASETS_CACHE``) and reuses it when the
source's path and modification time match, without reading the source. Anyone who can write that folder, or
who loads other bytes under a restored modification time, would then train rows the review never read. So
every load here prepares the data again from the source, into a private folder removed when the process ends.
A hub dataset pinned to a commit (``render`` pins the reviewed one) loads from that commit's snapshot folder in
the local Hugging Face cache, whose files the gate checked.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
from pathlib import Path

from grpo_rlvr.dataset.prompts import build_prompt
from grpo_rlvr.errors import InputFileError
from grpo_rlvr.jsonl import read_jsonl

_private_cache: list[str] = []


class DataRow(dict):
    """A dataset row, columns mapped, that knows its place in the data: ``source`` names it as training names it
    (``FILE:LINE`` for a JSON Lines file, else ``PATH, row N``; :func:`row_sources`), so preflight, inspect and
    training point at the same line. Copying it (``dict(row)``) drops the name, nothing else."""

    source: str | None = None


def _fresh_cache() -> str:
    """This process's own ``datasets`` cache folder (removed at exit): nothing prepared before is reused."""
    if not _private_cache:
        _private_cache.append(tempfile.mkdtemp(prefix="grpo-rlvr-datasets-"))
        atexit.register(shutil.rmtree, _private_cache[0], True)
    return _private_cache[0]


def _load_dataset(field: str, ref: str, local: bool, split: str, subset: str | None = None,
                  revision: str | None = None):
    """A ``datasets`` split, prepared afresh from its source; a hub ``ref`` pinned to a commit (``revision``)
    loads from that commit's snapshot folder. Every loading failure becomes an InputFileError naming the field."""
    from datasets import load_dataset

    hub = not local   # a hub dataset's subset names one of its configs; a local folder's is not used
    if hub and revision:
        from grpo_rlvr.identity.hub_cache import COMMIT, pinned_folder

        if COMMIT.match(revision):
            ref, local = pinned_folder(ref, revision, "dataset"), True
    p = Path(ref)
    fresh = {"cache_dir": _fresh_cache()}
    try:
        if local and p.is_file():
            kind = {".jsonl": "json", ".json": "json", ".parquet": "parquet", ".csv": "csv"}[p.suffix]
            return load_dataset(kind, data_files=str(p), split="train", **fresh)
        if not local and revision:
            fresh["revision"] = revision
        return load_dataset(ref, subset, split=split, **fresh) if subset and hub else \
            load_dataset(ref, split=split, **fresh)
    except KeyError:
        raise InputFileError(f"{field}: {p.name} has suffix {p.suffix!r}; use .jsonl, .json, .parquet or .csv") \
            from None
    except Exception as e:  # datasets raises many unrelated types (hub, network, arrow, schema): name them once
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        hint = ("HF_HUB_OFFLINE is set, and offline a hub dataset loads only from a commit in the Hugging Face "
                "cache: fetch it (`hf download --repo-type dataset ID`) and set dataset.revision to its commit"
                if not local and os.environ.get("HF_HUB_OFFLINE") else "check the path, the split and the format")
        raise InputFileError(f"{field}: cannot load {ref!r} (split {split!r}): {type(e).__name__}: {first}; "
                             f"{hint}") from None


def load_rows(brief) -> list[dict]:
    """All rows of the brief's dataset, with columns mapped (``prompt`` + reward argument names) and the prompt
    built by the brief's ``prompt`` section (``grpo_rlvr.dataset.prompts``)."""
    spec = brief.dataset
    p = Path(spec.resolved)
    if spec.is_local and p.suffix == ".jsonl":
        raw = read_jsonl(p, "dataset")
    elif spec.is_local and p.suffix == ".json" and p.is_file():
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise InputFileError(f"dataset {p}: cannot read it as JSON ({e})") from None
        raw = data if isinstance(data, list) else data.get("data", []) if isinstance(data, dict) else []
    else:
        raw = [dict(r) for r in _load_dataset("dataset.path", spec.resolved, spec.is_local, spec.split, spec.subset,
                                              spec.revision)]
    prompt = dict(spec.prompt)
    rows = []
    for i, (r, source) in enumerate(zip(raw, row_sources(spec.resolved, spec.is_local, len(raw)), strict=True)):
        row = DataRow(map_columns(r, spec.prompt_column, dict(spec.columns), prompt, where=f"dataset row {i}"))
        row.source = source
        rows.append(row)
    return rows


def row_sources(path: str, local: bool, n: int) -> list[str]:
    """How each of the ``n`` rows of the data at ``path`` is named, in training and out: ``FILE:LINE`` for a local
    JSON Lines file (its non-blank lines, as ``datasets`` and the JSONL reader count records), else ``PATH, row N``."""
    from grpo_rlvr.jsonl import record_lines

    p = Path(path)
    lines = record_lines(p) if local and p.is_file() and p.suffix == ".jsonl" else None
    if lines is not None and len(lines) == n:
        return [f"{p}:{line}" for line in lines]
    return [f"{path}, row {i}" for i in range(n)]


def load_split(spec: dict, prompt_column: str, columns: dict, prompt: dict | None = None):
    """The train or held-out split for the rendered train.py, as a ``datasets.Dataset``: ``prompt`` built from
    each row exactly as ``load_rows`` builds it, the brief's columns copied to the reward argument names.

    Args:
        spec: ``{"path", "local", "split", "subset", "field", "revision"}`` as rendered (``field``: the brief key
            it came from; ``revision``: the commit a hub dataset is pinned to).
    Raises:
        InputFileError: on any loading problem, naming the brief's field.
    """
    ds = _load_dataset(spec.get("field", "dataset.path"), spec["path"], spec["local"], spec["split"],
                       spec.get("subset"), spec.get("revision"))
    if prompt:
        ds = ds.map(lambda row, i: {"prompt": build_prompt(row, prompt_column, prompt, f"dataset row {i}")},
                    with_indices=True)
    elif prompt_column != "prompt":
        if prompt_column not in ds.column_names:
            raise InputFileError(f"dataset.prompt_column: {prompt_column!r} is not a column of {spec['path']} "
                                 f"(columns: {', '.join(ds.column_names)})")
        if "prompt" in ds.column_names:
            ds = ds.remove_columns("prompt")
        ds = ds.rename_column(prompt_column, "prompt")
    for arg, col in columns.items():
        if col != arg and arg not in ds.column_names:
            if col not in ds.column_names:
                raise InputFileError(f"dataset.columns.{arg}: {col!r} is not a column of {spec['path']} "
                                     f"(columns: {', '.join(ds.column_names)})")
            ds = ds.add_column(arg, ds[col])
    return with_row_names(ds, spec)


def with_row_names(ds, spec: dict):
    """``ds`` with two columns that name each row wherever its samples go (``records/unscorable.py``): its index
    (``ROW_COLUMN``) and its source (``SOURCE_COLUMN``: ``FILE:LINE`` for a JSON Lines file, whose blank lines
    ``datasets`` skips as the JSONL reader does; ``PATH, row N`` otherwise).

    Raises:
        InputFileError: the data already has a column of either name.
    """
    from grpo_rlvr.records.unscorable import ROW_COLUMN, SOURCE_COLUMN

    taken = [c for c in (ROW_COLUMN, SOURCE_COLUMN) if c in ds.column_names]
    if taken:
        raise InputFileError(f"{spec.get('field', 'dataset.path')}: {spec['path']} has a column {taken[0]!r}, a name "
                             "grpo-rlvr gives the row's index and source during training; rename that column")
    n = len(ds)
    return ds.add_column(ROW_COLUMN, list(range(n))).add_column(SOURCE_COLUMN,
                                                                row_sources(spec["path"], spec.get("local"), n))


def map_columns(row: dict, prompt_column: str, columns: dict, prompt: dict | None = None,
                where: str = "row") -> dict:
    out = dict(row)
    if prompt:
        out["prompt"] = build_prompt(row, prompt_column, prompt, where)
    elif prompt_column != "prompt" and prompt_column in out:
        out["prompt"] = out.pop(prompt_column)
    for arg, col in columns.items():
        if col in row:
            out[arg] = row[col]
    return out


def reward_columns(rows: list[dict]) -> dict[str, list]:
    """Column-major view of rows for reward calls (one value per completion), without the prompt."""
    keys = {k for r in rows for k in r} - {"prompt", "completion"}
    return {k: [r.get(k) for r in rows] for k in sorted(keys)}
