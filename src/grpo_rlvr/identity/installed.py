"""What training imports is what was installed: the libraries that sample and score, checked against the hashes
their installer recorded.

pip writes each distribution's ``RECORD`` (``<name>.dist-info/RECORD``: every file it installed with its
SHA-256). :func:`installed_problems` reads the files of :data:`LIBRARIES` again and compares: a ``sed -i`` on
TRL's sampling, a write into transformers or datasets, a deleted module, each is named with its distribution.
Every file of TRL, transformers, datasets, accelerate and peft is read; of torch and vLLM only the Python files
(their native libraries are gigabytes; reading them would add seconds to every start). The run check calls it,
and reads every byte each time: a cache keyed by the files' stat (``hash_cache``) lives in a folder any program
running as the user can write, which is why the run check distrusts it for the model too; uncached, the check
costs about 0.3 s for the 5,800 files (107 MB) of the tested stack (``python benchmarks/bench_identity.py``).

Not covered: a file rewritten together with its line in ``RECORD`` (the installer's own record is as writable as
the files: what holds then is an install the agent cannot write, and the plugin's hook, which keeps the agent's
commands and tools off ``site-packages``); a distribution installed anew from a modified source (its RECORD is
its own); a ``.pyc`` put in ``__pycache__`` with its source's timestamp and size (Python loads it instead of the
source, and pip records none with ``--no-compile``); the native libraries of torch and vLLM.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
from importlib import metadata

# The distributions that sample and score in training, and those of which only the Python files are read.
LIBRARIES = ("trl", "transformers", "datasets", "accelerate", "peft", "vllm", "torch")
PYTHON_FILES_ONLY = ("torch", "vllm")


def recorded_files(name: str) -> dict[str, str] | None:
    """``absolute path -> SHA-256 (hex)`` of the files ``RECORD`` lists with a hash for the distribution ``name``
    (only ``.py`` files for :data:`PYTHON_FILES_ONLY`); None when it is not installed."""
    try:
        dist = metadata.distribution(name)
        text = dist.read_text("RECORD")
    except metadata.PackageNotFoundError:
        return None
    if text is None:
        return {}
    base = str(dist.locate_file(""))
    only_python = name in PYTHON_FILES_ONLY
    out = {}
    for row in csv.reader(io.StringIO(text)):
        if len(row) < 2 or not row[1].startswith("sha256=") or (only_python and not row[0].endswith(".py")):
            continue
        out[os.path.normpath(os.path.join(base, row[0]))] = base64.urlsafe_b64decode(row[1][7:] + "==").hex()
    return out


def _sha256(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            return hashlib.file_digest(fh, "sha256").hexdigest()
    except OSError:
        return None


def installed_problems(names: tuple[str, ...] | None = None) -> list[str]:
    """Why the installed ``names`` (default :data:`LIBRARIES`) are not what their installer recorded (empty when
    every file is): one line per distribution, naming the files that changed or are gone (the first few) and the
    fix."""
    problems = []
    for name in LIBRARIES if names is None else names:
        recorded = recorded_files(name)
        if not recorded:
            continue
        now = {p: _sha256(p) for p in recorded}
        changed = sorted(p for p, d in now.items() if d is not None and d != recorded[p])
        gone = sorted(p for p, d in now.items() if d is None)
        if changed or gone:
            shown = ", ".join((changed + gone)[:3]) + (f" and {len(changed) + len(gone) - 3} more"
                                                       if len(changed) + len(gone) > 3 else "")
            what = " and ".join(w for w, n in (("changed", changed), ("missing", gone)) if n)
            problems.append(f"the installed {name} is not what was installed: {len(changed) + len(gone)} file(s) "
                            f"{what} since pip recorded them ({shown}); training would import other code than the "
                            f"release. Reinstall it (`pip install --force-reinstall --no-deps {name}=="
                            f"{metadata.version(name)}`) and keep the environment where the agent cannot write")
    return problems
