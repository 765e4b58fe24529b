"""Reading a rendered run folder's train.py as tests need it: its ``SETUP`` (what the trainer is built from), and the
policy it loads, through the builder its ``main`` calls (``trainer.trainer_build``)."""

from __future__ import annotations

import ast
from pathlib import Path


def setup_of(run: Path) -> dict:
    """The ``SETUP`` constant of ``run/train.py``, read as Python reads the literal."""
    for node in ast.parse((Path(run) / "train.py").read_text()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "SETUP":
            return ast.literal_eval(node.value)
    raise AssertionError(f"{run}/train.py has no SETUP")


def load_policy_of(run: Path, config):
    """What the run's train.py loads as its policy for ``config`` (a path TRL loads, or a model)."""
    from grpo_rlvr.trainer.trainer_build import load_policy

    return load_policy(setup_of(run), config)
