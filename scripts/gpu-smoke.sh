#!/usr/bin/env bash
# GPU smoke test for a machine with one NVIDIA GPU and no internet (sized for < 8 min on one H100/H200; not yet
# run on a GPU, only as --cpu-rehearsal): colocated GRPO with vLLM through `grpo-rlvr train` on the demo model and
# on a larger model built here, vLLM's sleep mode off and on, the measured peak memory beside `grpo-rlvr memory`'s
# estimate, and vLLM against transformers sampling (benchmarks/bench_sampling.py). One JSON file:
# runs/gpu-smoke/gpu_smoke.json (see src/grpo_rlvr/demo/gpu_smoke.py).
#
# Needs the vLLM lane's environment, made beforehand with network access: scripts/test-vllm.sh creates .venv-vllm
# (it installs `vllm` where nvidia-smi sees a GPU). --cpu-rehearsal runs the same script on vLLM's CPU build.
# Exit 2, naming what is missing, without that environment or without a CUDA device.
#
# Not in this check, as measured on CPU (accelerate 1.15, torch 2.13, gloo): FSDP2 over 2 CPU processes is not
# refused but not applied either: accelerate picks its MULTI_CPU mode for cpu=True and wraps the model in
# DistributedDataParallel whatever the FSDP plugin says (validate warns about sharding: fsdp2 on CPU). Sleep mode
# on vLLM's CPU build: "ValueError: Sleep mode is not supported on current platform."
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
