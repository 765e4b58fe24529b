"""Where a module names a private attribute of TRL's trainer, read from its syntax tree: ``obj._x`` (``self._x``,
``super()._x``), a method ``_x`` overriding one in a class with a base, ``getattr``/``hasattr``/``setattr``/
``delattr`` with the name as a string, and any import from a private module of TRL (``trl.x._y``) or of a private
name from TRL. ``names``: TRL's private names, as ``grpo_rlvr.trainer.trl_seams.trl_private_names()`` reads them
from the installed TRL's classes."""

from __future__ import annotations

import ast

BY_NAME = ("getattr", "hasattr", "setattr", "delattr")


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _import_use(node: ast.AST) -> str | None:
    if isinstance(node, ast.Import):
        bad = [a.name for a in node.names if a.name.split(".")[0] == "trl" and any(map(_private, a.name.split(".")))]
        return f"import {bad[0]}" if bad else None
    if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "trl":
        if any(map(_private, node.module.split("."))) or any(_private(a.name) for a in node.names):
            return f"from {node.module} import {', '.join(a.name for a in node.names)}"
    return None


def private_trl_uses(source: str, names: set[str]) -> list[tuple[int, str, str]]:
    """``(line, name, how)`` for each use; ``name`` is '' for an import."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in names:
            out.append((node.lineno, node.attr, f".{node.attr}"))
        elif isinstance(node, ast.ClassDef) and node.bases:
            out += [(f.lineno, f.name, f"def {f.name} in class {node.name}") for f in node.body
                    if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name in names]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in BY_NAME
              and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and node.args[1].value in names):
            out.append((node.lineno, node.args[1].value, f"{node.func.id}(..., {node.args[1].value!r})"))
        elif (how := _import_use(node)) is not None:
            out.append((node.lineno, "", how))
    return sorted(out)
