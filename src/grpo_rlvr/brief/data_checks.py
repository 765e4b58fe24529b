"""The brief's datasets, checked at validate without loading them whole and without the network.

A *local* dataset is a path ending in ``.jsonl``, ``.json``, ``.parquet`` or ``.csv``, a path starting with
``.``, ``/`` or ``~``, or an existing folder; anything else is a hub dataset id. A local file must exist and its
first row must hold the prompt column (or what ``prompt.template`` reads) and the mapped columns. A folder is
checked through its first data file for the split. Hub datasets are not fetched: ``validate`` says their columns
went unchecked. Imports no torch (pyarrow only for a parquet file's first row).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from grpo_rlvr.jsonl import first_jsonl_row

DATA_SUFFIXES = (".jsonl", ".json", ".parquet", ".csv")


def resolve_dataset(base: Path, ref: str) -> tuple[str, bool]:
    """(resolved path or hub id, is local)."""
    p = Path(ref).expanduser()
    if not p.is_absolute():
        p = base / p
    local = ref.startswith((".", "/", "~")) or ref.lower().endswith(DATA_SUFFIXES) or p.is_dir()
    return (str(p.resolve()), True) if local else (ref, False)


def data_file(path: Path, split: str = "train") -> Path | None:
    """The file a local dataset's rows come from: the file itself, or a folder's first data file for ``split``."""
    if path.is_file():
        return path
    if not path.is_dir():
        return None
    files = sorted(p for pattern in ("*", "*/*", "*/*/*") for p in path.glob(pattern)  # three levels, no deeper
                   if p.suffix in DATA_SUFFIXES and p.is_file())
    for_split = [p for p in files if split in p.name]
    return (for_split or files or [None])[0]


def first_row(path: Path, split: str = "train") -> dict | None:
    """The first record of a local dataset, for column checks; None when it cannot be read."""
    f = data_file(path, split)
    if f is None:
        return None
    try:
        if f.suffix == ".jsonl":
            return first_jsonl_row(f)
        elif f.suffix == ".json":
            data = json.loads(f.read_text(encoding="utf-8"))
            rows = data if isinstance(data, list) else data.get("data") if isinstance(data, dict) else None
            return rows[0] if rows and isinstance(rows[0], dict) else None
        elif f.suffix == ".csv":
            with f.open(encoding="utf-8", newline="") as fh:
                reader = csv.DictReader(fh)
                return next(reader, None) or ({k: "" for k in reader.fieldnames} if reader.fieldnames else None)
        elif f.suffix == ".parquet":
            import pyarrow.parquet as pq

            pf = pq.ParquetFile(f)
            for batch in pf.iter_batches(batch_size=1):
                rows = batch.to_pylist()
                if rows:
                    return rows[0]
            return {name: None for name in pf.schema_arrow.names}
    except (OSError, ValueError, UnicodeDecodeError, TypeError, KeyError, IndexError, csv.Error):
        return None
    except Exception as e:  # pyarrow's own errors (ArrowInvalid derives from ValueError; others may not)
        if type(e).__module__.startswith("pyarrow"):
            return None
        raise
    return None


def data_file_problems(field: str, ref: str, p: Path, split: str) -> list[str]:
    """A local dataset exists and has a supported format."""
    if p.is_dir():
        if data_file(p, split) is None:
            return [f"{field}: folder {p} holds no .jsonl, .json, .parquet or .csv file; point it at the data"]
        return []
    if not p.is_file():
        return [f"{field}: {ref!r} resolves to {p}, which does not exist; fix the path (relative paths resolve "
                "against the brief's folder), or give a hub dataset id (ORG/NAME)"]
    if p.suffix not in DATA_SUFFIXES:
        return [f"{field}: {p.name} has suffix {p.suffix!r}; use .jsonl, .json, .parquet or .csv"]
    return []


def column_problems(p: Path, row: dict, columns: dict) -> list[str]:
    return [f"dataset.columns.{arg}: column {col!r} is not in {p.name} (columns: {', '.join(sorted(row))})"
            for arg, col in columns.items() if col not in row]


def hub_note(field: str, ref: str, split: str) -> str:
    return (f"{field}: {ref!r} (split {split!r}) is a hub dataset; validate reads no network, so its columns were "
            "not checked. preflight and inspect load it and stop with a clear error if a column is missing; or "
            "download it and point the brief at the local files")
