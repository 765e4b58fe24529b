"""The demo's synthetic verifiable task: single-digit addition with a required answer format.

A prompt is the user turn ``"3+4="``; a correct completion is ``"<answer>7</answer>"``. The format part of the
reward checks the tags, the correctness part checks the number, so the reward is composite. The oracle here is
independent of the reward code (it recomputes the sum from the prompt and parses the completion its own way);
the demo uses it in place of a human reviewer and says so in the inspection artifact.
"""

from __future__ import annotations

import random
import re
from fractions import Fraction

ORACLE_REVIEWER = "oracle:arithmetic-demo"


def make_rows(n: int, seed: int, max_operand: int = 9) -> list[dict]:
    """``n`` dataset rows ``{"prompt": [user message], "answer": "7"}`` drawn with ``seed``."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        a, b = rng.randint(0, max_operand), rng.randint(0, max_operand)
        rows.append({"prompt": [{"role": "user", "content": f"{a}+{b}="}], "answer": str(a + b)})
    return rows


def target_completion(answer: str) -> str:
    return f"<answer>{answer}</answer>"


_PROMPT = re.compile(r"^(\d+)\+(\d+)=$")
_NUMBER = re.compile(r"[+-]?[0-9]{1,40}(?:\.[0-9]{1,40})?(?:[eE][+-]?[0-9]{1,2})?")   # bounded: no huge powers


def oracle_judgement(prompt_text: str, completion_text: str) -> tuple[bool, bool]:
    """(well_formed, correct) decided without the reward code: exact structure, and a number equal to the sum as a
    person reads one (``3``, ``3.``, ``3.0``, ``03``, ``+3``, ``: 3``, ``is 3``: a full stop after a number ends a
    sentence, and "the answer: 3" or "the answer is 3" is an answer of 3)."""
    m = _PROMPT.match(prompt_text.strip())
    if m is None:
        raise ValueError(f"not an arithmetic prompt: {prompt_text!r}")
    truth = int(m.group(1)) + int(m.group(2))
    text = completion_text.strip()
    well_formed = text.startswith("<answer>") and text.endswith("</answer>") and text.count("<answer>") == 1
    inner = text[len("<answer>"):-len("</answer>")] if well_formed else ""
    return well_formed, well_formed and number_read(inner) == truth


def number_read(inner: str) -> Fraction | None:
    """The number a person reads in an answer tag's text (``3``, ``3.``, ``3.0``, ``03``, ``+3``, ``: 3``, ``is 3``),
    or None where there is none; written here, apart from the rewards, for the demos' oracles."""
    number = re.sub(r"^(?:is\s+|:\s*)", "", inner.strip()).rstrip(". ")
    return Fraction(number) if _NUMBER.fullmatch(number) else None
