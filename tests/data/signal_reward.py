"""A reward whose share of zero-signal groups is set by the prompt, for the dynamic-sampling runs.

Prompts whose answer is even (about half of the arithmetic rows) give every completion 1.2, whose float32 std over
eight completions is not an exact zero; the others score each completion by a hash of its text (different texts,
different scores), and return None (TRL's "not applicable") for a third of them. ``mostly_flat`` keeps only answers
divisible by 10 (about a tenth of the rows) informative.
"""

import hashlib


def _text(completion) -> str:
    return completion if isinstance(completion, str) else "".join(str(m.get("content", "")) for m in completion)


def _score(completions, answer, informative):
    out = []
    for completion, a in zip(completions, answer, strict=True):
        if not informative(int(a)):
            out.append(1.2)
            continue
        h = int(hashlib.sha256(_text(completion).encode()).hexdigest(), 16)
        out.append(None if h % 3 == 0 else (h % 5) / 4)
    return out


def half(completions, answer, **kwargs):
    return _score(completions, answer, lambda a: a % 2 == 1)


def mostly_flat(completions, answer, **kwargs):
    return _score(completions, answer, lambda a: a % 10 == 0)
