"""The CPU the trainer's thread may spend judging one sample, and the size bounds that keep each step of it short.

Judging runs in the trainer (``judging.verdict.decide``): decoding the values that crossed and applying the test's
comparisons, arithmetic and built-ins to them (``judging.plain_ops``). A value is bounded in size when it crosses
(``judging.plaindata``), but some operations cost far more than their operands' size: ``//`` and ``%`` of two
multi-megabit ints, ``math.gcd`` of two, ``sum`` of tens of thousands of lists. Each such operation is refused
past ``MAX_QUADRATIC_DIGITS`` (its test fails, naming the bound), so no single step holds the thread (and the
GIL) long, and the whole sample has ``JUDGE_CPU_S`` of this thread's CPU time: past it the sample scores 0 with
that reason (``OverBudget``, checked between steps).
Covered: every step of decoding and of the parent's expression evaluation. Not covered: the test's own values,
computed in the planner process (bounded there, see ``judging.planner``).
"""

from __future__ import annotations

import time
from _thread import get_ident

JUDGE_CPU_S = 2.0  # CPU seconds of the judging thread per sample
MAX_QUADRATIC_DIGITS = 25_000_000  # 30-bit digit pairs of one int division, modulo or gcd (about 50 ms)
_DIGIT_BITS = 30

_deadlines: dict[int, float] = {}  # judging thread -> the thread_time() at which its sample's budget runs out


class OverBudget(Exception):
    """Judging one sample took more than ``JUDGE_CPU_S`` of the trainer's CPU: the sample scores 0."""


class Budget:
    """``with Budget():`` around one sample's judging on this thread."""

    def __enter__(self) -> Budget:
        _deadlines[get_ident()] = time.thread_time() + JUDGE_CPU_S
        return self

    def __exit__(self, *exc) -> None:
        _deadlines.pop(get_ident(), None)


def spend() -> None:
    """Raise ``OverBudget`` when this thread's sample has used up its CPU time (no-op outside ``Budget``)."""
    deadline = _deadlines.get(get_ident())
    if deadline is not None and time.thread_time() > deadline:
        raise OverBudget(f"judging took more than {JUDGE_CPU_S:g} s of the trainer's CPU")


def quadratic(a, b, what: str) -> None:
    """Refuse an int operation whose cost grows with the product of its operands' sizes (OverflowError)."""
    if type(a) is int and type(b) is int:
        work = (a.bit_length() // _DIGIT_BITS + 1) * (b.bit_length() // _DIGIT_BITS + 1)
        if work > MAX_QUADRATIC_DIGITS:
            raise OverflowError(f"{what} of a {a.bit_length()}-bit and a {b.bit_length()}-bit int is too costly to "
                                f"judge (over {MAX_QUADRATIC_DIGITS} digit pairs)")
