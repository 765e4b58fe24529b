#!/usr/bin/env bash
# The README's first command: set up .venv, then run the whole pipeline on the embedded tiny model (CPU).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
exec .venv/bin/grpo-rlvr demo "$@"
