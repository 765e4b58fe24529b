#!/usr/bin/env bash
# The tests that assert an outcome of training (marker training_outcome), again with torch's CPU kernels held to
# AVX2: what a CPU without AVX-512 runs. Kernels round differently, and training amplifies the difference, so
# an outcome that holds only with one kernel set shows up here before it reaches a user. Extra arguments go to
# pytest. Run it after scripts/test.sh (which makes .venv).
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export ATEN_CPU_CAPABILITY=avx2 MKL_ENABLE_INSTRUCTIONS=AVX2 ONEDNN_MAX_CPU_ISA=AVX2
capability=$(.venv/bin/python -c 'import torch; print(torch.backends.cpu.get_cpu_capability())')
if [ "$capability" != "AVX2" ]; then
  echo "Error: torch reports CPU capability $capability with ATEN_CPU_CAPABILITY=avx2; this CPU cannot run the AVX2 lane" >&2
  exit 2
fi
echo "training-outcome tests with CPU capability $capability"
# Two pytest workers, as scripts/test.sh runs them (GRPO_RLVR_TEST_WORKERS=0: one process)
exec .venv/bin/python -m pytest -m training_outcome -n "${GRPO_RLVR_TEST_WORKERS:-2}" --dist worksteal "$@"
