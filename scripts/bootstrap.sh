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
[ -x .venv/bin/python ] || "$PY" -m venv .venv
stamp=.venv/.grpo-rlvr-installed
want=$(cat pyproject.toml constraints.txt | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "Installing grpo-rlvr and its tested stack into .venv (first run: a minute or two)..." >&2
  log=.venv/install.log
  # --no-compile: byte-compiling torch & co. at install time costs a minute; Python compiles on first import.
  if ! .venv/bin/python -m pip install --no-compile --disable-pip-version-check -c constraints.txt -e ".[dev]" \
       >"$log" 2>&1; then
    grep -v "is ignored" "$log" | tail -40 >&2
    echo "Error: installing into .venv failed; the full log is $log" >&2
    exit 1
  fi
  echo "$want" > "$stamp"
fi
