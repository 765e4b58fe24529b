"""Benchmark: the CPU a process spends importing TRL (and the math reward) from byte-compiled packages, against the
same import compiled from source, as every process does after a ``pip install --no-compile`` where
``PYTHONDONTWRITEBYTECODE`` is set (Python then never writes what it compiled).

Run: ``python benchmarks/bench_import_compiled.py [--rounds 3]`` (with the project's .venv Python)

Side by side, alternating, each in a fresh process with ``PYTHONDONTWRITEBYTECODE=1``:

- compiled: the environment as ``scripts/compile-venv.sh`` leaves it (``scripts/bootstrap.sh`` runs it);
- from source: ``PYTHONPYCACHEPREFIX`` points Python at a folder that holds the standard library's ``.pyc`` files
  and nothing else, so every installed package is compiled again, as in an environment never byte-compiled.

Printed: CPU seconds (user + system, from ``wait4``) of each import, the median of each, and their ratio. Every
test process that starts ``train.py``, ``preflight``, ``inspect`` or ``demo`` pays this import once.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile

STATEMENTS = {"from trl import GRPOTrainer": "trl", "import math_verify": "math_verify"}


def cpu_of(statement: str, env: dict) -> float:
    """CPU seconds (user + system) of a fresh interpreter that runs ``statement``."""
    proc = subprocess.Popen([sys.executable, "-c", statement], env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{statement!r} failed in {sys.executable}")
    return usage.ru_utime + usage.ru_stime


def stdlib_only_prefix(folder: str) -> dict:
    """An environment whose ``.pyc`` files come from ``folder``, which holds the standard library's alone."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": folder}
    subprocess.run([sys.executable, "-m", "compileall", "-q", "-q", "-j", "0", sysconfig.get_path("stdlib")],
                   env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return env


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3, help="imports of each kind per statement (alternating)")
    args = ap.parse_args()
    for module in set(STATEMENTS.values()):
        spec = importlib.util.find_spec(module)
        if spec is None or not os.path.exists(importlib.util.cache_from_source(spec.origin)):
            print(f"note: {module} has no .pyc beside it: run scripts/compile-venv.sh on this environment first, or "
                  "both columns compile from source")
    compiled = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    compiled.pop("PYTHONPYCACHEPREFIX", None)
    with tempfile.TemporaryDirectory() as prefix:
        from_source = stdlib_only_prefix(prefix)
        print(f"{'import':32} {'compiled (CPU-s)':>24} {'from source (CPU-s)':>24} {'ratio':>7}")
        for statement in STATEMENTS:
            cpu_of(statement, compiled)   # untimed: the files into the page cache
            ours, naive = [], []
            for _ in range(args.rounds):
                ours.append(cpu_of(statement, compiled))
                naive.append(cpu_of(statement, from_source))
            a, b = statistics.median(ours), statistics.median(naive)
            runs = lambda xs: " ".join(f"{x:.1f}" for x in xs)  # noqa: E731
            print(f"{statement:32} {runs(ours):>18} {a:5.1f} {runs(naive):>18} {b:5.1f} {b / a:6.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
