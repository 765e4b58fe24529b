"""TRL's GRPOTrainer, with held-out evaluation kept out of the training completions it logs. Training only.

GRPOTrainer 1.16 keeps one buffer of recent completions (``self._logs``) and writes it to
``completions/completions_<step>.parquet`` on every log. Evaluation fills the same buffer, and TRL generates
only once per ``steps_per_generation × num_iterations`` micro-steps, so a training log soon after an
evaluation (or the end-of-training summary) would write held-out completions as training ones. Here each
evaluation gets a fresh buffer, and the training buffer is put back afterwards. What the evaluation's own
log writes is moved to ``completions/eval/`` by ``training_callbacks.HeldOutCompletionsApart``.
"""

from __future__ import annotations

from collections import defaultdict, deque


def empty_like(logs: dict) -> dict:
    """A buffer of the same shape with nothing in it: deques keep their maxlen, defaultdicts their factory."""
    out = {}
    for key, value in logs.items():
        if isinstance(value, defaultdict):
            out[key] = defaultdict(value.default_factory)
        elif isinstance(value, deque):
            out[key] = deque(maxlen=value.maxlen)
        else:
            out[key] = type(value)()
    return out

