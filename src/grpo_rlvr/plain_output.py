"""Output written to a file or a pipe carries no terminal escape codes; library warnings print as one line.

Libraries training loads colour what they print without asking where it goes (trackio's banner prints
``\\x1b[1m\\x1b[38;5;208mtrackio show ...\\x1b[0m`` always). In a terminal that is colour; in a redirected log or a
pipe it is noise that a person must read past and a parser must skip. :func:`plain_when_redirected` wraps
``sys.stdout`` and ``sys.stderr`` of the rendered train.py: a stream that is not a terminal has its escape
sequences (CSI, OSC, and the two-byte ones) taken out; a terminal keeps them. The text itself is unchanged.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys

# CSI (ESC [ ... final byte), OSC (ESC ] ... BEL or ESC \), and the two-byte escapes (ESC and one byte)
ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


class PlainStream(io.TextIOBase):
    """Writes through to ``stream`` without terminal escape sequences; everything else is the stream's own."""

    def __init__(self, stream):
        self.stream = stream
        self.held = ""   # an escape sequence cut in two by a write: its start waits for the rest

    def write(self, text: str) -> int:
        n, text = len(text), self.held + text
        cut = text.rfind("\x1b")
        if cut != -1 and cut > len(text) - 64 and not ESCAPES.match(text, cut):
            text, self.held = text[:cut], text[cut:]   # an unfinished sequence at the end
        else:
            self.held = ""
        self.stream.write(ESCAPES.sub("", text))
        return n

    def flush(self) -> None:
        if self.held:   # an escape never finished: its bytes without the escape character
            self.stream.write(self.held.replace("\x1b", ""))
            self.held = ""
        self.stream.flush()

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return self.stream.fileno()

    def __getattr__(self, name):   # encoding, errors, buffer, ...: the stream's own
        return getattr(self.stream, name)


def plain_when_redirected() -> None:
    """Wrap ``sys.stdout`` and ``sys.stderr`` in :class:`PlainStream` where they are not a terminal, each written
    a line at a time: Python buffers a redirected stdout in blocks, so a line printed to it (trackio's banner) came
    out after the stderr lines written later (the demo's phases and steps) in a log that holds both."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None or isinstance(stream, PlainStream):
            continue
        try:
            tty = stream.isatty()
        except (AttributeError, ValueError, OSError):
            tty = False
        if not tty:
            with contextlib.suppress(AttributeError, ValueError, io.UnsupportedOperation):
                stream.reconfigure(line_buffering=True)   # a stream that cannot (a test's capture) stays as it is
            setattr(sys, name, PlainStream(stream))


def one_line_warnings() -> None:
    """Library warnings (TRL's experimental features, transformers' deprecations) as one line each, as
    ``warning: Category: message``, without the source line Python prints under each (which names library
    internals and repeats the call)."""
    import warnings

    def formatted(message, category, filename, lineno, line=None):   # noqa: ARG001  (the signature Python calls)
        return f"warning: {category.__name__}: {str(message).strip()}\n"

    warnings.formatwarning = formatted


def run_name_of(run_dir) -> str:
    """The name dashboards (trackio, wandb) give a run: its folder's name and 8 hex digits of its absolute path, so
    a resume of the folder continues the same dashboard run and another folder of the same name never joins it."""
    import hashlib
    from pathlib import Path

    path = Path(run_dir).resolve()
    return f"{path.name}-{hashlib.sha256(str(path).encode()).hexdigest()[:8]}"
