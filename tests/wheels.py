"""A real installed library for tests of what the run check verifies: a wheel made here as the wheel format says,
installed by pip itself (``--target``) into a folder of the test's, which is put first on ``sys.path``."""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
import zipfile
from pathlib import Path

SAMPLING = "def sample(logits):\n    return max(range(len(logits)), key=logits.__getitem__)\n"


def _wheel(folder: Path) -> Path:
    """fakelib 1.0 as a wheel: a package, a native-looking file, and the dist-info pip reads."""
    files = {"fakelib/__init__.py": "", "fakelib/sampling.py": SAMPLING, "fakelib/_kernels.so": "\0ELF",
             "fakelib-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: fakelib\nVersion: 1.0\n",
             "fakelib-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(text.encode())}")
    record.append("fakelib-1.0.dist-info/RECORD,,")
    path = folder / "fakelib-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
        zf.writestr("fakelib-1.0.dist-info/RECORD", "\n".join(record) + "\n")
    return path


def install_fakelib(tmp_path: Path, monkeypatch) -> Path:
    """fakelib 1.0 installed by pip into ``tmp_path/site``, importable; returns its package folder."""
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--no-compile",
                    "--disable-pip-version-check", "--target", str(site), str(_wheel(tmp_path))], check=True)
    monkeypatch.syspath_prepend(str(site))
    return site / "fakelib"
