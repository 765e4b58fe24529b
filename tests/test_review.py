"""The review, driven for real in a pseudo-terminal: keys entered, quit halfway, resumed, finished; then the
gate passes. Verdicts are saved at once, so quitting loses nothing."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time

from artifacts import make_artifact
from grpo_rlvr.gate import check_gate
from grpo_rlvr.inspection import load_artifact


class Terminal:
    """A child process on a pty; ``expect`` reads until a text appears, ``send`` types a line."""

    def __init__(self, args):
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave, close_fds=True)
        os.close(slave)
        self.buffer = ""

    def expect(self, text: str, timeout_s: float = 60) -> str:
        deadline = time.monotonic() + timeout_s
        while text not in self.buffer:
            left = deadline - time.monotonic()
            assert left > 0, f"timed out waiting for {text!r}; screen ends with {self.buffer[-400:]!r}"
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.master, 65536).decode(errors="replace")
                except OSError:
                    chunk = ""
                if not chunk:
                    break
                self.buffer += chunk
        assert text in self.buffer, f"{text!r} never appeared"
        seen, self.buffer = self.buffer, self.buffer[self.buffer.index(text) + len(text):]
        return seen

    def send(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def wait(self) -> int:
        rc = self.proc.wait(timeout=60)
        os.close(self.master)
        return rc


PROMPT = "[a]gree  [d]isagree  [b]ack  [q]uit > "


def test_review_in_a_terminal_quit_resume_finish(workspace):
    art = make_artifact(workspace / "brief.yaml", workspace / "insp", n=50, prompts=25, verdict=None)
    cmd = [sys.executable, "-m", "grpo_rlvr", "review", str(art), "--reviewer", "alice"]

    t = Terminal(cmd)
    screen = t.expect(PROMPT)
    assert "Sample 1/50" in screen and "SCORES:" in screen and "exact_match" in screen
    for _ in range(20):
        t.send("a")
        t.expect(PROMPT)
    t.send("d")                                # a disagreement with a note, blaming a reward ...
    t.expect("What is wrong with the scores? > ")
    t.send("format should accept this")
    t.expect("empty = all) > ")
    t.send("format")
    t.expect(PROMPT)
    t.send("b")                                # ... then back, and changed to agree
    screen = t.expect(PROMPT)
    assert "Sample 21/50" in screen and "current verdict: disagree" in screen
    t.send("a")
    t.expect(PROMPT)
    t.send("q")
    t.expect("21 of 50 reviewed")
    assert t.wait() == 1

    saved = load_artifact(art).samples
    assert sum(1 for s in saved if s["verdict"]) == 21
    assert all(s["verdict"]["reviewer"] == "alice" for s in saved[:21])
    assert "2" in check_gate(art).format() and not check_gate(art).passed

    t = Terminal(cmd)                          # resume where we stopped
    screen = t.expect(PROMPT)
    assert "Resuming at sample 22 of 50" in screen
    for i in range(29):
        t.send("a")
        if i < 28:
            t.expect(PROMPT)
    t.expect("Review complete: 50 samples, 50 agree, 0 disagree.")
    assert t.wait() == 0
    assert check_gate(art).passed


def test_review_summary_points_at_blamed_reward(workspace):
    from io import StringIO

    from grpo_rlvr.review import review

    art = make_artifact(workspace / "brief.yaml", workspace / "insp2", n=50, prompts=25, verdict=None)
    keys = "d\nwrong\nexact_match\n" + "a\n" * 49
    out = StringIO()
    assert review(art, reviewer="bob", stdin=StringIO(keys), stdout=out) == 0
    assert "Disagreements point at: exact_match ×1" in out.getvalue()
    res = check_gate(art)
    assert not res.passed and res.calibration["rewards"]["exact_match"]["agreement"] < 1.0
    assert res.calibration["rewards"]["format"]["agreement"] == 1.0
