"""Streaming readers for a run's metric log: ``trainer_state.json`` (its ``log_history`` array) and
``metrics.jsonl`` (one record a line). Both yield records one at a time, so memory stays bounded by a buffer
of about ``CHUNK_CHARS`` (and the records decoded from it), not by the file: a 550 MB ``trainer_state.json``
is read without holding its text or its parsed tree (see ``benchmarks/bench_diagnosis_read.py``).

The ``trainer_state.json`` reader is a small hand parser of the top-level object: every member but
``log_history`` is decoded whole (they are small scalars and dicts), and ``log_history`` is walked over a
sliding buffer, decoding the whole entries the buffer holds at once (one entry at a time where that fails).
A single value larger than ``MAX_VALUE_CHARS`` is refused, as is nesting deeper than the ``json`` module can
decode.

Limits: no TensorBoard event files (no TensorBoard reader is installed in this stack; ``load_run_logs``
says so). Notes about what was skipped are appended to the ``notes`` list the caller passes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

from grpo_rlvr.errors import InputFileError
from grpo_rlvr.jsonl import iter_jsonl

CHUNK_CHARS = 1 << 20           # read 1 Mi characters at a time
MAX_VALUE_CHARS = 64 << 20      # one log record (or any other member) larger than this is refused
_WS = re.compile(r"[ \t\n\r]*")
_SEP = re.compile(r"[ \t\n\r]*[,\]]")
_DECODER = json.JSONDecoder()


class _Incomplete(Exception):
    pass


class _Buffer:
    """A sliding window over a text file, refilled as values are decoded from it."""

    def __init__(self, fh, path: Path):
        self.fh, self.path, self.buf, self.pos, self.eof = fh, path, "", 0, False

    def _fill(self) -> None:
        # Read at least as much as is buffered: one value spanning many chunks costs O(n log n), not O(n^2).
        data = self.fh.read(max(CHUNK_CHARS, len(self.buf) - self.pos))
        if not data:
            self.eof = True
        self.buf = self.buf[self.pos:] + data
        self.pos = 0

    def peek(self) -> str | None:
        """The next non-blank character (not consumed), or None at the end of the file."""
        while True:
            self.pos = _WS.match(self.buf, self.pos).end()
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if self.eof:
                return None
            self._fill()

    def take(self, expected: str, where: str) -> str:
        ch = self.peek()
        if ch is None or ch not in expected:
            found = "the end of the file" if ch is None else repr(ch)
            raise InputFileError(f"{self.path}: expected {' or '.join(map(repr, expected))} {where}, found {found}; "
                                 "the file is not a complete trainer_state.json (was it cut off while written?)")
        self.pos += 1
        return ch

    def batch(self) -> list | None:
        """As many whole entries of the array at the cursor as the buffer holds, decoded in one ``json.loads``
        (a log record at a time costs twice as long), or None. The candidate cut is a ``}`` followed by ``,``
        or ``]``; a cut inside a string or a nested object leaves the text unbalanced, so it fails to parse
        and an earlier cut is tried (three at most, then the caller decodes one entry)."""
        buf, start, end = self.buf, self.pos, len(self.buf)
        for _ in range(3):
            j = buf.rfind("}", start, end)
            if j <= start:
                return None
            end = j
            if _SEP.match(buf, j + 1) is None:
                continue
            try:
                items = json.loads("[" + buf[start:j + 1] + "]")
            except (json.JSONDecodeError, RecursionError):
                continue
            self.pos = j + 1
            return items
        return None

    def value(self, where: str):
        """Decode the JSON value at the cursor, reading more of the file until it is complete."""
        self.peek()
        while True:
            try:
                val, end = _DECODER.raw_decode(self.buf, self.pos)
                if end == len(self.buf) and not self.eof and isinstance(val, (int, float)):
                    raise _Incomplete  # a number cut by the chunk boundary ("12" of "1234")
                self.pos = end
                return val
            except (json.JSONDecodeError, _Incomplete) as e:
                if self.eof:
                    raise InputFileError(f"{self.path}: {where} is not valid JSON ({e}); the file is damaged or "
                                         "was cut off while written") from None
                if len(self.buf) - self.pos > MAX_VALUE_CHARS:
                    raise InputFileError(f"{self.path}: {where} is over {MAX_VALUE_CHARS >> 20} MiB or not valid "
                                         "JSON; a log record is a few kB") from None
                self._fill()
            except RecursionError:
                raise InputFileError(f"{self.path}: {where} is nested too deeply to read; a log record is a flat "
                                     "object of metrics") from None


def state_records(path: Path, notes: list[str]) -> Iterator[object]:
    """Yield the entries of ``log_history`` in ``path`` (a trainer_state.json), one at a time.

    Raises:
        InputFileError: the file is not a JSON object with a ``log_history`` list, or is damaged.
    """
    try:
        fh = open(path, encoding="utf-8")  # noqa: SIM115 - closed in the finally below, around a generator
    except OSError as e:
        raise InputFileError(f"{path}: cannot be read ({e.strerror})") from None
    try:
        b = _Buffer(fh, path)
        first = b.peek()
        if first != "{":
            kind = {"[": "a list", None: "empty"}.get(first, "not a JSON object")
            raise InputFileError(f"{path}: the file is {kind}; a trainer_state.json is an object with a "
                                 "log_history list (the Trainer writes one into each checkpoint-*/ folder)")
        b.take("{", "at the start")
        found = False
        while b.peek() != "}":
            key = b.value("a key of the top-level object")
            if not isinstance(key, str):
                raise InputFileError(f"{path}: a key of the top-level object is not a string")
            b.take(":", f"after the key {key!r}")
            if key == "log_history":
                found = True
                if b.peek() != "[":
                    raise InputFileError(f"{path}: log_history is not a list; it should hold one object per "
                                         "logged step")
                b.take("[", "")
                n = 0
                while b.peek() != "]":
                    items = b.batch()
                    if items:
                        yield from items
                        n += len(items)
                    else:
                        yield b.value(f"log_history entry {n}")
                        n += 1
                    if b.take(",]", f"after log_history entry {n - 1}") == "]":
                        break
                else:
                    b.take("]", "")
            else:
                b.value(f"the value of {key!r}")
            if b.take(",}", "between the members of the top-level object") == "}":
                break
        else:
            b.take("}", "")
        if not found:
            raise InputFileError(f"{path}: no log_history; is this a trainer_state.json written by the Trainer?")
    except UnicodeDecodeError:
        raise InputFileError(f"{path}: not UTF-8 text; a trainer_state.json is JSON") from None
    finally:
        fh.close()


def jsonl_records(path: Path, notes: list[str]) -> Iterator[object]:
    """Yield the records of a metrics.jsonl one line at a time (the package's one JSONL reader). A last line
    that is not JSON (the normal state after a crash mid-write) is skipped with a note; a bad line anywhere
    else is an error naming it.

    Raises:
        InputFileError: a line other than the last is not JSON.
    """
    for _, record in iter_jsonl(path, "metrics", fix="delete or fix that line (only a half-written last line "
                                "is skipped)", torn_tail=notes):
        yield record


def peek_global_step(path: Path) -> int | None:
    """``global_step`` of a trainer_state.json from its head (the Trainer writes its keys sorted, so
    global_step comes before log_history), without reading the rest."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            head = fh.read(1 << 16)
    except OSError:
        return None
    m = re.search(r'"global_step"\s*:\s*(\d+)', head.split('"log_history"')[0])
    return int(m.group(1)) if m else None
