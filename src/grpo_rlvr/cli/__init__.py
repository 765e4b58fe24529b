"""CLI glue: what runs at the user's desk when they type ``grpo-rlvr …``.

``main`` parses and dispatches (``main.py``); the per-command report builders that only the CLI needs live
beside it (``validate.py``, ``score.py``, ``memory.py``). The phases themselves sit in their own packages.
"""

from grpo_rlvr.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
