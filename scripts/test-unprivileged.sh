#!/usr/bin/env bash
# The tests that need no torch (the sandbox, the rewards with the reward corpus through `grpo-rlvr score`, the
# readers, identity, the hook: scripts/torch-free-tests.sh) again, as an unprivileged user (CI runs as root, users do
# not), with the distribution's own Python (/usr/bin/python3: Debian 12's 3.11.2 here, an early 3.11 release, where
# the main lane runs a newer 3.11), at nice 15.
# As root: creates the user (default rlvr), copies the tree those tests read to a folder it owns, builds it a venv
# from the system Python with only what those tests import (no torch), runs them.
# Needs python3-venv and libseccomp2 (installed with apt-get when missing). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/torch-free-tests.sh
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
rm -rf "$work"
mkdir -p "$work"
cp -r "${torch_free_files[@]}" "$work/"
chown -R "$user:" "$work"
venv="$home/venv-grpo-rlvr-tests"
stamp="$venv/.installed"
pkgs=$torch_free_pkgs
want=$( (cat constraints.txt; echo "$pkgs"; "$PY" -VV) | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  runuser -u "$user" -- "$PY" -m venv --clear "$venv"
  runuser -u "$user" -- "$venv/bin/python" -m pip install -q --disable-pip-version-check -c "$work/constraints.txt" \
    $pkgs
  echo "$want" | runuser -u "$user" -- tee "$stamp" >/dev/null
fi
cd "$work"
echo "unprivileged lane: $("$venv/bin/python" -VV | head -1) ($PY), as $user" >&2
# At nice 15, as a person runs a long suite on a shared machine: such a user may raise its niceness but never lower
# it, so a test that assumes it starts at 0 fails here (it did: a probe that set niceness 10 met a PermissionError).
exec nice -n "${GRPO_RLVR_TEST_NICE:-15}" runuser -u "$user" -- env -i PATH=/usr/bin:/bin HOME="$home" HF_HUB_OFFLINE=1 PYTHONPATH="$work/src" \
  "$venv/bin/python" -m pytest -q -p no:cacheprovider "${torch_free_tests[@]}" "$@"
