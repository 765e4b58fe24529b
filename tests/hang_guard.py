"""A bound on how long one fuzz case may take: a hang (an alias bomb, a quadratic parse) fails the case
instead of stalling the suite. The bound is generous (a case takes milliseconds) and guards against hangs
only; it is not a performance threshold."""

from __future__ import annotations

import contextlib
import signal

HANG_S = 30  # one case of parsing, gating or scoring a small input; a hang is minutes


class Hang(AssertionError):
    pass


@contextlib.contextmanager
def no_hang(seconds: float = HANG_S):
    """Fail with ``Hang`` when the block runs longer than ``seconds`` (main thread only: SIGALRM)."""
    def fire(signum, frame):
        raise Hang(f"one fuzz case ran past {seconds} s: the reader hangs on this input")

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
