"""YAML made to hurt a reader, for the tests of every place that parses a user's YAML."""

from __future__ import annotations

# A document of nine lines whose aliases expand to 9**9 (387 million) strings.
BILLION_LAUGHS = "".join(
    f"{n}: &{n} [" + ",".join([f"*{p}"] * 9 if p else ['"lol"'] * 9) + "]\n"
    for p, n in zip([None, *"abcdefgh"], "abcdefghi", strict=True)
) + "model: *i\n"
