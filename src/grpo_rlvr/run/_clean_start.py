"""Started as ``python -I -S _clean_start.py CHECK`` by ``clean_interpreter.run_check``; standard library only.

``-I`` ignores ``PYTHON*`` variables (``PYTHONPATH``, ``PYTHONSTARTUP``, ``PYTHONHOME``), the user's
site-packages and the working directory; ``-S`` skips the ``site`` module, which would run every ``.pth`` line
that starts with ``import`` and import ``sitecustomize`` / ``usercustomize``. This file then sets up
site-packages the way ``site`` does (``site.main``: the venv, its site-packages, ``.pth`` path lines) but runs
none of that code: an ``import`` line of a ``.pth`` file is skipped, except setuptools' editable-install finder,
whose package folders are read from its ``MAPPING`` literal instead of running it. Then it runs the check named
on the command line (its arguments, and the caller's environment as data, as JSON on stdin) and writes its result
as JSON on stdout. It was started with the allowed environment of ``clean_interpreter.clean_environment``.
"""

from __future__ import annotations

import ast
import os
import re
import site
import sys

_FINDER = re.compile(r"^import (__editable___[\w.]+_finder)\s*;\s*\1\.install\(\)\s*$")
skipped: list[str] = []   # "<file>: <line>" of every .pth line that was not run


def _finder_roots(sitedir: str, module: str) -> list[str]:
    """The folders that hold the packages an editable finder maps (``{"pkg": "/src/pkg"}`` → ``/src``)."""
    try:
        with open(os.path.join(sitedir, module + ".py"), encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return []
    for node in tree.body:
        targets = [node.target] if isinstance(node, ast.AnnAssign) else getattr(node, "targets", [])
        if any(isinstance(t, ast.Name) and t.id == "MAPPING" for t in targets) and node.value is not None:
            try:
                mapping = ast.literal_eval(node.value)
            except ValueError:
                return []
            return [os.path.dirname(p) for name, p in mapping.items()
                    if isinstance(p, str) and os.path.basename(p) == name.split(".")[-1]]
    return []


def addpackage(sitedir, name, known_paths):
    """``site.addpackage`` without running code: path lines are added, ``import`` lines skipped."""
    fullname = os.path.join(sitedir, name)
    try:
        with open(fullname, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except (OSError, UnicodeDecodeError):
        return known_paths
    reset = known_paths is None
    known = set() if reset else known_paths
    for line in lines:
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith(("import ", "import\t")):
            finder = _FINDER.match(line.strip())
            dirs = _finder_roots(sitedir, finder.group(1)) if finder else []
            if not dirs:
                skipped.append(f"{fullname}: {line.strip()[:200]}")
            for d in dirs:
                if d not in known and os.path.isdir(d):
                    sys.path.append(d)
                    known.add(d)
            continue
        d = os.path.abspath(os.path.join(sitedir, line.rstrip()))
        if d not in known and os.path.exists(d):
            sys.path.append(d)
            known.add(d)
    return None if reset else known


def setup_site() -> None:
    site.addpackage = addpackage
    site.execsitecustomize = lambda: None
    site.execusercustomize = lambda: None
    site.main()


def main() -> int:
    import json

    setup_site()
    import grpo_rlvr.run.clean_interpreter as clean

    clean.mark_clean(skipped)
    message = json.loads(sys.stdin.read() or "{}")
    from grpo_rlvr.caller_env import use_caller_environment

    use_caller_environment(message.get("caller_env") or {})   # as data only; the process keeps its clean one
    real_stdout = sys.stdout
    sys.stdout = sys.stderr   # what the check prints goes to stderr; stdout carries only the result
    try:
        reply = clean.answer(sys.argv[1], message.get("request") or {})
    finally:
        sys.stdout = real_stdout
    real_stdout.write(json.dumps(reply, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
