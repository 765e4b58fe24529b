"""Any test shape a row may hold, to one ``Plan``: a list of asserts, a list of stdin/stdout cases, JSON of either,
or test code (``plan_code``). The one entry point the sandbox and the planner process call."""

from __future__ import annotations

import json

from .plan import Plan
from .plan import _plan_asserts as plan_asserts
from .plan import _plan_stdio as plan_stdio
from .plan_code import plan_code


def make_plan(tests, entry_point: str | None = None) -> Plan:
    """Plan ``tests`` (a list of asserts, a list of stdin/stdout cases, JSON of either, or test code).

    ``entry_point``: the function HumanEval-style ``check(candidate)`` code is run on (the row's column).

    Raises:
        ValueError: ``tests`` has a shape this function does not accept, or defines tests but runs none;
            the message says which shapes work and what to change.
    """
    if isinstance(tests, str):
        try:
            decoded = json.loads(tests)
        except ValueError:
            decoded = None
        if isinstance(decoded, list):
            return make_plan(decoded)
        return plan_code(tests, entry_point)
    if isinstance(tests, (list, tuple)):
        if not tests:
            raise ValueError("tests is an empty list; give at least one assert string or stdin/stdout case")
        if all(isinstance(t, str) for t in tests):
            return plan_asserts(list(tests))
        if all(isinstance(t, dict) for t in tests):
            return plan_stdio(list(tests))
    raise ValueError(
        "tests must be a list of assert strings, a list of {'input': str, 'output': str} cases, "
        f"a JSON string of either, or a string of Python test code; got {_describe(tests)}"
    )


def _describe(tests) -> str:
    if isinstance(tests, (list, tuple)):
        kinds = sorted({type(t).__name__ for t in tests})
        return f"a {type(tests).__name__} of {'/'.join(kinds)}"
    return f"a {type(tests).__name__}"


__all__ = ["make_plan"]
