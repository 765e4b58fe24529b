"""Imports go down: the runtime (what the rendered train.py imports) reaches nothing above it. Read from the
source, function-level imports included, so a lazy import cannot hide an upward call."""

from __future__ import annotations

import ast
from pathlib import Path

import grpo_rlvr

PKG = Path(grpo_rlvr.__file__).parent
# what the runtime may use: itself and the small modules below every room (errors, files, hashing, threads,
# the clean interpreter it asks for checks by name, the opt-in trace)
RUNTIME_MAY_IMPORT = ("grpo_rlvr.runtime", "grpo_rlvr.errors", "grpo_rlvr.files", "grpo_rlvr.identity",
                      "grpo_rlvr.cpu_threads", "grpo_rlvr.clean_interpreter", "grpo_rlvr.work_trace",
                      "grpo_rlvr.jsonl")


def grpo_imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
        elif isinstance(node, ast.ImportFrom) and node.level:  # relative: resolve against the file's package
            base = path.relative_to(PKG.parent).with_suffix("").parts[:-node.level]
            out.add(".".join([*base, *([node.module] if node.module else [])]))
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {m for m in out if m.split(".")[0] == "grpo_rlvr"}


def test_the_runtime_imports_nothing_above_it():
    upward = {f"{p.relative_to(PKG)}: {m}" for p in sorted((PKG / "runtime").glob("*.py")) for m in grpo_imports(p)
              if not m.startswith(RUNTIME_MAY_IMPORT)}
    assert not upward, sorted(upward)


def test_nothing_outside_the_cli_imports_the_cli():
    inward = {f"{p.relative_to(PKG)}: {m}" for p in sorted(PKG.rglob("*.py")) if "cli" not in p.relative_to(PKG).parts
              and p.name != "__main__.py" for m in grpo_imports(p) if m.startswith("grpo_rlvr.cli")}
    assert not inward, sorted(inward)


def test_only_the_lock_reads_the_brief_as_written():
    """Every phase takes the typed Brief; the YAML as written is recorded in the lock and read nowhere else."""
    readers = {str(p.relative_to(PKG)) for p in sorted(PKG.rglob("*.py"))
               for node in ast.walk(ast.parse(p.read_text()))
               if isinstance(node, ast.Attribute) and node.attr == "as_written"}
    assert readers == {"run_dir.py"}, sorted(readers)
