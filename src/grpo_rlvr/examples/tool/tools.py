"""The tool the tool demo's model calls: a calculator that adds two whole numbers.

A brief names it in its ``tools`` section (``grpo_rlvr.examples.tool.tools:add``); TRL's ``GRPOTrainer(tools=[add])``
reads its name, type hints and docstring into the JSON schema that types the model's arguments, calls it with what
the model wrote and sends back what it returns (or, when it raises, ``{"error": message}``) as the tool's reply.
"""

from __future__ import annotations


def add(a: int, b: int) -> int:
    """Add two whole numbers.

    Args:
        a: The first number.
        b: The second number.

    Returns:
        The sum of a and b.
    """
    # the parser types an argument it can read as an int; anything else arrives as text ("12x"), and text would
    # concatenate, so it is refused here, and the model reads the refusal as the tool's reply
    if type(a) is not int or type(b) is not int:
        raise TypeError(f"add takes two whole numbers, got {a!r} and {b!r}")
    return a + b
