"""Where the tests find the repository, their own data and scripts, and how they run the CLI."""

from __future__ import annotations

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
DATA = TESTS / "data"        # small files the tests read (a demo trainer_state.json, a user reward module)
SCRIPTS = TESTS / "scripts"    # scripts a user would write (a plain TRL run)
CLI = [sys.executable, "-m", "grpo_rlvr"]
