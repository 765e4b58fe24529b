"""The demo's sampling count: a terminal sees one line count up (carriage returns); a log file or a pipe gets one
plain line with the finished count, never raw carriage returns (a plain user's redirected log held
``^M    sampling 256/512^M    sampling 512/512``)."""

from __future__ import annotations

import io

from grpo_rlvr.demo.pipeline import _Phases


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_file_gets_one_plain_line_and_a_terminal_counts_up():
    for stream, want in ((io.StringIO(), "    sampling 512/512\n"),
                         (Terminal(), "\r    sampling 256/512\r    sampling 512/512\n")):
        ph = _Phases(stream)
        ph.progress(256, 512)
        ph.progress(512, 512)
        assert stream.getvalue() == want
