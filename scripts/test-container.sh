#!/usr/bin/env bash
# The sandbox tests and the HumanEval test again inside a simulated default container: the seccomp filter of
# scripts/simulate-container.py refuses unshare, setns, mounts, clone with namespace flags and clone3 as
# Docker's default profile does, and only Docker's default capabilities are left. The sandbox then has no
# namespaces and must hold with Landlock and seccomp (or refuse). Uses .venv (scripts/bootstrap.sh makes it).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
  scripts/bootstrap.sh
fi
export HF_HUB_OFFLINE=1 GRPO_RLVR_TEST_LANE=container
exec .venv/bin/python scripts/simulate-container.py .venv/bin/python -m pytest -q -p no:cacheprovider tests/sandbox "$@"
