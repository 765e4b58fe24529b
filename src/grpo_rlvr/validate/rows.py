"""Every row of a brief's local datasets through every check that training would make of it, in one pass.

``validate`` calls :func:`check_rows`: each row of the training file (and of the held-out file) is read once, its
columns mapped and its prompt built as training maps and builds them (``dataset.rows.map_columns``), and the row is
handed to every reward's own column check (``Reward.check_row``: the function the reward reads its columns with,
so the two cannot disagree: ``unit_tests`` plans the row's tests as a batch plans them, ``json_schema`` compiles
its schema, ``tool_call`` decodes its expected calls, ``math`` and ``exact_match`` find an answer). A row that
fails is named by its file, its line (JSON Lines; a row number for other formats) and its column, and
``validate`` exits 2. One pass serves all the checks: the file is read and each line parsed once, whatever the
number of rewards (``benchmarks/bench_validate_rows.py`` measures it against one pass per check).

Not covered: hub datasets (``validate`` reads no network; preflight and inspect load them), user rewards (their
columns are theirs to read: during training a row they raise on is left out and named, ``records/unscorable.py``).
"""

from __future__ import annotations

import contextlib
import csv
import json
from collections.abc import Iterator
from pathlib import Path

from grpo_rlvr.brief.data_checks import DATA_SUFFIXES
from grpo_rlvr.errors import ConfigError, GrpoRlvrError, InputFileError, RowError

SHOWN = 20   # rows named in the error; the rest are counted


def dataset_rows(path: Path, split: str = "train") -> Iterator[tuple[str, dict]]:
    """``(where, row)`` for every row of a local dataset, streamed where the format allows: ``where`` is
    ``"FILE, line N"`` for JSON Lines and CSV, ``"FILE, row N"`` (0-based, as ``datasets`` indexes it) for JSON and
    Parquet. A folder is read file by file, as ``datasets`` reads it (the split's files, else every data file).

    Raises:
        InputFileError: a line that is not one JSON object, a file that is not JSON, or an unreadable file.
    """
    from grpo_rlvr.jsonl import iter_jsonl

    for f in _files(path, split):
        if f.suffix == ".jsonl":
            for n, row in iter_jsonl(f, "dataset"):
                yield f"{f}, line {n}", row
        elif f.suffix == ".json":
            yield from ((f"{f}, row {i}", row) for i, row in enumerate(_json_rows(f)))
        elif f.suffix == ".csv":
            with f.open(encoding="utf-8", newline="") as fh:
                reader = csv.DictReader(fh)
                for row in reader:
                    yield f"{f}, line {reader.line_num}", row
        elif f.suffix == ".parquet":
            import pyarrow.parquet as pq

            i = 0
            for batch in pq.ParquetFile(f).iter_batches(batch_size=4096):
                for row in batch.to_pylist():
                    yield f"{f}, row {i}", row
                    i += 1


def _files(path: Path, split: str) -> list[Path]:
    if path.is_file():
        return [path]
    files = sorted(p for pattern in ("*", "*/*", "*/*/*") for p in path.glob(pattern)
                   if p.suffix in DATA_SUFFIXES and p.is_file())
    return [p for p in files if split in p.name] or files


def _json_rows(f: Path) -> list[dict]:
    try:
        data = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputFileError(f"dataset {f}: cannot read it as JSON ({e})") from None
    rows = data if isinstance(data, list) else data.get("data", []) if isinstance(data, dict) else []
    return [r for r in rows if isinstance(r, dict)]


# Rows checked in this process before deciding to share the work: when checking the median row took more than
# PARALLEL_ABOVE times what reading it took (unit_tests: planning each row's tests, ~1 ms, against ~0.03 ms to
# read it), the rest go to worker processes in chunks, in file order: this process then only reads, and can feed
# them. Cheap checks stay here (sending a row to a worker costs about what checking it does). The median, not the
# mean: the first rows pay for caches (a schema compiled once). A ratio, not a time: it holds on a loaded machine.
PROBE_ROWS = 512
CHUNK_ROWS = 1024
PARALLEL_ABOVE = 8.0


def checked_rows(rows, checks: list, prompt_column: str, columns: dict, prompt: dict | None,
                 workers: int | None = None) -> tuple[list[str], int, int]:
    """:func:`row_problems` over ``rows``, read once, in order; checks far costlier than reading a row run in
    ``workers`` processes (default: the cores this process may use) once the first ``PROBE_ROWS`` rows show it.
    The processes are forked, so each starts with the same checks (and starts its own sandbox planner)."""
    import itertools
    import statistics
    import time
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    from grpo_rlvr.cpu_threads import usable_cores

    rows = iter(rows)
    shown, bad, n, ratios = [], 0, 0, []
    while n < PROBE_ROWS:
        t0 = time.perf_counter()
        one = next(rows, None)
        if one is None:
            break
        t1 = time.perf_counter()
        got = row_problems([one], checks, prompt_column, columns, prompt)
        ratios.append((time.perf_counter() - t1) / max(t1 - t0, 1e-7))
        shown, bad, n = (shown + got[0])[:SHOWN], bad + got[1], n + got[2]
    workers = usable_cores() if workers is None else workers
    if n < PROBE_ROWS or workers < 2 or statistics.median(ratios) < PARALLEL_ABOVE:
        more = row_problems(rows, checks, prompt_column, columns, prompt)
        return (shown + more[0])[:SHOWN], bad + more[1], n + more[2]
    global _WORK
    _WORK = (checks, prompt_column, columns, prompt)
    with ProcessPoolExecutor(workers, mp_context=get_context("fork"), initializer=_die_with_parent) as pool:
        pending = []
        chunks = iter(lambda: list(itertools.islice(rows, CHUNK_ROWS)), [])
        for chunk in itertools.chain(chunks, [None]):
            if chunk is not None:
                pending.append(pool.submit(_chunk_problems, chunk))
            while pending and (chunk is None or len(pending) >= 2 * workers):   # in order, a bounded window
                got = pending.pop(0).result()
                shown, bad, n = (shown + got[0])[:SHOWN], bad + got[1], n + got[2]
    return shown, bad, n


_WORK: tuple | None = None   # what a forked worker checks rows with (set before the pool forks)


def _die_with_parent() -> None:
    """A worker ends when validate does, however it ends (a pool's worker would otherwise wait for work forever
    after its parent was killed); its planner process follows when its pipe closes. Linux only; elsewhere a no-op."""
    import ctypes
    import signal

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)   # PR_SET_PDEATHSIG


def _chunk_problems(chunk: list) -> tuple[list[str], int, int]:
    checks, prompt_column, columns, prompt = _WORK
    return row_problems(chunk, checks, prompt_column, columns, prompt)


def row_problems(rows, checks: list, prompt_column: str, columns: dict, prompt: dict | None) -> tuple[list[str], int, int]:
    """Run every check on every row, once each.

    Args:
        rows: ``(where, row)`` pairs (:func:`dataset_rows`).
        checks: ``(reward name, check_row)`` pairs.
    Returns:
        (the first ``SHOWN`` problems, one per bad row, every problem of that row; how many rows are bad; how many
        rows were read).
    """
    from grpo_rlvr.dataset.rows import map_columns

    file_column = {arg: col for arg, col in columns.items() if col != arg}
    shown, bad, n = [], 0, 0
    for where, raw in rows:
        n += 1
        found = []
        try:
            row = map_columns(raw, prompt_column, columns, prompt, where)
        except GrpoRlvrError as e:   # the prompt cannot be built for this row
            found.append(str(e))
            row = None
        for _name, check in checks if row is not None else ():
            try:
                check(row)
            except RowError as e:
                col = getattr(e, "column", None)
                alias = f" (column {file_column[col]!r} in the file)" if col in file_column else ""
                found.append(f"{e}{alias}")
        if found:
            bad += 1
            if len(shown) < SHOWN:
                shown.append(f"{where}: " + "; ".join(found))
    return shown, bad, n


def check_rows(brief, rewards=None) -> int:
    """Every row of the brief's local training and held-out files through the prompt and every reward's column
    check, in one pass each. Returns the number of rows read (0 for a hub dataset, which is not read here).

    Raises:
        InputFileError: a line that is not JSON (file and line named), as preflight and training would.
        ConfigError: rows that a reward cannot score, each named by file, line and column, with the fix.
    """
    from grpo_rlvr.rewards import from_brief

    ds = brief.dataset
    rewards = from_brief(brief) if rewards is None else rewards
    checks = [(r.name, r.check_row) for r in rewards if r.check_row is not None]
    problems, total, read = [], 0, 0
    targets = [(ds.resolved, ds.is_local, ds.split, "dataset.path")]
    if ds.eval_path:
        targets.append((ds.eval_resolved, ds.eval_is_local, ds.eval_split, "dataset.eval_path"))
    for ref, local, split, field in targets:
        p = Path(ref)
        if not local or not (p.is_file() or p.is_dir()) or (p.is_file() and p.suffix not in DATA_SUFFIXES):
            continue
        shown, bad, n = checked_rows(dataset_rows(p, split), checks, ds.prompt_column, dict(ds.columns),
                                     dict(ds.prompt) or None)
        read += n
        total += bad
        if bad:
            more = f" (the first {len(shown)} listed)" if bad > len(shown) else ""
            problems.append(f"{field}: {bad} of {n} rows cannot be scored by their rewards{more}; fix or drop "
                            "each, then validate again (training would leave their samples unscored):"
                            + "".join(f"\n      {s}" for s in shown))
    if total:
        raise ConfigError(problems, source=str(brief.path))
    return read
