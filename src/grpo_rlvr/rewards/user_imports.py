"""The code a user reward is made of: its own module and every local module it imports, at any depth.

A helper the reward imports is code that scores training: edited after the review (to pay 1.0 for everything
once ``trl`` is imported, say), it must fail the gate as an edit of the reward file does. So a user reward's
fingerprint covers this closure (:func:`local_imports`), not only its own file.

Local means a module file under the user's tree: the reward file's folder, the brief's folder, and the folder of
a reward module's top-level package, but never under the standard library, a ``site-packages`` or
``dist-packages`` folder, or grpo_rlvr itself (installed code is not the user's to edit between review and
training, and hashing it would make every fingerprint depend on the install). Found two ways, and the union
counts:

- statically, from each local file's own ``import`` and ``from … import`` statements wherever they stand (a
  helper imported inside the function, on its first call, counts before it ever runs), relative imports, and
  ``importlib.import_module("name")`` / ``__import__("name")`` with a literal name. A name resolves as Python
  would resolve it now, without importing anything: ``sys.modules`` first, then the path finder over
  ``sys.path``, then the reward's folder and the brief's folder (so a helper made importable only when the
  function runs is found too);
- dynamically: the modules that appeared in ``sys.modules`` while the reward's module ran, whose files are
  local (a name computed while it is imported). Remembered per reward file for the process, so building the
  same reward again gives the same closure.

A local module is bound by the bytes of the file Python imports it from: its source, or a ``.pyc`` (or an
extension module) that stands alone beside the reward, which Python imports like a source. And what runs is what
is bound: Python would otherwise take a module's code from the bytecode in its ``__pycache__`` rather than the
source, and never compares an unchecked hash-based ``.pyc`` with the source at all, so bytecode written there
after the review would score while the reviewed source kept its hash. The reward's own file and every module
outside the installed environment are compiled from their source (:class:`SourceOnlyLoader`,
:func:`import_from_source`); installed packages keep their bytecode (editing those is out of reach of any check
on the same machine, see docs/threat-model.md).

Not found, and so not bound: a module imported under a name computed only while the function runs, and data
files the code reads (see the "cannot stop" table of docs/threat-model.md).
"""

from __future__ import annotations

import ast
import importlib.machinery
import os
import sys
import sysconfig
from pathlib import Path

_FOUND_WHILE_RUNNING: dict[str, frozenset[str]] = {}   # reward module file -> local module names it imported
_SITE_PARTS = {"site-packages", "dist-packages"}


def _installed_roots() -> list[str]:
    paths = sysconfig.get_paths()
    roots = {os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    roots.add(os.path.realpath(Path(__file__).resolve().parents[1]))   # grpo_rlvr itself
    return sorted(roots)


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class _Tree:
    """Which files are the user's: under one of ``roots`` and not installed code."""

    def __init__(self, roots: list[Path]):
        self.roots = sorted({os.path.realpath(r) for r in roots if r is not None})
        self.installed = _installed_roots()

    def holds(self, file: str | None) -> bool:
        """``file`` (a module's origin: a source, a lone ``.pyc``, an extension) is the user's, not installed."""
        if not file or not os.path.isfile(file):
            return False
        real = os.path.realpath(file)
        if _SITE_PARTS & set(Path(real).parts) or any(_under(real, r) for r in self.installed):
            return False
        return any(_under(real, r) for r in self.roots)


class SourceOnlyLoader(importlib.machinery.SourceFileLoader):
    """Loads a module from its source file's bytes, compiled afresh: never from a ``__pycache__`` .pyc (which
    Python prefers to the source, and takes unchecked when it is an unchecked hash-based .pyc), and writes none."""

    def get_code(self, fullname):
        path = self.get_filename(fullname)
        return self.source_to_code(self.get_data(path), path)


class _SourceOnlyFinder:
    """A meta-path finder, just ahead of the path finder: a module it would load from a source file outside the
    installed environment (the user's helpers, wherever they are) loads through :class:`SourceOnlyLoader`."""

    installed: list[str] = []

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is None or type(spec.loader) is not importlib.machinery.SourceFileLoader or not spec.origin:
            return None       # not a source module: the path finder, next, finds the same and loads it
        if any(_under(os.path.realpath(spec.origin), r) for r in cls.installed):
            return None
        spec.loader = SourceOnlyLoader(name, spec.origin)
        spec.cached = None
        return spec

    @classmethod
    def invalidate_caches(cls):
        pass


def import_from_source() -> None:
    """From now on, in this process, modules from outside the installed environment are compiled from their source
    (:class:`_SourceOnlyFinder`, placed just before the path finder). Called before a user reward is imported."""
    if _SourceOnlyFinder in sys.meta_path:
        return
    _SourceOnlyFinder.installed = _installed_roots()
    at = next((i for i, f in enumerate(sys.meta_path) if f is importlib.machinery.PathFinder), len(sys.meta_path))
    sys.meta_path.insert(at, _SourceOnlyFinder)


def start_import(module_file: str | Path) -> set[str]:
    """The names in ``sys.modules`` before a reward's module runs (pass them to :func:`end_import`)."""
    return set(sys.modules) if str(module_file) not in _FOUND_WHILE_RUNNING else set()


def end_import(module_file: str | Path, before: set[str], roots: list[Path]) -> None:
    """Remember the local modules that appeared in ``sys.modules`` while the reward's module ran (first time only)."""
    key = str(module_file)
    if key in _FOUND_WHILE_RUNNING:
        return
    tree = _Tree(roots)
    _FOUND_WHILE_RUNNING[key] = frozenset(
        name for name in set(sys.modules) - before
        if tree.holds(getattr(sys.modules.get(name), "__file__", None)))


def _spec_file(name: str, search: list[str]) -> tuple[str | None, list[str] | None]:
    """(file, package search locations) of module ``name`` as the path finder finds it in ``search``."""
    try:
        spec = importlib.machinery.PathFinder.find_spec(name, search)
    except (ImportError, ValueError, OSError):
        return None, None
    if spec is None:
        return None, None
    locations = list(spec.submodule_search_locations) if spec.submodule_search_locations is not None else None
    return (spec.origin if spec.has_location else None), locations


class _Resolver:
    def __init__(self, extra_search: list[Path]):
        self.extra = [str(p) for p in extra_search if p is not None]
        self.memo: dict[str, tuple[str | None, list[str] | None]] = {}

    def resolve(self, name: str) -> tuple[str | None, list[str] | None]:
        """(file, package locations) of module ``name``, or (None, None) when it is builtin or not found."""
        if name in self.memo:
            return self.memo[name]
        mod = sys.modules.get(name)
        if mod is not None:
            path = getattr(mod, "__path__", None)
            found = getattr(mod, "__file__", None), (list(path) if path is not None else None)
        elif "." in name:
            _, parent = self.resolve(name.rpartition(".")[0])
            found = _spec_file(name, parent) if parent else (None, None)
        elif name in sys.builtin_module_names or importlib.machinery.FrozenImporter.find_spec(name) is not None:
            found = None, None
        else:
            found = _spec_file(name, [*sys.path, *self.extra])
        self.memo[name] = found
        return found


def _package_of(name: str, file: str) -> str:
    return name if Path(file).name == "__init__.py" else name.rpartition(".")[0]


def _names_imported(file: str, module: str) -> list[str]:
    """Every module name ``file`` (the module ``module``) may import, parents included (``a.b`` runs ``a``)."""
    try:
        tree = ast.parse(Path(file).read_bytes(), filename=file)
    except (OSError, SyntaxError, ValueError):
        return []
    package = _package_of(module, file)
    out: list[str] = []

    def absolute(name: str, level: int) -> str | None:
        if level == 0:
            return name
        parts = package.split(".") if package else []
        if level - 1 > len(parts) or not package:
            return None
        base = ".".join(parts[:len(parts) - (level - 1)])
        return f"{base}.{name}" if name else base

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = absolute(node.module or "", node.level)
            if base:
                out.append(base)
                out += [f"{base}.{a.name}" for a in node.names if a.name != "*"]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if called in ("import_module", "__import__"):
                name = node.args[0].value
                level = len(name) - len(name.lstrip("."))
                full = absolute(name.lstrip("."), level)
                if full:
                    out.append(full)
    expanded = []
    for name in out:
        parts = name.split(".")
        expanded += [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
    return expanded


def local_imports(module_file: str | Path, module_name: str, roots: list[Path]) -> dict[str, str]:
    """``module name -> file`` of every local module the reward module at ``module_file`` imports, directly or
    through other local modules (the module itself not included)."""
    tree = _Tree(roots)
    resolver = _Resolver(roots)
    own = os.path.realpath(module_file)
    found: dict[str, str] = {}
    todo = [(module_name, str(module_file))]
    for name in sorted(_FOUND_WHILE_RUNNING.get(str(module_file), ())):
        file = getattr(sys.modules.get(name), "__file__", None)
        if file and tree.holds(file) and os.path.realpath(file) != own:
            found[name] = file
            todo.append((name, file))
    seen = {own, *(os.path.realpath(f) for f in found.values())}
    while todo:
        module, file = todo.pop()
        for name in _names_imported(file, module):
            if name in found:
                continue
            target, _ = resolver.resolve(name)
            if not tree.holds(target) or os.path.realpath(target) in seen:
                continue
            seen.add(os.path.realpath(target))
            found[name] = target
            todo.append((name, target))
    return dict(sorted(found.items()))
