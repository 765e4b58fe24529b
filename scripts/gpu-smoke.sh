#!/usr/bin/env bash
# GPU smoke test for a machine with one NVIDIA GPU and no internet (< 8 min on one H100/H200): colocated GRPO with
# vLLM through `grpo-rlvr train` on the demo model and on a larger model built here, vLLM's sleep mode off and
# on, the measured peak memory beside `grpo-rlvr memory`'s estimate, and vLLM against transformers sampling
# (benchmarks/bench_sampling.py). One JSON file: runs/gpu-smoke/gpu_smoke.json (see src/grpo_rlvr/demo/gpu_smoke.py).
#
# Needs the vLLM lane's environment, made beforehand with network access: scripts/test-vllm.sh creates .venv-vllm
# (it installs `vllm` where nvidia-smi sees a GPU). --cpu-rehearsal runs the same script on vLLM's CPU build.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv-vllm/bin/python}
if [ ! -x "$PY" ]; then
  echo "Error: $PY not found; create the vLLM environment first: scripts/test-vllm.sh (needs the network once)," \
       "or set PYTHON to an interpreter with grpo-rlvr and vLLM" >&2
  exit 2
fi
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
exec "$PY" -m grpo_rlvr.demo.gpu_smoke "$@"
