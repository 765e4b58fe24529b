"""Terminal escape codes are taken out of what train.py writes to a file or a pipe, and kept in a terminal."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys

from grpo_rlvr.plain_output import PlainStream

BANNER = '\x1b[1m\x1b[38;5;208mtrackio show --project "p"\x1b[0m\n'


def test_escape_sequences_go_and_the_text_stays():
    out = io.StringIO()
    s = PlainStream(out)
    s.write(BANNER)
    s.write("cut \x1b[3")                         # a sequence split over two writes
    s.write("1mred\x1b[0m and a link \x1b]8;;https://x\x07here\x1b]8;;\x07\n")
    s.write("a lone escape \x1b")                 # never finished: its byte goes, the text stays
    s.flush()
    assert out.getvalue() == 'trackio show --project "p"\ncut red and a link here\na lone escape '


CODE = ("import sys; from grpo_rlvr.plain_output import plain_when_redirected; plain_when_redirected(); "
        f"sys.stdout.write({BANNER!r}); sys.stderr.write({BANNER!r})")


def test_a_file_gets_plain_text_and_a_terminal_keeps_its_colour(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, env=env, check=True)
    assert done.stdout == done.stderr == 'trackio show --project "p"\n'
    pid, fd = pty.fork()
    if pid == 0:   # the child: stdout and stderr are the terminal
        os.execve(sys.executable, [sys.executable, "-c", CODE], env)
    seen = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.waitpid(pid, 0)
    assert seen.count(b"\x1b[38;5;208m") == 2, seen
