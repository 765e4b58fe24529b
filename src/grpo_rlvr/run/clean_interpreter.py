"""The checks that decide whether a review holds and training may start, run in an interpreter nothing outside the
installed environment can patch.

``grpo-rlvr gate``, ``grpo-rlvr train`` and the rendered ``train.py`` (through ``run.guard.check_run``) ask
:func:`run_check`, which starts ``python -I -S _clean_start.py`` (see that file): no ``PYTHONPATH``,
``PYTHONSTARTUP``, ``PYTHONHOME``, user site-packages or working directory on the path, no ``sitecustomize`` or
``usercustomize``, no code from ``.pth`` files. A ``sitecustomize.py`` that patches ``grpo_rlvr.gate.check.check_gate``
in the calling process therefore changes nothing the check sees.

The child starts from an allowed environment (:func:`clean_environment`), not from the caller's less a list of
names: the dynamic loader, glibc, OpenSSL, Python and every library read variables that load code or change what
is read (``LD_LIBRARY_PATH`` loads a library from any folder into the process that decides), and a list of the
dangerous ones would always miss one. What it keeps (:data:`KEPT_ENV`): the locale (plain locale names only),
``HOME``, ``USER`` and ``LOGNAME`` from the password database, a fixed system ``PATH``, and the few settings the
check needs to read the same data as its caller, resolved by the caller: the grpo-rlvr cache folder, the work
trace, ``--verbose``, and where Hugging Face's cache is and whether it is offline. The caller's other variables
reach the check only as data (:mod:`grpo_rlvr.caller_env`), for the one thing that reads a variable by a name the
brief chooses: a judge reward's API key.

The child also looks for startup hooks that grpo-rlvr did not install and that name it (a ``sitecustomize`` or
``usercustomize`` on the path or on ``PYTHONPATH``, a ``.pth`` line that runs code, or the module it imports),
and the check is refused while one is there: they run in every other process of the run.

Limits: a hook that hides its target's name passes the scan (it still cannot reach the clean check); code that
edits the installed grpo_rlvr package, or patches the calling process's way of starting the check, is not
stopped here (see "What the gate cannot stop" in docs/threat-model.md).
"""

from __future__ import annotations

import importlib.machinery
import json
import os
import re
import site
import subprocess
import sys
from pathlib import Path

from grpo_rlvr.errors import GrpoRlvrError, StartupHookError

_START = Path(__file__).with_name("_clean_start.py")
_NAMES_US = re.compile(r"grpo", re.IGNORECASE)
# The environment the check starts with; nothing else of the caller's reaches it as a variable. torchrun's
# rendezvous variables are not on it either: the check is one process, not a rank (with them, accelerate's state
# in the child could join rank 0's process group and wait for a world that never comes).
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"   # nothing in the check runs a program found by name
_LOCALE_NAMES = ("LANG", "LC_ALL", "LC_CTYPE", "LC_COLLATE", "LC_MESSAGES", "LC_NUMERIC", "LC_TIME", "LC_MONETARY")
_LOCALE_VALUE = re.compile(r"^[A-Za-z0-9_.@-]{1,64}$")   # a locale's name, never a path (glibc reads files by it)
_PASSED_SETTINGS = ("GRPO_RLVR_CACHE", "GRPO_RLVR_TRACE", "GRPO_RLVR_VERBOSE", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE",
                    "TRANSFORMERS_OFFLINE", "HF_DATASETS_CACHE")
KEPT_ENV = (*_LOCALE_NAMES, "HOME", "USER", "LOGNAME", "PATH", "HF_HOME", "HF_HUB_CACHE",
            *_PASSED_SETTINGS, "OMP_WAIT_POLICY", "HF_HUB_DISABLE_PROGRESS_BARS", "HF_DATASETS_DISABLE_PROGRESS_BARS")
_clean = False
_skipped: list[str] = []


def mark_clean(skipped: list[str]) -> None:
    """Called by ``_clean_start`` in the child, once its site-packages are set up without running hook code."""
    global _clean, _skipped
    _clean, _skipped = True, list(skipped)


# ---------------------------------------------------------------------------- the checks, by name


def _gate(directory: str, brief: str | None) -> dict:
    from grpo_rlvr.gate.check import check_gate

    result = check_gate(directory, brief=brief)
    return {"result": result.to_dict(), "text": result.format(), "passed": result.passed}


def _run(run: str, smoke: bool, resume: str | None = None, start: str | None = None) -> dict:
    """The run check (``run.check``) as data (``RunCheck.to_dict``); a start it signs names this process's
    parent, the process that asked for the check."""
    from grpo_rlvr.identity.hash_cache import distrust_disk_cache
    from grpo_rlvr.run.check import check_run_here

    distrust_disk_cache()   # the check that lets training start reads every byte; the hash cache is forgeable
    return check_run_here(Path(run), smoke=smoke, resume=resume, start=start, trainer=os.getppid()).to_dict()


def _environment() -> dict:
    """The environment this process was started with, as the kernel handed it to the dynamic loader
    (``/proc/self/environ``), and as Python sees it now: what :func:`clean_environment` let through."""
    try:
        raw = Path("/proc/self/environ").read_bytes()
        started = dict(e.decode(errors="replace").split("=", 1) for e in raw.split(b"\0") if b"=" in e)
    except OSError:
        started = None
    return {"started": started, "os_environ": dict(os.environ)}


CHECKS = {"gate": _gate, "run": _run, "environment": _environment}


# ---------------------------------------------------------------------------- the environment it starts from


def clean_environment(environ: dict | None = None) -> dict[str, str]:
    """The environment the clean check starts with (:data:`KEPT_ENV` and nothing else).

    The locale as set (a value that is not a plain locale name is dropped); ``HOME``, ``USER`` and ``LOGNAME``
    from the password database, whatever the caller's say; :data:`SYSTEM_PATH`; Hugging Face's home and hub cache
    as the caller resolves them (so both read the same snapshot, wherever ``HOME`` points; its files are checked
    against the hashes they are named by); ``GRPO_RLVR_CACHE`` (the hash cache ``gate`` trusts) only when the
    caller sets it, else under the password database's home, not a ``HOME`` the caller chose; the work trace,
    ``--verbose`` and the offline switches as set; idle OpenMP threads that sleep.
    """
    import pwd

    from grpo_rlvr.identity.hub_cache import hf_home, hub_dir

    environ = os.environ if environ is None else environ
    account = pwd.getpwuid(os.getuid())
    env = {k: environ[k] for k in _LOCALE_NAMES if _LOCALE_VALUE.match(environ.get(k, ""))}
    env.update({k: environ[k] for k in _PASSED_SETTINGS if environ.get(k)})
    env.update({"HOME": account.pw_dir, "USER": account.pw_name, "LOGNAME": account.pw_name, "PATH": SYSTEM_PATH,
                "HF_HOME": str(hf_home()), "HF_HUB_CACHE": str(hub_dir()),
                "OMP_WAIT_POLICY": "PASSIVE", "HF_HUB_DISABLE_PROGRESS_BARS": "1",
                "HF_DATASETS_DISABLE_PROGRESS_BARS": "1"})
    return env


def answer(check: str, request: dict) -> dict:
    """The child's side: run ``CHECKS[check](**request)``; errors become data the parent raises again."""
    hooks = startup_hooks()
    if hooks:
        return {"refused": hooks}
    try:
        return {"ok": CHECKS[check](**request)}
    except GrpoRlvrError as e:
        return {"error": {"type": type(e).__name__, "message": str(e), "exit_code": e.exit_code,
                          "problems": getattr(e, "problems", None), "source": getattr(e, "source", None)}}


def run_check(check: str, **request):
    """``CHECKS[check](**request)`` computed in a clean interpreter (in this process when it is one).

    Raises:
        StartupHookError: a startup hook names grpo_rlvr (listed, with how to remove it).
        GrpoRlvrError: the error the check raised (same type and message), or the child failed to answer.
    """
    if _clean:
        reply = answer(check, request)
    else:
        message = {"check": check, "request": request, "caller_env": dict(os.environ)}
        proc = subprocess.run([sys.executable, "-I", "-S", str(_START), check], input=json.dumps(message),
                              stdout=subprocess.PIPE, stderr=None, text=True, env=clean_environment())
        try:
            reply = json.loads(proc.stdout)
        except json.JSONDecodeError:
            raise GrpoRlvrError(f"the {check} check could not run in a clean interpreter ({sys.executable} -I -S, "
                                f"exit {proc.returncode}; its error is above); check that grpo-rlvr is installed in "
                                "this environment's site-packages, not only on PYTHONPATH or with pip --user") \
                from None
    if "refused" in reply:
        raise StartupHookError("startup hooks that grpo-rlvr did not install name it, so they may patch what it "
                               "checks; remove them (or reinstall the environment) and run again:\n"
                               + "\n".join(f"  - {h}" for h in reply["refused"]))
    if "error" in reply:
        raise _rebuilt(reply["error"])
    return reply["ok"]


def _rebuilt(err: dict) -> GrpoRlvrError:
    from grpo_rlvr import errors

    cls = getattr(errors, err.get("type", ""), None)
    cls = cls if isinstance(cls, type) and issubclass(cls, GrpoRlvrError) else GrpoRlvrError
    e = cls.__new__(cls)
    Exception.__init__(e, err.get("message", ""))
    e.exit_code = int(err.get("exit_code", 2))
    if err.get("problems") is not None:
        e.problems, e.source = err["problems"], err.get("source")
    return e


# ---------------------------------------------------------------------------- startup hooks


def _ours() -> set[Path]:
    """The files the installed grpo-rlvr distribution put in place (its RECORD)."""
    from importlib import metadata

    try:
        dist = metadata.distribution("grpo-rlvr")
    except metadata.PackageNotFoundError:
        return set()
    return {Path(dist.locate_file(f)).resolve() for f in dist.files or []}


def _source(spec) -> str | None:
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    try:
        return Path(spec.origin).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _interpreter_dirs() -> list[Path]:
    exes = [sys.executable, os.path.realpath(sys.executable), getattr(sys, "_base_executable", "")]
    return list(dict.fromkeys(Path(e).parent for e in exes if e))


def startup_hooks(site_dirs: list[str] | None = None, search: list[str] | None = None,
                  interpreter_dirs: list[Path] | None = None) -> list[str]:
    """Startup hooks grpo-rlvr did not install that name it or cannot be read, one line each, and any ``._pth``
    file beside the interpreter (whatever it names: it replaces ``sys.path`` even under ``python -I -S``, and
    may turn ``site`` back on).

    Args:
        site_dirs: folders whose ``.pth`` files an interpreter runs (default: this one's site-packages and the
            user's).
        search: where ``sitecustomize`` / ``usercustomize`` are looked up (default: ``PYTHONPATH``, then
            ``sys.path``, then the user's site-packages).
        interpreter_dirs: folders of the interpreter's executable (default: this one's, as started and resolved).
    """
    if site_dirs is None:
        site_dirs = [*site.getsitepackages(), site.getusersitepackages()]
    if search is None:
        # the caller's PYTHONPATH (this process has none): the run's other processes start with it
        from grpo_rlvr.caller_env import getenv

        search = [p for p in (getenv("PYTHONPATH") or "").split(os.pathsep) if p] + sys.path + [
            site.getusersitepackages()]
    ours = _ours()
    return (_pth_beside_interpreter(interpreter_dirs if interpreter_dirs is not None else _interpreter_dirs())
            + _customize_hooks(search, ours)
            + [found for d in dict.fromkeys(site_dirs) for found in _pth_hooks(Path(d), ours)])


def _pth_beside_interpreter(dirs: list[Path]) -> list[str]:
    return [f"{pth}: a ._pth file beside the interpreter, which sets its module path even under `python -I -S`; "
            "delete it" for d in dirs for pth in (sorted(d.glob("*._pth")) if d.is_dir() else [])]


def _customize_hooks(search: list[str], ours: set[Path]) -> list[str]:
    """``sitecustomize`` / ``usercustomize`` modules on ``search`` that name grpo_rlvr or cannot be read."""
    found = []
    for name in ("sitecustomize", "usercustomize"):
        spec = importlib.machinery.PathFinder.find_spec(name, search)
        if spec is None or spec.origin is None or Path(spec.origin).resolve() in ours:
            continue
        text = _source(spec)
        if text is None:
            found.append(f"{spec.origin}: a compiled {name} that cannot be read; remove it")
        elif _NAMES_US.search(text):
            found.append(f"{spec.origin}: a {name} that names grpo_rlvr and runs at every Python start; delete it "
                         "(and unset PYTHONPATH if it points there)")
    return found


def _pth_hooks(d: Path, ours: set[Path]) -> list[str]:
    """``.pth`` files in the site folder ``d`` with an ``import`` line whose code names grpo_rlvr."""
    found = []
    for pth in sorted(d.glob("*.pth")) if d.is_dir() else []:
        if pth.resolve() in ours:
            continue
        try:
            lines = pth.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            if not line.startswith(("import ", "import\t")):
                continue
            modules = re.findall(r"\bimport\s+([\w.]+)|__import__\(\s*['\"]([\w.]+)", line)
            texts = [line] + [_source(importlib.machinery.PathFinder.find_spec(m.split(".")[0], [str(d)])) or ""
                              for pair in modules for m in pair if m]
            if any(_NAMES_US.search(t) for t in texts):
                found.append(f"{pth}: a .pth line that runs code naming grpo_rlvr ({line.strip()[:120]}); "
                             "delete the file")
    return found
