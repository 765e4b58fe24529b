#!/usr/bin/env bash
# The tests that need no torch again on the other Pythons the package claims, as an unprivileged user:
# `scripts/test-newer-python.sh 3.12` (Ubuntu 24.04's: no Debian suite ships 3.12), `3.13` (Debian 13's) or `3.14`
# (the newest that torch and vLLM's CPU build accept: Debian's testing suite, forky). The sandbox runs model-written
# code, and the readers (JSON, YAML, JSONL, answers) take hostile input: those are where a Python version changes
# behaviour (3.13's json parses nesting that 3.11 refuses, for one). The torch stack itself is tested on 3.11 by the
# other lanes: the registry's torch wheels for 3.12 and later are CUDA builds (5 GB), so this mode installs none.
#
# As root: builds a Debian (or Ubuntu) root file system with that Python with debootstrap once (kept in
# $GRPO_RLVR_PY_ROOTS/<suite>, default /var/cache/grpo-rlvr-ci/<suite>; under a minute here), creates the user there, copies
# src/ and tests/ to a folder it owns, makes a venv with only what those tests import, and runs them inside that
# root in a mount namespace of their own (pivot_root, not chroot, so the sandbox's user namespaces work as on a
# real machine). Needs debootstrap (installed with apt-get when missing); Ubuntu's archive keyring is taken from
# Debian's own signed package of it (ubuntu-keyring, Debian 13), so the Ubuntu root is checked as the Debian ones
# are. Arguments after the version go to pytest; --prepare builds the root and the venv and runs no test.
#
# --full (after the version, before --prepare or pytest's arguments) runs the whole non-e2e suite instead, in a venv
# with the whole tested stack: torch from the registry, a CUDA build (about 5 GB of downloads and disk; 65 s to
# install here). --trainer, in the same venv, runs the torch-free tests and the trainer tests most tied to TRL's
# internals, which train (scripts/trainer-tests.sh): CI runs that on the newest Python (3.14), for its time budget;
# --full runs by hand. It copies the whole working
# tree and adds git, gcc and the Python headers to the root.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/torch-free-tests.sh
if [ "$(id -u)" != 0 ]; then
  echo "Error: run as root (it builds a Debian root file system and a user in it)" >&2
  exit 2
fi
version=${1:-}
mirror=http://deb.debian.org/debian script=/usr/share/debootstrap/scripts/sid keyring=() components=main
case "$version" in
  3.12) suite=noble   # Ubuntu 24.04: Debian went from 3.11 (12) to 3.13 (13)
        mirror=http://archive.ubuntu.com/ubuntu script=/usr/share/debootstrap/scripts/gutsy components=main,universe ;;
  3.13) suite=trixie ;;   # Debian 13, stable
  3.14) suite=forky ;;    # Debian's testing suite: the first with Python 3.14 (debootstrap's sid script builds it)
  *) echo "Error: give the Python version to test: 3.12, 3.13 or 3.14 (e.g. scripts/test-newer-python.sh 3.14)" >&2
     exit 2 ;;
esac
shift
full=0 mode=torch-free
case "${1:-}" in
  --full) full=1 mode=full; shift ;;
  --trainer) full=1 mode=trainer; shift ;;
esac
py=python$version
root=${GRPO_RLVR_PY_ROOTS:-/var/cache/grpo-rlvr-ci}/$suite   # one root per suite
user=${GRPO_RLVR_TEST_USER:-rlvr}
if [ ! -f "$root/.grpo-rlvr-ready" ]; then
  command -v debootstrap >/dev/null || scripts/apt-install.sh debootstrap   # under the lanes' apt lock
  rm -rf "$root"
  mkdir -p "$(dirname "$root")"
  if [ "$suite" = noble ]; then   # Ubuntu's keyring, from Debian 13's package of it, fetched and checked by apt
    k=$(mktemp -d)
    mkdir -p "$k/lists/partial" "$k/archives/partial"
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" \
      > "$k/sources.list"
    trap 'rm -rf "$k"' EXIT
    mkdir -p "$k/cache"
    chmod 755 "$k" && chown _apt "$k/lists/partial" "$k/archives/partial"   # apt downloads as its _apt user
    apt_here=(apt-get -qq -o Dir::Etc::SourceList="$k/sources.list" -o Dir::Etc::SourceParts=/dev/null
              -o Dir::State::Lists="$k/lists" -o Dir::Cache="$k/cache" -o Dir::Cache::Archives="$k/archives"
              -o Debug::NoLocking=1)   # all of it in the temporary folder: the machine's own apt state is untouched
    "${apt_here[@]}" update && (cd "$k" && "${apt_here[@]}" download ubuntu-keyring 2>/dev/null) || {
      echo "Error: could not fetch Debian's ubuntu-keyring package (needed to check Ubuntu's archive)" >&2; exit 1; }
    dpkg-deb -x "$k"/ubuntu-keyring_*.deb "$k/x"
    keyring=(--keyring="$k/x/usr/share/keyrings/ubuntu-archive-keyring.gpg")
  fi
  echo "Building a $suite root with Python $version in $root (once)..." >&2
  debootstrap --variant=minbase --components=$components "${keyring[@]}" \
    --include=$py,$py-venv,libseccomp2,ca-certificates "$suite" "$root" "$mirror" "$script" \
    >"$root.debootstrap.log" 2>&1 || {
    tail -20 "$root.debootstrap.log" >&2; echo "Error: debootstrap failed" >&2; exit 1; }
  [ -z "${k:-}" ] || rm -rf "$k"   # (the trap covers an exit before this; the script ends in exec, past any trap)
  touch "$root/.grpo-rlvr-ready"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
pip_cert=()
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then   # this machine's trust store (it may hold a proxy's CA)
  cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/host-ca.crt"
  pip_cert=(PIP_CERT=/etc/ssl/host-ca.crt)
fi
chroot "$root" id -u "$user" >/dev/null 2>&1 || chroot "$root" useradd --create-home --shell /bin/bash "$user"
# `python3` is this version for the lane's user (the agent hook runs under `python3`; Debian's default may differ)
ln -sfn "/usr/bin/$py" "$root/usr/local/bin/python3"
home=/home/$user
work=$home/grpo-rlvr-tests
rm -rf "$root$work"
mkdir -p "$root$work"
if [ "$full" = 1 ]; then   # the whole working tree (tracked and new files; not .venv nor what .gitignore leaves out)
  git ls-files -z --cached --others --exclude-standard |   # a tracked file deleted here is skipped, not an error
    tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -xf - -C "$root$work"
  # git (some tests make repositories), a C compiler and the headers (a dev dependency may build from source).
  # Debian testing's Release file is valid for a week: a mirror that lags behind it is still signed, so for that
  # suite alone the date check is waived.
  valid=""
  [ "$suite" = forky ] && valid="-o Acquire::Check-Valid-Until=false"
  chroot "$root" sh -c "command -v git >/dev/null && command -v gcc >/dev/null && [ -e /usr/include/$py/Python.h ] ||
    { apt-get $valid update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq git gcc $py-dev >/dev/null; }" \
    </dev/null
else
  cp -r "${torch_free_files[@]}" "$root$work/"
fi
chroot "$root" chown -R "$user:" "$work"
as_user=(chroot "$root" runuser -u "$user" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$home" "${pip_cert[@]}")
# the docs tests list the project's files with git ls-files, as in a clone
[ "$full" = 0 ] || "${as_user[@]}" git -C "$work" init -q
venv=$home/venv-py${version/./}
pkgs=$torch_free_pkgs   # what the torch-free tests import (scripts/torch-free-tests.sh)
[ "$full" = 1 ] && { venv=$venv-full; pkgs="-e $work[dev]"; }   # the package itself and its dev extra, pinned
want=$( (cat constraints.txt pyproject.toml; echo "$pkgs $py") | sha256sum | cut -d' ' -f1)
if [ "$(cat "$root$venv/.installed" 2>/dev/null)" != "$want" ]; then
  "${as_user[@]}" "$py" -m venv --clear "$venv"
  # shellcheck disable=SC2086
  "${as_user[@]}" "$venv/bin/python" -m pip install -q --no-compile --disable-pip-version-check \
    -c "$work/constraints.txt" $pkgs
  echo "$want" > "$root$venv/.installed"
fi
[ "${1:-}" = --prepare ] && exit 0   # .ci/run builds the root and the venv ahead, while other lanes run
files=("${torch_free_tests[@]}")   # scripts/torch-free-tests.sh
[ "$mode" = full ] && files=(-m "not e2e" -n 2)   # as the main lane runs them (pytest's testpaths), without training
if [ "$mode" = trainer ]; then   # the torch-free tests and the trainer tests (they train), in one process as the
  . scripts/trainer-tests.sh     # other light lanes (beside CI's heavy lanes, two workers overload the machine)
  files=("${torch_free_tests[@]}" "${trainer_tests[@]}")
fi
# A mount namespace whose root is the Debian tree: pivot_root keeps user namespaces available to the sandbox
# (the kernel refuses them to a chrooted process).
exec unshare --mount --pid --fork bash -c '
  set -e
  root=$1; shift
  mount --make-rprivate /
  mount --bind "$root" "$root"
  mount -t proc proc "$root/proc"
  mount --rbind /dev "$root/dev"
  mount --rbind /sys "$root/sys"
  mkdir -p "$root/.oldroot"
  cd "$root"
  pivot_root . .oldroot
  umount -l /.oldroot
  "$@"   # not exec: bash stays PID 1 of the namespace and reaps what is orphaned there (tests kill launchers with -9)
  exit   # a command after it, so that bash does not exec the last one itself
  ' pivot "$root" \
  runuser -u "$user" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$home" HF_HUB_OFFLINE=1 PYTHONPATH="$work/src" \
  bash -c 'cd "$0" && exec "$1/bin/python" -m pytest -q -p no:cacheprovider "${@:2}"' "$work" "$venv" \
  "${files[@]}" "$@"
