"""A user reward that calls a verifier nobody here wrote: a reasoning-gym task's own ``score_answer``.

reasoning-gym (``pip install 'grpo-rlvr[reasoning-gym]'``) ships procedural task generators, each with its own
``score_answer(answer, entry)``. The data step (``data.py`` beside this file) stores every row's reasoning-gym
entry as a JSON string in the ``entry`` column; this reward rebuilds the entry and asks the task that made it.
In a brief it is ``name: grpo_rlvr.examples.reasoning_gym.reward:score`` with ``kind: correctness`` and
``require_format: true``, so it sees only the text inside the brief's ``<answer>`` tag and a malformed completion
scores 0 before the task is asked. Scores are the task's own (spell_backward gives partial credit for a right
prefix); a ``score_answer`` that raises on a strange answer scores 0 with the error as the reason, since model
output must never stop training. Copy this file to bring your own verifier the same way.
"""

from __future__ import annotations

import json
from functools import cache


@cache
def _task(name: str):
    import reasoning_gym

    return reasoning_gym.create_dataset(name, size=1, seed=0)  # only its score_answer is used


def score(completions: list[str], entry: list, **kwargs) -> list[tuple[float, str]]:
    """One ``(score, reason)`` per completion, by the task named in each row's entry.

    Raises:
        ValueError: an ``entry`` that is not a reasoning-gym entry (bad data, not model output).
    """
    out = []
    for text, raw in zip(completions, entry, strict=True):
        e = json.loads(raw) if isinstance(raw, str) else raw
        if not isinstance(e, dict) or "answer" not in e or "source_dataset" not in (e.get("metadata") or {}):
            raise ValueError(f"column 'entry' holds {str(raw)[:80]!r}, not a reasoning-gym entry; write the data "
                             "with python -m grpo_rlvr.examples.reasoning_gym.data")
        task = e["metadata"]["source_dataset"]
        answer = text.strip()
        try:
            got = float(_task(task).score_answer(answer=answer, entry=e))
        except Exception as err:  # noqa: BLE001 - the verifier failing on a strange answer is a score of 0
            out.append((0.0, f"{task}.score_answer raised {type(err).__name__} on {answer[:30]!r}"))
            continue
        out.append((got, f"{task}.score_answer {got:.2f}: {answer[:30]!r} vs {str(e['answer'])[:30]!r}"))
    return out
