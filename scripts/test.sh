#!/usr/bin/env bash
# The README's second command: set up .venv, lint, then run every test (unit and e2e).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
.venv/bin/ruff check src tests benchmarks
exec .venv/bin/python -m pytest "$@"
