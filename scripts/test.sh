#!/usr/bin/env bash
# The README's second command: set up .venv, lint, then run every test (unit and e2e).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
# The dashboard test (tests/diagnosis/test_watchdog_dashboard.py) opens trackio's page in Debian's headless Chromium: as root
# (CI), install it once (~80 MB download, idempotent); elsewhere that test skips, naming the package.
if ! command -v chromium >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "Installing chromium for the dashboard test (apt-get install chromium)..." >&2
  scripts/apt-install.sh chromium
fi
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
.venv/bin/ruff check src tests benchmarks hooks
# Two pytest workers (pytest-xdist), work-stealing so that the long end-to-end tests do not bunch up on one worker;
# GRPO_RLVR_TEST_WORKERS=0 runs every test in one process (or pass -n 0: a later -n wins).
exec .venv/bin/python -m pytest -n "${GRPO_RLVR_TEST_WORKERS:-2}" --dist worksteal "$@"
