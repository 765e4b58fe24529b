#!/usr/bin/env bash
# Create (or reuse) the project's virtual environment in .venv with the tested stack
# (constraints.txt pins torch 2.13.0 and the vLLM-compatible transformers).
# Idempotent: reinstalls only when pyproject.toml or constraints.txt change.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
# requires-python in pyproject.toml: the pinned numpy, pandas and matplotlib need Python 3.11 or newer; 3.14 is the
# newest that torch and vLLM's CPU build accept and that CI tests
if [ ! -x .venv/bin/python ] && ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11) or sys.version_info >= (3, 15))' 2>/dev/null; then
  echo "Error: $PY is not Python 3.11 to 3.14 (grpo-rlvr needs >=3.11,<3.15); set PYTHON to one, e.g. PYTHON=python3.11 $0" >&2
  exit 2
fi
# Which torch build: pip takes torch from your package index, and PyPI's Linux wheel is a CUDA build (with its NVIDIA
# libraries, about 3 GB more). GRPO_RLVR_TORCH=cpu adds PyTorch's own CPU-only index, whose torch==2.13.0+cpu pip then
# prefers (a CPU-only environment, 1.7 GB installed); GRPO_RLVR_TORCH_CPU_INDEX names a mirror of that index. Where
# that index cannot be reached pip quietly takes PyPI's CUDA build: refused before the install, and checked after it.
torch_index=()
cpu_index=${GRPO_RLVR_TORCH_CPU_INDEX:-https://download.pytorch.org/whl/cpu}
case "${GRPO_RLVR_TORCH:-}" in
  "") ;;
  cpu) torch_index=(--extra-index-url "$cpu_index") ;;
  *) echo "Error: GRPO_RLVR_TORCH=${GRPO_RLVR_TORCH}: use GRPO_RLVR_TORCH=cpu (PyTorch's CPU-only build), or leave it unset (your index's torch)" >&2
     exit 2 ;;
esac
[ -x .venv/bin/python ] || "$PY" -m venv .venv
stamp=.venv/.grpo-rlvr-installed
want=$( { cat pyproject.toml constraints.txt scripts/compile-venv.sh; [ -z "${GRPO_RLVR_TORCH:-}" ] || echo "torch=$GRPO_RLVR_TORCH"; } | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "Installing grpo-rlvr and its tested stack into .venv (first run: a minute or two from pip's cache, longer when it downloads)..." >&2
  if [ -z "${GRPO_RLVR_TORCH:-}" ] && ! command -v nvidia-smi >/dev/null; then
    echo "Note: no GPU found; torch comes from your package index (from PyPI: a CUDA build, about 3 GB more). For the CPU-only build: Ctrl-C, rm -rf .venv, then GRPO_RLVR_TORCH=cpu scripts/demo.sh (or test.sh)" >&2
  fi
  if [ "${GRPO_RLVR_TORCH:-}" = cpu ] && ! .venv/bin/python -c '
import os, sys, urllib.request
url = sys.argv[1].rstrip("/") + "/torch/"
if url.startswith("file://"):
    sys.exit(not os.path.isdir(url[len("file://"):]))
urllib.request.urlopen(url, timeout=20)' "$cpu_index" 2>/dev/null; then
    echo "Error: GRPO_RLVR_TORCH=cpu, but PyTorch's CPU-only index ($cpu_index) cannot be reached from here, and pip" \
         "would quietly take PyPI's CUDA build instead (about 3 GB more). Set GRPO_RLVR_TORCH_CPU_INDEX to a mirror of" \
         "that index you can reach, or unset GRPO_RLVR_TORCH to take your package index's torch" >&2
    exit 2
  fi
  log=.venv/install.log
  # --no-compile: pip byte-compiles on one core; scripts/compile-venv.sh below does it on every core.
  if ! .venv/bin/python -m pip install --no-compile --disable-pip-version-check "${torch_index[@]}" -c constraints.txt -e ".[dev]" \
       >"$log" 2>&1; then
    grep -v "is ignored" "$log" | tail -40 >&2
    echo "Error: installing into .venv failed; the full log is $log" >&2
    exit 1
  fi
  if [ "${GRPO_RLVR_TORCH:-}" = cpu ] && ! .venv/bin/python -c 'import sys, torch; sys.exit(torch.version.cuda is not None)'; then
    echo "Error: GRPO_RLVR_TORCH=cpu, but pip installed a CUDA build of torch (from another index than $cpu_index; see" \
         "$log). Remove .venv, then run again with GRPO_RLVR_TORCH_CPU_INDEX naming a reachable mirror of the CPU index" >&2
    exit 1
  fi
  scripts/compile-venv.sh .venv
  echo "$want" > "$stamp"
fi
