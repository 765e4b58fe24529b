"""A child process on a pseudo-terminal, driven as a person at a keyboard: what the review tests type into."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time


class Terminal:
    """A child process on a pty; ``expect`` reads until a text appears, ``send`` types a line."""

    def __init__(self, args):
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave, close_fds=True)
        os.close(slave)
        self.buffer = ""
        self.raw = b""

    def expect(self, text: str, timeout_s: float = 60) -> str:
        deadline = time.monotonic() + timeout_s
        while text not in self.buffer:
            left = deadline - time.monotonic()
            assert left > 0, f"timed out waiting for {text!r}; screen ends with {self.buffer[-400:]!r}"
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:
                    chunk = b""
                if not chunk:
                    break
                self.raw += chunk
                self.buffer += chunk.decode(errors="replace")
        assert text in self.buffer, f"{text!r} never appeared; screen ends with {self.buffer[-400:]!r}"
        seen, self.buffer = self.buffer, self.buffer[self.buffer.index(text) + len(text):]
        return seen

    def send(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def wait(self) -> int:
        rc = self.proc.wait(timeout=60)
        os.close(self.master)
        return rc
