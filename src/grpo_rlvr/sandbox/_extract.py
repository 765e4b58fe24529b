"""Finding the program in a model's completion text.

Covered: Markdown fences. The last fenced block tagged ``python``/``py``/``python3`` wins; otherwise the
last untagged fenced block; otherwise the whole text. An unterminated final fence (a completion cut at
``max_completion_length``) is taken up to the end of the text. Not covered: other languages, several blocks
that only work when concatenated (take the last one: models usually repeat the full program at the end).
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^[ \t]*```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:^[ \t]*```[ \t]*$|\Z)", re.M | re.S)
_PYTHON_TAGS = {"python", "py", "python3", "py3"}


def extract_program(text: str) -> str:
    """The code to run, or ``""`` when the completion holds no code at all."""
    if not isinstance(text, str):
        return ""
    blocks = [(m.group(1).lower(), m.group(2)) for m in _FENCE.finditer(text)]
    python = [body for tag, body in blocks if tag in _PYTHON_TAGS and body.strip()]
    plain = [body for tag, body in blocks if not tag and body.strip()]
    if python:
        code = python[-1]
    elif plain:
        code = plain[-1]
    elif blocks:  # fenced, but only in other languages
        return ""
    else:
        code = text
    return code if code.strip() else ""
