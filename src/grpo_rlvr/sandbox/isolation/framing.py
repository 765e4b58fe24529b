"""Length-prefixed messages over a pipe (JSON between the parent and a supervisor; bytes for the planner), both
sides trusted.

Covered: whole-message reads with a deadline (``recv`` returns None at a clean end of stream).
Not covered: messages over ``MAX_MESSAGE`` bytes, or over the reader's own bound (refused unread).
"""

from __future__ import annotations

import json
import os
import select
import struct
import time

MAX_MESSAGE = 256 * 1024 * 1024
_HEADER = struct.Struct(">I")


class ChannelError(Exception):
    """The other side is gone, too slow, or sent garbage."""


class TimedOut(ChannelError):
    """The other side did not answer before the deadline."""


def send(fd: int, obj) -> None:
    send_bytes(fd, json.dumps(obj, ensure_ascii=True).encode())


def send_bytes(fd: int, body: bytes) -> None:
    data = memoryview(_HEADER.pack(len(body)) + body)
    while data:
        try:
            data = data[os.write(fd, data) :]
        except OSError as e:
            raise ChannelError(f"write failed: {e}") from e


def recv(fd: int, deadline: float | None = None, limit: int = MAX_MESSAGE):
    """One message, or None if the stream ended cleanly before a message began. A message announcing more
    than ``limit`` bytes is refused before any of it is read."""
    body = recv_bytes(fd, deadline, limit)
    if body is None:
        return None
    try:
        return json.loads(body)
    except ValueError as e:
        raise ChannelError(f"malformed message: {e}") from e


def recv_bytes(fd: int, deadline: float | None = None, limit: int = MAX_MESSAGE) -> bytes | None:
    """``recv`` without the JSON: the message's bytes."""
    header = _read_exact(fd, _HEADER.size, deadline, allow_eof=True)
    if header is None:
        return None
    (size,) = _HEADER.unpack(header)
    if size > min(limit, MAX_MESSAGE):
        raise ChannelError(f"message of {size} bytes refused (at most {min(limit, MAX_MESSAGE)} expected)")
    return _read_exact(fd, size, deadline, allow_eof=False)


def _read_exact(fd: int, size: int, deadline: float | None, allow_eof: bool):
    chunks, got = [], 0
    while got < size:
        if deadline is not None and not _wait_readable(fd, deadline):
            raise TimedOut("timed out waiting for the other side")
        try:
            chunk = os.read(fd, min(size - got, 1 << 20))
        except OSError as e:
            raise ChannelError(f"read failed: {e}") from e
        if not chunk:
            if allow_eof and got == 0:
                return None
            raise ChannelError("the other side closed the stream mid-message")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _wait_readable(fd: int, deadline: float) -> bool:
    """poll, not select: the parent (a trainer) may hold more than 1024 open files."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    remaining = deadline - time.monotonic()
    return remaining > 0 and bool(poller.poll(remaining * 1000))
