#!/usr/bin/env bash
# Byte-compile a virtual environment's installed packages, on every core, so that no process compiles torch,
# transformers or TRL from source again. The installs use pip's --no-compile (pip compiles file by file, on one core),
# and where PYTHONDONTWRITEBYTECODE is set (many Docker images and CI machines set it) Python never writes what it
# compiled (a process started with -I ignores the setting): every command that imports TRL then compiles it again
# (benchmarks/bench_import_compiled.py measures it).
# compileall writes the .pyc files whatever that setting says. Usage: scripts/compile-venv.sh VENV
set -euo pipefail
venv=${1:?usage: scripts/compile-venv.sh VENV}
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
# A file that is no module (a package's test data written in old syntax) fails to compile and stays uncompiled, as it
# would anyway: compileall then exits 1, which is not an error here (nor are the warnings it prints on the way).
"$venv/bin/python" -m compileall -q -q -j 0 "$site" > /dev/null 2>&1 || true
