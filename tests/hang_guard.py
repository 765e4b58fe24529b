"""A bound on how much work one case may do: a hang (an alias bomb, a quadratic parse) fails the case instead of
stalling the suite. The bound is the process's CPU time, not the wall clock: the readers it guards compute, so a
hang is CPU spent, while a machine loaded by other work stretches the wall time of a linear read without spending
more of its CPU. Generous (a case takes milliseconds) and a guard against hangs only, not a performance threshold;
a block waiting on something (a sleep, a subprocess) spends none and is not bounded by it."""

from __future__ import annotations

import contextlib
import signal

HANG_S = 30  # CPU seconds for one case of parsing, gating or scoring a small input; a hang is minutes


class Hang(AssertionError):
    pass


@contextlib.contextmanager
def no_hang(seconds: float = HANG_S):
    """Fail with ``Hang`` when the block spends more than ``seconds`` of the process's CPU time (user and system,
    every thread: ``ITIMER_PROF``; main thread only, as a signal handler)."""
    def fire(signum, frame):
        raise Hang(f"one case spent {seconds} s of CPU time: the reader hangs on this input")

    old = signal.signal(signal.SIGPROF, fire)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)
