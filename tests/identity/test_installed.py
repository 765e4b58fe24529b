"""What training imports is what was installed: a library's files are checked against the RECORD its installer
wrote. The library is a real wheel (made here as the wheel format says), installed by pip itself into a folder
of the test's; the attacks are the red team's: an edit of its sampling code (``sed -i``), a file deleted."""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from grpo_rlvr.identity import installed

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


@pytest.fixture
def fakelib(tmp_path, monkeypatch):
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--no-compile",
                    "--disable-pip-version-check", "--target", str(site), str(_wheel(tmp_path))], check=True)
    monkeypatch.syspath_prepend(str(site))
    return site / "fakelib"


def test_an_untouched_install_passes_and_is_read_whole(fakelib):
    recorded = installed.recorded_files("fakelib")
    assert {"__init__.py", "sampling.py", "_kernels.so", "METADATA", "WHEEL"} <= {Path(p).name for p in recorded}
    assert installed.installed_problems(("fakelib",)) == []


def test_an_edit_of_the_sampling_code_is_named(fakelib):
    text = (fakelib / "sampling.py").read_text().replace("max(", "min(")   # what `sed -i s/max/min/` does
    (fakelib / "sampling.py").write_text(text)
    [problem] = installed.installed_problems(("fakelib",))
    assert f"1 file(s) changed since pip recorded them ({fakelib / 'sampling.py'})" in problem
    assert "pip install --force-reinstall --no-deps fakelib==1.0" in problem


def test_a_deleted_file_is_named_as_missing(fakelib):
    (fakelib / "__init__.py").unlink()
    [problem] = installed.installed_problems(("fakelib",))
    assert "missing" in problem and "__init__.py" in problem


def test_only_the_python_files_of_torch_and_vllm_are_read(fakelib, monkeypatch):
    monkeypatch.setattr(installed, "PYTHON_FILES_ONLY", ("fakelib",))
    assert {Path(p).name for p in installed.recorded_files("fakelib")} == {"__init__.py", "sampling.py"}
    (fakelib / "_kernels.so").write_text("patched")
    assert installed.installed_problems(("fakelib",)) == []


def test_a_library_that_is_not_installed_is_skipped():
    assert installed.recorded_files("no-such-distribution-here") is None
    assert installed.installed_problems(("no-such-distribution-here",)) == []


def test_the_stack_installed_here_is_what_pip_recorded():
    """The tested stack itself (whichever of the libraries this environment has) passes as installed."""
    assert installed.installed_problems() == []
