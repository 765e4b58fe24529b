"""What training imports is what was installed: a library's files are checked against the RECORD its installer
wrote. The library is a real wheel (made here as the wheel format says), installed by pip itself into a folder
of the test's; the attacks are the red team's: an edit of its sampling code (``sed -i``), a file deleted."""

from __future__ import annotations

from pathlib import Path

import pytest

from grpo_rlvr.identity import installed
from wheels import install_fakelib


@pytest.fixture
def fakelib(tmp_path, monkeypatch):
    return install_fakelib(tmp_path, monkeypatch)


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
