#!/usr/bin/env bash
# apt-install.sh PACKAGE...: install Debian packages as root, safely beside other lanes doing the same.
# CI's lanes start together, and two apt-gets at once fail on dpkg's lock ("Could not get lock"): every lane's apt
# goes through one file lock, and apt itself also waits for dpkg's lock (someone else's apt on the machine). On a
# fresh machine the package lists may be empty, so a failed install is retried after `apt-get update`. On failure,
# apt's own output is printed.
set -uo pipefail
[ "$#" -gt 0 ] || { echo "usage: $0 PACKAGE..." >&2; exit 2; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
exec 9>/tmp/grpo-rlvr-apt.lock
flock 9   # held until this script exits
apt=(apt-get -q -y -o DPkg::Lock::Timeout=600)
export DEBIAN_FRONTEND=noninteractive
if "${apt[@]}" install --no-install-recommends "$@" >"$log" 2>&1 ||
   { "${apt[@]}" update && "${apt[@]}" install --no-install-recommends "$@"; } >"$log" 2>&1; then
  exit 0
fi
tail -30 "$log" >&2
echo "Error: apt-get install $* failed (apt's output above)" >&2
exit 1
