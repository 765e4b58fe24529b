#!/usr/bin/env bash
# The tests that assert an outcome of training (marker training_outcome), again with torch's CPU kernels held to
# AVX2: what a CPU without AVX-512 runs. Kernels round differently, and training amplifies the difference, so
# an outcome that holds only with one kernel set shows up here before it reaches a user. Extra arguments go to
# pytest. Run it after scripts/test.sh (which makes .venv).
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
capability() { .venv/bin/python -c 'import torch; print(torch.backends.cpu.get_cpu_capability())'; }   # torch's pick
# --unless-native (CI): on a CPU whose widest vector extension is AVX2 (no AVX-512, no AVX-VNNI flag in
# /proc/cpuinfo, or GRPO_RLVR_CPUINFO's file, and torch picks AVX2 unprompted), the main lane already ran these tests
# with these kernels: the lane says so and runs nothing.
if [ "${1:-}" = --unless-native ]; then
  shift
  native=$(unset ATEN_CPU_CAPABILITY; capability)
  if [ "$native" = AVX2 ] && ! grep -qE '^flags.*\b(avx512[a-z_0-9]*|avx_vnni)\b' "${GRPO_RLVR_CPUINFO:-/proc/cpuinfo}"; then
    echo "this CPU's own kernels are AVX2 (torch: $native; no AVX-512 or AVX-VNNI flag): the main lane ran the" \
         "training-outcome tests with them already; nothing to repeat"
    exit 0
  fi
fi
export ATEN_CPU_CAPABILITY=avx2 MKL_ENABLE_INSTRUCTIONS=AVX2 ONEDNN_MAX_CPU_ISA=AVX2
capability=$(capability)
if [ "$capability" != "AVX2" ]; then
  echo "Error: torch reports CPU capability $capability with ATEN_CPU_CAPABILITY=avx2; this CPU cannot run the AVX2 lane" >&2
  exit 2
fi
echo "training-outcome tests with CPU capability $capability"
# Which: the demo (the README's claim), and the cheapest training-outcome tests that cover each kind of finding (no
# signal, a broken policy, a run stopped on falling correctness, dynamic sampling out of rounds, a plain TRL run): six
# of the thirteen, for CI's time budget. Every training-outcome test was swept with both kernel sets over several seeds
# (benchmarks/outcome_sweep.py, each test's docstring); `scripts/test-avx2.sh --all` runs all of them, and test files
# or node ids given replace this set.
paths=(tests/demo/test_pipeline.py::test_demo_runs_every_phase
       tests/diagnosis/test_runs.py::test_untrained_model_has_no_learning_signal
       tests/diagnosis/test_runs.py::test_learning_rate_that_breaks_the_policy
       tests/diagnosis/test_runs.py::test_a_short_run_whose_correctness_falls_to_zero_is_found_and_stopped
       tests/diagnosis/test_runs.py::test_dynamic_sampling_that_runs_out_of_rounds_is_told_so
       tests/diagnosis/test_plain_trl.py)
args=()
for a in "$@"; do
  case $a in
    --all) paths=() ;;
    tests/*) paths=(); args+=("$a") ;;
    *) args+=("$a") ;;
  esac
done
# Two pytest workers, as scripts/test.sh runs them (GRPO_RLVR_TEST_WORKERS=0: one process)
exec .venv/bin/python -m pytest -m training_outcome -n "${GRPO_RLVR_TEST_WORKERS:-2}" --dist worksteal "${paths[@]}" "${args[@]}"
