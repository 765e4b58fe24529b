#!/usr/bin/env bash
# GPU smoke test for a machine with one NVIDIA GPU and no internet: the demo pipeline on CUDA (bf16, no vLLM),
# reporting step time and peak memory next to the memory model's estimate. Uses .venv when present.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
[ -x "$PY" ] || PY=python3
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
exec "$PY" -m grpo_rlvr.demo.gpu_smoke "$@"
