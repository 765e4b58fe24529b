"""The one JSONL reader of the package: datasets, ``score`` input, ``samples.jsonl``, ``metrics.jsonl``.

Records are separated by ``"\\n"`` only (a ``"\\r\\n"`` ending is accepted). ``str.splitlines`` is not used: it
also splits on U+2028, U+2029, U+0085, ``\\x0b``, ``\\x0c`` and ``\\x1c``-``\\x1e``, which JSON allows raw inside
strings and which model output contains, so a valid file would read as broken. Raw control characters inside
strings, which some writers leave unescaped, are accepted. Blank lines are skipped. Every
error names the file, the line and the fix, as the caller's exception type.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from grpo_rlvr.errors import GrpoRlvrError, InputFileError


def jsonl_lines(text: str) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` for each non-blank record of ``text``, split on ``\\n`` only."""
    for n, line in enumerate(text.split("\n"), 1):
        line = line.removesuffix("\r")
        if line.strip():
            yield n, line


def parse_jsonl(text: str, source: str, error: type[GrpoRlvrError] = InputFileError,
                fix: str = "each line must be one JSON object") -> list[dict]:
    """The JSON objects of ``text``; ``source`` names it in errors ("dataset data/train.jsonl").

    Raises:
        error: a line that is not JSON or not an object, naming ``source``, the line and ``fix``.
    """
    rows = []
    for n, line in jsonl_lines(text):
        try:
            row = json.loads(line, strict=False)  # raw control characters in strings: accepted
        except json.JSONDecodeError as e:
            raise error(f"{source}, line {n}: not valid JSON ({e.msg} at column {e.colno}); {fix}") from None
        except (ValueError, RecursionError) as e:  # an integer past the digit limit, nesting too deep
            raise error(f"{source}, line {n}: not valid JSON ({str(e)[:80] or type(e).__name__}); {fix}") from None
        if not isinstance(row, dict):
            raise error(f"{source}, line {n}: expected a JSON object, got {type(row).__name__}; {fix}")
        rows.append(row)
    return rows


def read_jsonl(path: Path, what: str = "file", error: type[GrpoRlvrError] = InputFileError,
               fix: str = "each line must be one JSON object") -> list[dict]:
    """Rows of the JSONL file ``path``; ``what`` names it in errors ("dataset", "input").

    Raises:
        error: the file is missing or unreadable, or a line is bad (file and line named).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{what} {path}: file not found; {fix}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise error(f"{what} {path}: cannot read it ({e}); {fix}") from None
    return parse_jsonl(text, f"{what} {path}", error, fix)


def first_jsonl_row(path: Path) -> dict | None:
    """The first record of a JSONL file, reading no further (for column checks on large files); None when there
    is none, it is not an object, or the file cannot be read. Never raises: the full read reports bad lines."""
    try:
        with Path(path).open(encoding="utf-8", newline="\n") as fh:  # split on "\n" only, as above
            for line in fh:
                if line.strip():
                    row = json.loads(line, strict=False)
                    return row if isinstance(row, dict) else None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    return None
