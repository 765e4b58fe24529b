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
checked_run = importlib.import_module(pkg + ".records.checked_run")

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


# ---------------------------------------------------------------------------- the environment the check starts from

# A zlib that is zlib (an auxiliary filter: every symbol is looked up in the system's libz first) and that, when
# loaded, writes the command line of the process it was loaded into. Put first on LD_LIBRARY_PATH, the dynamic
# loader loads it into every process that imports zlib and inherits the variable.
FAKE_ZLIB = r"""
#include <stdio.h>
__attribute__((constructor)) static void loaded(void) {
  char cmd[4096] = {0};
  FILE *in = fopen("/proc/self/cmdline", "r");
  size_t n = in ? fread(cmd, 1, sizeof cmd - 1, in) : 0;
  if (in) fclose(in);
  for (size_t i = 0; i < n; i++) if (!cmd[i]) cmd[i] = ' ';
  FILE *out = fopen(MARK, "a");
  if (out) { fprintf(out, "%s\n", cmd); fclose(out); }
}
"""


def _system_libz() -> str | None:
    import ctypes.util
    import shutil

    if shutil.which("gcc") is None or shutil.which("ldconfig") is None or not ctypes.util.find_library("z"):
        return None
    out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    return next((line.rsplit(" ", 1)[-1] for line in out.splitlines()
                 if line.strip().startswith("libz.so.1 ") and "x86-64" in line or "libz.so.1 (libc6)" in line), None)


@pytest.mark.skipif(_system_libz() is None, reason="needs gcc and the system's libz.so.1 to build the library")
def test_red_team_a_library_on_LD_LIBRARY_PATH_is_not_loaded_into_the_check(unreviewed, tmp_path):
    """The check that decides must not load code from a folder the caller names: LD_LIBRARY_PATH=DIR, with a
    working zlib in DIR, reaches the CLI's own process (the attack is real) but not the clean check."""
    libdir, mark = tmp_path / "lib", tmp_path / "loaded-into"
    libdir.mkdir()
    (tmp_path / "zlib.c").write_text(FAKE_ZLIB)
    subprocess.run(["gcc", "-shared", "-fPIC", f'-DMARK="{mark}"', "-o", str(libdir / "libz.so.1"),
                    str(tmp_path / "zlib.c"), "-Wl,-soname,libz.so.1", f"-Wl,--auxiliary={_system_libz()}"],
                   check=True)
    env = {**os.environ, "LD_LIBRARY_PATH": str(libdir)}
    probe = subprocess.run([sys.executable, "-c", "import zlib; print(zlib.crc32(b'abc'))"], env=env,
                           capture_output=True, text=True)
    assert probe.stdout.strip() == "891568578" and "import zlib" in mark.read_text()   # it loads, and works
    out = subprocess.run([sys.executable, "-m", "grpo_rlvr", "gate", str(unreviewed)], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 1 and "without a verdict" in out.stdout, out.stdout + out.stderr
    loaded = mark.read_text().splitlines()
    assert any("grpo_rlvr gate" in line for line in loaded)                       # in the CLI's process
    assert not any("_clean_start.py" in line for line in loaded), loaded          # never in the check's


# What reads the environment in the check's process, from each one's documentation: every variable named there
# is set by the test below, with a value that would act if it reached the process.
# ld.so(8), "Environment" (and glibc's list of variables dropped for set-user-ID programs, elf/dl-support/unsecvars.h)
LOADER = ("LD_ASSUME_KERNEL", "LD_AUDIT", "LD_BIND_NOT", "LD_BIND_NOW", "LD_DEBUG", "LD_DEBUG_OUTPUT",
          "LD_DYNAMIC_WEAK", "LD_HWCAP_MASK", "LD_LIBRARY_PATH", "LD_ORIGIN_PATH", "LD_POINTER_GUARD",
          "LD_PREFER_MAP_32BIT_EXEC", "LD_PRELOAD", "LD_PROFILE", "LD_PROFILE_OUTPUT", "LD_SHOW_AUXV",
          "LD_TRACE_LOADED_OBJECTS", "LD_TRACE_PRELINKING", "LD_USE_LOAD_BIAS", "LD_VERBOSE", "LD_WARN",
          "LD_LIBRARY_PATH_64", "GLIBC_TUNABLES")
# glibc: unsecvars.h and the variables its manual names (iconv's modules, locale files, the resolver, malloc, time)
GLIBC = ("GCONV_PATH", "GETCONF_DIR", "HOSTALIASES", "LOCALDOMAIN", "LOCPATH", "MALLOC_TRACE", "MALLOC_CHECK_",
         "MALLOC_PERTURB_", "MALLOC_ARENA_MAX", "NIS_PATH", "NLSPATH", "RESOLV_HOST_CONF", "RES_OPTIONS", "TMPDIR",
         "TZDIR", "TZ", "LANGUAGE", "POSIXLY_CORRECT", "LIBC_FATAL_STDERR_")
# OpenSSL's openssl-env(7): its configuration (which can load engines and providers), modules, certificates
OPENSSL = ("OPENSSL_CONF", "OPENSSL_CONF_INCLUDE", "OPENSSL_CONFIG", "OPENSSL_ENGINES", "OPENSSL_MODULES",
           "OPENSSL_ia32cap", "OPENSSL_armcap", "OPENSSL_TRACE", "OPENSSL_WIN32_UTF8", "SSL_CERT_DIR",
           "SSL_CERT_FILE", "CTLOG_FILE", "QLOGDIR", "SSLKEYLOGFILE", "RANDFILE", "OPENSSL_DEBUG_DECODER")
# The libraries the check imports or its children run: libgomp (OMP_*, GOMP_*), torch, Hugging Face, tokenizers,
# the CA bundle of requests/httpx, gettext, the terminal, and Python's own tools
LIBRARIES = ("OMP_NUM_THREADS", "OMP_PROC_BIND", "OMP_PLACES", "OMP_TOOL_LIBRARIES", "OMP_TOOL", "OMP_DISPLAY_ENV",
             "GOMP_CPU_AFFINITY", "GOMP_SPINCOUNT", "KMP_AFFINITY", "TORCH_HOME", "TORCH_LOGS",
             "TORCHINDUCTOR_CACHE_DIR", "TORCH_EXTENSIONS_DIR", "PYTORCH_JIT", "TORCH_SHOW_CPP_STACKTRACES",
             "HF_MODULES_CACHE", "HF_TOKEN", "HF_TOKEN_PATH", "HF_ENDPOINT", "HF_HUB_ENABLE_HF_TRANSFER",
             "TRANSFORMERS_CACHE", "HF_DATASETS_TRUST_REMOTE_CODE", "TOKENIZERS_PARALLELISM",
             "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_DIR", "http_proxy", "https_proxy", "HTTPS_PROXY",
             "ALL_PROXY", "NO_PROXY", "TERM", "TERMINFO", "COLUMNS", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
             "XDG_RUNTIME_DIR", "DISPLAY", "PYTEST_ADDOPTS", "COVERAGE_PROCESS_START", "PIP_CONFIG_FILE",
             "VIRTUAL_ENV", "CONDA_PREFIX", "ACCELERATE_MIXED_PRECISION", "ACCELERATE_USE_CPU", "RANK", "LOCAL_RANK",
             "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID", "CUDA_VISIBLE_DEVICES",
             "GRPO_RLVR_STARTED_BY", "GRPO_RLVR_DRY_RUN", "GRPO_RLVR_BIN", "GRPO_RLVR_PYTHON")


def _python_variables() -> list[str]:
    """The variables Python reads, as this interpreter documents them (``python --help-env``)."""
    import re

    text = subprocess.run([sys.executable, "--help-env"], capture_output=True, text=True).stdout
    names = sorted(set(re.findall(r"^(PYTHON\w+)", text, re.MULTILINE)))
    assert len(names) >= 20 and "PYTHONPATH" in names and "PYTHONSTARTUP" in names, names
    return names


def test_the_check_starts_from_the_allowed_environment(tmp_path, monkeypatch):
    """Every variable the dynamic loader, glibc, OpenSSL, Python and the libraries read is set, each to a value
    that would act (a folder of the test's, a file that does not exist); none reaches the check's process, as the
    kernel handed it to the loader (/proc/self/environ) or as Python sees it. What does: the short allow-list,
    HOME and USER from the password database, a fixed PATH, and a locale only when it is a locale's name."""
    import pwd

    from grpo_rlvr.run.clean_interpreter import KEPT_ENV, SYSTEM_PATH, run_check

    names = [*LOADER, *GLIBC, *OPENSSL, *LIBRARIES, *_python_variables()]
    for name in names:
        monkeypatch.setenv(name, str(tmp_path / name))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("USER", "agent")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    monkeypatch.setenv("LC_ALL", "../../tmp/locale")          # a path is not a locale's name: dropped
    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.setenv("SOME_SECRET_API_KEY", "s3cret")
    seen = run_check("environment")
    assert seen["started"] is not None, "this test needs /proc"
    for env in (seen["started"], seen["os_environ"]):
        assert set(env) <= set(KEPT_ENV), sorted(set(env) - set(KEPT_ENV))
        leaked = {k: v for k, v in env.items() if str(tmp_path) in v and k not in ("HF_HOME", "HF_HUB_CACHE")}
        assert not leaked, leaked
        account = pwd.getpwuid(os.getuid())
        assert env["HOME"] == account.pw_dir and env["USER"] == account.pw_name and env["PATH"] == SYSTEM_PATH
        assert env["LANG"] == "C.UTF-8" and "LC_ALL" not in env and "SOME_SECRET_API_KEY" not in env
    assert len(names) > 120 and not set(names) & set(seen["started"])


def test_the_caller_environment_reaches_the_check_only_as_data(monkeypatch):
    """A judge reward's API key is read by a name the brief chooses: inside the check it comes from the caller's
    variables handed over as data (grpo_rlvr.caller_env), while the process environment stays the allowed one."""
    from grpo_rlvr import caller_env

    monkeypatch.setenv("JUDGE_KEY", "k-123")
    monkeypatch.setenv("https_proxy", "http://proxy.example:3128")
    monkeypatch.setattr(caller_env, "_caller", None)
    assert caller_env.getenv("JUDGE_KEY") == "k-123"
    caller_env.use_caller_environment({"JUDGE_KEY": "from-caller", "HTTPS_PROXY": "http://up:1",
                                       "https_proxy": "http://low:2"})
    assert caller_env.getenv("JUDGE_KEY") == "from-caller" and caller_env.getenv("PATH") is None
    assert caller_env.proxies() == {"https": "http://low:2"}
