"""A startup hook cannot make the gate pass: ``gate``, ``train`` and the rendered ``train.py`` decide in a clean
interpreter (``python -I -S``), and refuse outright when a hook names grpo_rlvr.

The attack is real: the same ``sitecustomize.py`` on ``PYTHONPATH`` makes ``check_gate`` pass an unreviewed
inspection in an ordinary process (first test). Every other test runs the real CLI or train.py with it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from artifacts import make_artifact
from grpo_rlvr.run import _clean_start
from grpo_rlvr.run.clean_interpreter import startup_hooks
from paths import REPO

# Patches the gate and the run check to pass, and leaves a mark that it ran. HIDDEN spells no "grpo" anywhere,
# so only the clean interpreter stops it; NAMED is also caught by the startup-hook scan.
PATCH = """
import importlib, os, pathlib
pathlib.Path(os.environ["HOOK_MARK"]).write_text("patched")
pkg = {name}
gate = importlib.import_module(pkg + ".gate.check")
guard = importlib.import_module(pkg + ".run.guard")
run_lock = importlib.import_module(pkg + ".run.lock")
checked_run = importlib.import_module(pkg + ".runtime.checked_run")

def passing(directory, brief=None, demo=False):
    return gate.GateResult(pathlib.Path(directory), [gate.Rule(i, "patched", True) for i in range(1, 7)],
                           {{"rewards": {{}}}})

gate.check_gate = passing
guard.check_run = lambda run, **kw: checked_run.RunCheck(run_lock.read_lock(run), [])
guard.refuse_unless_gated = lambda *a, **k: None
"""
HIDDEN = '"".join(map(chr, (103, 114, 112, 111))) + "_rlvr"'
NAMED = '"grpo_rlvr"'


def hook_dir(tmp_path: Path, name_expr: str) -> Path:
    d = tmp_path / "hook"
    d.mkdir()
    (d / "sitecustomize.py").write_text(PATCH.format(name=name_expr))
    return d


@pytest.fixture
def unreviewed(workspace):
    return make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection", verdict=None)


def run(args, hook: Path, tmp_path: Path, **kw):
    env = {**os.environ, "PYTHONPATH": str(hook), "HOOK_MARK": str(tmp_path / "mark")}
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=300, **kw)


def test_the_hook_does_patch_an_ordinary_process(unreviewed, tmp_path):
    hook = hook_dir(tmp_path, HIDDEN)
    code = "import sys; from grpo_rlvr.gate.check import check_gate; print(check_gate(sys.argv[1]).passed)"
    out = run([sys.executable, "-c", code, str(unreviewed)], hook, tmp_path)
    assert out.stdout.strip() == "True", out.stderr      # what `grpo-rlvr gate` printed before this change


def test_gate_does_not_pass_an_unreviewed_inspection_under_the_hook(unreviewed, tmp_path):
    hook = hook_dir(tmp_path, HIDDEN)
    out = run([sys.executable, "-m", "grpo_rlvr", "gate", str(unreviewed)], hook, tmp_path)
    assert (tmp_path / "mark").read_text() == "patched"   # the hook ran in the CLI's process
    assert out.returncode == 1 and "Gate FAILED" in out.stdout and "64 sample(s) without a verdict" in out.stdout


def test_gate_refuses_when_a_hook_names_grpo_rlvr(unreviewed, tmp_path):
    hook = hook_dir(tmp_path, NAMED)
    out = run([sys.executable, "-m", "grpo_rlvr", "gate", str(unreviewed)], hook, tmp_path)
    assert out.returncode == 1 and "Gate PASSED" not in out.stdout
    assert f"{hook / 'sitecustomize.py'}: a sitecustomize that names grpo_rlvr" in out.stderr


@pytest.fixture
def unreviewed_run(workspace, unreviewed):
    from grpo_rlvr.run.render import render

    return render(workspace / "brief.yaml", out=workspace / "run", inspection=unreviewed).dir


def test_train_does_not_train_on_an_unreviewed_inspection_under_the_hook(unreviewed_run, tmp_path):
    hook = hook_dir(tmp_path, HIDDEN)
    out = run([sys.executable, "-m", "grpo_rlvr", "train", str(unreviewed_run)], hook, tmp_path)
    assert (tmp_path / "mark").exists()
    assert out.returncode == 1 and "training refused" in out.stderr and "without a verdict" in out.stderr
    assert not (unreviewed_run / "output" / "final").exists()


def test_train_py_reruns_itself_isolated_and_refuses(unreviewed_run, tmp_path):
    hook = hook_dir(tmp_path, HIDDEN)
    out = run([sys.executable, str(unreviewed_run / "train.py")], hook, tmp_path, cwd=unreviewed_run)
    assert (tmp_path / "mark").exists()            # ran before train.py started again as `python -I`
    assert out.returncode == 1 and "training refused (nothing was loaded)" in out.stderr, out.stderr
    assert "without a verdict" in out.stderr
    assert not (unreviewed_run / "output" / "train_summary.json").exists()


# ---------------------------------------------------------------------------- the scan and the clean start


def test_the_scan_names_pth_lines_and_modules_that_name_grpo_rlvr(tmp_path):
    site_dir = tmp_path / "site-packages"
    site_dir.mkdir()
    (site_dir / "a-direct.pth").write_text("import grpo_rlvr.gate.check; grpo_rlvr.gate.check.check_gate = None\n")
    (site_dir / "b-indirect.pth").write_text("import innocent_name\n")
    (site_dir / "innocent_name.py").write_text("import grpo_rlvr.gate.check\n")
    (site_dir / "c-benign.pth").write_text("import os; os.environ.setdefault('X', '1')\n/some/path\n")
    (site_dir / "usercustomize.py").write_text("print('hello')\n")
    found = startup_hooks(site_dirs=[str(site_dir)], search=[str(site_dir)])
    assert [f.split(":")[0] for f in found] == [str(site_dir / "a-direct.pth"), str(site_dir / "b-indirect.pth")]


def test_this_environment_has_no_hook_that_names_grpo_rlvr():
    assert startup_hooks() == []


def test_clean_start_adds_pth_paths_but_runs_no_pth_code(tmp_path, monkeypatch):
    site_dir, lib, src = tmp_path / "site", tmp_path / "lib", tmp_path / "src" / "mypkg"
    for d in (site_dir, lib, src):
        d.mkdir(parents=True)
    mark = tmp_path / "ran"
    (site_dir / "hook.pth").write_text(f"import os; open({str(mark)!r}, 'w')\n{lib}\n")
    (site_dir / "__editable___mypkg_0_1_finder.py").write_text(textwrap.dedent(f"""
        MAPPING: dict[str, str] = {{'mypkg': {str(src)!r}}}
        open({str(mark)!r}, 'w')
    """))
    (site_dir / "__editable__.mypkg-0.1.pth").write_text(
        "import __editable___mypkg_0_1_finder; __editable___mypkg_0_1_finder.install()\n")
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(_clean_start, "skipped", [])
    for name in ("hook.pth", "__editable__.mypkg-0.1.pth"):
        _clean_start.addpackage(str(site_dir), name, set())
    assert not mark.exists()
    assert str(lib) in sys.path and str(src.parent) in sys.path
    assert _clean_start.skipped == [f"{site_dir / 'hook.pth'}: import os; open({str(mark)!r}, 'w')"]


def test_red_team_a_pth_file_beside_the_interpreter_is_refused(unreviewed, tmp_path):
    """`python -I -S` still reads `<executable>._pth`: it sets sys.path and its `import site` line turns site (and
    so sitecustomize) back on. Planted beside the interpreter, it reaches the clean check too; the check refuses."""
    import site

    hook = hook_dir(tmp_path, HIDDEN)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python").symlink_to(os.path.realpath(sys.executable))
    stdlib = [p for p in sys.path if p.startswith(sys.base_prefix) and "site-packages" not in p]
    lines = [str(hook), *stdlib, *site.getsitepackages(), str(REPO / "src"),
             "import site"]
    (bindir / "python._pth").write_text("\n".join(lines) + "\n")
    probe = subprocess.run([str(bindir / "python"), "-I", "-S", "-c", "import sys; print(sys.path[0])"],
                           capture_output=True, text=True, env={**os.environ, "HOOK_MARK": str(tmp_path / "m0")})
    assert probe.stdout.strip() == str(hook)          # the attack is real: -I -S did not keep the folder out
    out = subprocess.run([str(bindir / "python"), "-m", "grpo_rlvr", "gate", str(unreviewed)], capture_output=True,
                         text=True, env={**os.environ, "HOOK_MARK": str(tmp_path / "mark")}, timeout=300)
    assert (tmp_path / "mark").read_text() == "patched"
    assert out.returncode == 1 and "Gate PASSED" not in out.stdout, out.stdout + out.stderr
    assert f"{bindir / 'python._pth'}: a ._pth file beside the interpreter" in out.stderr
