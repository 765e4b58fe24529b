"""With ``--json``, stdout carries the command's JSON and nothing else.

What a command runs may print: a dashboard logger announcing itself, TRL's progress, a launcher's child process.
While a ``--json`` command runs, the process's stdout (file descriptor 1, which child processes inherit) and
``sys.stdout`` both point at stderr; the JSON goes to ``document()``, the real stdout held aside.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from typing import TextIO

_held: TextIO | None = None


def document() -> TextIO:
    """Where a command writes its JSON: the real stdout while ``json_stdout`` is active, else ``sys.stdout``."""
    return _held if _held is not None else sys.stdout


def _uses_fd_1(stream) -> bool:
    try:
        return stream.fileno() == 1
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):  # an in-process capture object
        return False


@contextlib.contextmanager
def json_stdout(active: bool):
    """While active, everything but ``document()`` that writes to stdout writes to stderr instead: Python's
    ``print`` through ``sys.stdout``, and anything (a C library, a child process) writing to descriptor 1."""
    global _held
    if not active or _held is not None:
        yield
        return
    original = sys.stdout
    original.flush()
    sys.stderr.flush()
    try:
        saved = os.dup(1)
        os.dup2(2, 1)
    except OSError:   # no descriptor 1 or 2 to work with: Python's own prints still move aside
        saved = None
    held = original
    if saved is not None and _uses_fd_1(original):
        held = os.fdopen(os.dup(saved), "w", encoding=getattr(original, "encoding", None) or "utf-8",
                         errors=getattr(original, "errors", None) or "strict")
    _held, sys.stdout = held, sys.stderr
    try:
        yield
    finally:
        _held, sys.stdout = None, original
        try:
            if held is not original:
                try:
                    held.flush()   # a reader gone raises BrokenPipeError here, for the caller
                finally:
                    with contextlib.suppress(OSError, ValueError):
                        held.close()
        finally:
            with contextlib.suppress(OSError):
                sys.stderr.flush()
            if saved is not None:
                os.dup2(saved, 1)
                os.close(saved)
