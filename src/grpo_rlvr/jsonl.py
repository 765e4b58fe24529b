"""The one JSONL reader of the package: datasets, ``score`` input, ``samples.jsonl``, ``metrics.jsonl``.

Records are separated by ``"\\n"`` only (a ``"\\r\\n"`` ending is accepted). ``str.splitlines`` is not used: it
also splits on U+2028, U+2029, U+0085, ``\\x0b``, ``\\x0c`` and ``\\x1c``-``\\x1e``, which JSON allows raw inside
strings and which model output contains, so a valid file would read as broken. Raw control characters inside
strings, which some writers leave unescaped, are accepted. Blank lines are skipped. Each line is parsed by the
input layer (``input_files.parse_json``: duplicate keys and deep nesting refused). Files are streamed, one line
at a time. Every error names the file, the line and the fix, as the caller's exception type.

A *torn tail* — the last record cut off by a writer that stopped (a crash mid-write) — is an error by default;
``iter_jsonl(..., torn_tail=notes)`` skips it and appends a note instead (for logs of a run that died).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from grpo_rlvr.errors import GrpoRlvrError, InputFileError
from grpo_rlvr.input_files import decode_text, open_binary, parse_json

_FIX = "each line must be one JSON object"


def _record(line: str, source: str, n: int, error: type[GrpoRlvrError], fix: str) -> dict:
    where = f"{source}, line {n}"
    try:
        row = parse_json(line, where, strict=False, fix=fix)  # raw control characters in strings: accepted
    except InputFileError as e:
        raise error(str(e) if str(e).endswith(fix) else f"{e}; {fix}") from None
    if not isinstance(row, dict):
        raise error(f"{where}: expected a JSON object, got {type(row).__name__}; {fix}")
    return row


def jsonl_lines(text: str) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` for each non-blank record of ``text``, split on ``\\n`` only."""
    for n, line in enumerate(text.split("\n"), 1):
        line = line.removesuffix("\r")
        if line.strip():
            yield n, line


def parse_jsonl(text: str, source: str, error: type[GrpoRlvrError] = InputFileError, fix: str = _FIX) -> list[dict]:
    """The JSON objects of ``text``; ``source`` names it in errors ("dataset data/train.jsonl").

    Raises:
        error: a line that is not JSON or not an object, naming ``source``, the line and ``fix``.
    """
    return [_record(line, source, n, error, fix) for n, line in jsonl_lines(text)]


def iter_jsonl(path: Path, what: str = "file", error: type[GrpoRlvrError] = InputFileError, fix: str = _FIX,
               torn_tail: list[str] | None = None) -> Iterator[tuple[int, dict]]:
    """Stream ``(line number, record)`` from the JSONL file ``path``.

    Args:
        torn_tail: when a list, a bad *last* record is skipped and a note saying so is appended to it; a bad
            record with anything after it is an error all the same.
    Raises:
        error: the file is missing, unreadable, not UTF-8, or a line is bad (file and line named).
    """
    path = Path(path)
    source = f"{what} {path}"
    pending: tuple[int, GrpoRlvrError] | None = None  # a bad line, forgiven only if nothing follows it
    try:
        fh = open_binary(path, what)
    except InputFileError as e:
        raise error(f"{e}; {fix}") from None
    with fh:
        for n, raw in enumerate(fh, 1):  # binary lines end at b"\n" only
            if n == 1:
                raw = raw.removeprefix(b"\xef\xbb\xbf")
            if not raw.strip():
                continue
            if pending is not None:
                raise pending[1]
            try:
                yield n, _record(decode_text(raw.rstrip(b"\r\n"), f"{source}, line {n}"), source, n, error, fix)
            except GrpoRlvrError as e:
                if torn_tail is None:
                    raise (e if isinstance(e, error) else error(f"{e}; {fix}")) from None
                pending = (n, e if isinstance(e, error) else error(f"{e}; {fix}"))
    if pending is not None:
        torn_tail.append(f"{path.name} line {pending[0]} is half-written (the run stopped mid-write?): skipped")


def read_jsonl(path: Path, what: str = "file", error: type[GrpoRlvrError] = InputFileError,
               fix: str = _FIX) -> list[dict]:
    """Rows of the JSONL file ``path``; ``what`` names it in errors ("dataset", "input").

    Raises:
        error: the file is missing or unreadable, or a line is bad (file and line named).
    """
    return [row for _, row in iter_jsonl(path, what, error, fix)]


def record_lines(path: Path) -> list[int] | None:
    """The line number of each record of the JSONL file ``path`` (its non-blank lines, as ``iter_jsonl`` and
    ``datasets`` count records), without parsing them; None when the file cannot be read."""
    try:
        with Path(path).open("rb") as fh:
            return [n for n, raw in enumerate(fh, 1) if raw.removeprefix(b"\xef\xbb\xbf" if n == 1 else b"").strip()]
    except OSError:
        return None


def first_jsonl_row(path: Path) -> dict | None:
    """The first record of a JSONL file, reading no further (for column checks on large files); None when there
    is none, it is not an object, or the file cannot be read. Never raises: the full read reports bad lines."""
    try:
        for _, row in iter_jsonl(path):
            return row
    except GrpoRlvrError:
        return None
    return None

