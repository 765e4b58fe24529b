"""CLI glue: what runs at the user's desk when they type ``grpo-rlvr …``.

``main`` parses and dispatches (``main.py``); beside it, what only the CLI needs: the text forms of the
``validate`` and ``score`` reports (``validate.py``, ``score.py``) and the ``memory`` command's shell
(``memory.py``). The phases themselves, and the reports they return, sit in their own modules; nothing outside
``cli/`` imports from it but the ``python -m grpo_rlvr`` entry.
"""

from grpo_rlvr.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
