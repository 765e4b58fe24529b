"""Imports go down: the run's records and the trainer (what the rendered train.py imports) reach nothing above
them, only the trainer names TRL's private internals, and no grpo_rlvr module imports itself back through others. Read from the source, function-level imports included, so a lazy
import cannot hide an upward call or a circle."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

import grpo_rlvr

PKG = Path(grpo_rlvr.__file__).parent
# The house, floor by floor. A room imports only its own floor and the floors below it; every room is on one.
GROUND = ("grpo_rlvr", "errors", "files", "jsonl", "input_files", "templating", "cpu_threads", "cpu_time",
          "user_cache", "work_trace", "protected_targets", "caller_env", "messages", "model_shape", "report_location",
          "tool_failures", "plain_output")
# what a review is bound to: content identity, on the ground floor alone
IDENTITY = ("identity",)
# the run's records (run key, provenance, checkpoint ledger, crash record, run outputs...): the ground floor and
# identity only, so every command reads them without loading a trainer
RECORDS = ("records",)
# the TRL adapters: the GRPOTrainer subclasses, the builder, callbacks, model loading; the records and below
TRAINER = ("trainer",)
# the domains the commands work on; memory is also a command's room (`grpo-rlvr memory`), but its estimator
# imports only the ground floor and the brief and rollout size models with it
DOMAINS = ("sandbox", "rewards", "tools", "dataset", "brief", "rollout", "audit", "memory")
COMMANDS = ("validate", "preflight", "score", "inspection", "review", "gate", "run", "watch", "diagnosis", "report",
            "merge", "demo", "examples")
SHELL = ("cli", "api", "__main__")   # the command line and the Python front door: nothing below imports them
FLOORS = (GROUND, IDENTITY, RECORDS, TRAINER, DOMAINS, COMMANDS, SHELL)
# each command of the command line and the room it is found in
COMMAND_ROOMS = {"demo": "demo", "validate": "validate", "preflight": "preflight", "score": "score",
                 "inspect": "inspection", "review": "review", "gate": "gate", "render": "run", "train": "run",
                 "diagnose": "diagnosis", "watch": "watch", "report": "report", "merge": "merge",
                 "memory": "memory"}
MODULES = {".".join(p.relative_to(PKG.parent).with_suffix("").parts[:-1] if p.name == "__init__.py" else
                    p.relative_to(PKG.parent).with_suffix("").parts): p for p in sorted(PKG.rglob("*.py"))}


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


def module_imports(path: Path, top_level_only: bool = False, modules: dict | None = None, pkg: Path = PKG) \
        -> set[str]:
    """The grpo_rlvr modules ``path`` imports: ``from pkg import sub`` names the module ``pkg.sub`` when there is
    one (its package's ``__init__`` runs first in any case), else ``pkg``. ``top_level_only``: the imports that
    run when the module is imported (not those inside a function or class, nor under ``if TYPE_CHECKING``)."""
    modules = MODULES if modules is None else modules
    tree = ast.parse(path.read_text())
    if top_level_only:
        nodes, todo = [], list(tree.body)
        while todo:
            node = todo.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                todo.extend(node.orelse)
                continue
            nodes.append(node)
            todo.extend(child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt))
    else:
        nodes = list(ast.walk(tree))
    out = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = path.relative_to(pkg.parent).with_suffix("").parts[:-node.level]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            out.update(f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {m for m in out if m in modules}


def import_cycles(top_level_only: bool = False, modules: dict | None = None, pkg: Path = PKG) -> list[list[str]]:
    """Every set of modules (default: grpo_rlvr's) that import each other round a circle (strongly connected;
    each sorted)."""
    modules = MODULES if modules is None else modules
    return circles({m: module_imports(p, top_level_only, modules, pkg) - {m} for m, p in modules.items()})


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected sets of ``graph`` (node → the nodes it points at) larger than one node, each
    sorted: Tarjan's algorithm."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = stack[stack.index(v):]
            del stack[stack.index(v):]
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(cycles)


# Circles closed only by an import inside a function, each kept on purpose: none is left (the last two, the run's
# records and the sandbox's planners, were taken apart). A new circle fails the test below.
KNOWN_FUNCTION_LEVEL_CYCLES: dict[tuple[str, ...], str] = {}


def test_no_import_cycles_when_modules_load():
    """What runs at import time forms no circle at all: any module can be imported first, alone."""
    assert import_cycles(top_level_only=True) == []


def test_no_import_cycles_but_the_known_function_level_ones():
    """Function-level imports included, the only circles are the listed ones; none passes through the run house
    (render → lock → plan → check → launch) or the runtime's guard (the check once went clean_interpreter →
    run_check → run.guard → clean_interpreter)."""
    cycles = import_cycles()
    assert {tuple(c) for c in cycles} == set(KNOWN_FUNCTION_LEVEL_CYCLES), cycles
    assert not [c for c in cycles for m in c if m.startswith("grpo_rlvr.run.")
                or m in ("grpo_rlvr.run.guard", "grpo_rlvr.records.checked_run")]


def test_the_cycle_finder_sees_a_circle_a_lazy_import_closes(tmp_path):
    """So the two tests above can fail: ``a`` imports ``b`` when loaded, ``b`` imports ``a`` inside a function."""
    pkg = tmp_path / "grpo_rlvr"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "a.py").write_text("from grpo_rlvr.sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from .. import a\n")
    (pkg / "c.py").write_text("import grpo_rlvr.a\n")
    modules = {"grpo_rlvr.a": pkg / "a.py", "grpo_rlvr.sub.b": pkg / "sub" / "b.py", "grpo_rlvr.c": pkg / "c.py"}
    assert import_cycles(modules=modules, pkg=pkg) == [["grpo_rlvr.a", "grpo_rlvr.sub.b"]]
    assert import_cycles(top_level_only=True, modules=modules, pkg=pkg) == []
    (pkg / "sub" / "b.py").write_text("from grpo_rlvr import a\n")     # now at load time: a real circle
    assert import_cycles(top_level_only=True, modules=modules, pkg=pkg) == [["grpo_rlvr.a", "grpo_rlvr.sub.b"]]


def room_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def test_every_room_is_on_one_floor_and_imports_no_floor_above_its_own():
    rooms = {room_of(m) for m in MODULES}
    placed = [r for floor in FLOORS for r in floor]
    assert sorted(placed) == sorted(set(placed)), "a room is on two floors"
    assert rooms <= set(placed), f"rooms on no floor (add each to one): {sorted(rooms - set(placed))}"
    floor_of = {r: i for i, floor in enumerate(FLOORS) for r in floor}
    upward = sorted(f"{m} ({FLOORS[floor_of[room_of(m)]][0]} floor) imports {t}"
                    for m, p in MODULES.items() for t in module_imports(p)
                    if floor_of[room_of(t)] > floor_of[room_of(m)])
    assert not upward, upward


def room_graph(modules: dict | None = None, pkg: Path = PKG) -> dict[str, set[str]]:
    """Room → the other rooms its modules import (function-level imports included)."""
    modules = MODULES if modules is None else modules
    graph: dict[str, set[str]] = {}
    for m, p in modules.items():
        graph.setdefault(room_of(m), set()).update(room_of(t) for t in module_imports(p, modules=modules, pkg=pkg))
    return {room: targets - {room} for room, targets in graph.items()}


def test_no_room_imports_a_room_that_imports_it_back():
    """Within a floor too, the arrows go one way: no circle of rooms, however long (the rewards once read a
    completion's text through ``rollout.trajectory`` while the rollout imports the rewards, and the brief's model
    probe counted parameters through ``memory.shapes`` while the memory model imports the brief: both pieces are on
    the ground floor now, ``messages`` and ``model_shape``)."""
    assert circles(room_graph()) == []


def test_the_room_circle_finder_sees_an_arrow_back_up(tmp_path):
    """So the test above can fail: ``low.a`` imports ``high.b`` inside a function while ``high`` imports ``low``."""
    pkg = tmp_path / "grpo_rlvr"
    for room in ("low", "high"):
        (pkg / room).mkdir(parents=True)
    (pkg / "high" / "b.py").write_text("from grpo_rlvr.low import a\n")
    (pkg / "low" / "a.py").write_text("X = 1\n")
    modules = {"grpo_rlvr.low.a": pkg / "low" / "a.py", "grpo_rlvr.high.b": pkg / "high" / "b.py"}
    assert circles(room_graph(modules, pkg)) == []
    (pkg / "low" / "a.py").write_text("def f():\n    from grpo_rlvr.high.b import Y\n")
    assert circles(room_graph(modules, pkg)) == [["high", "low"]]


def test_every_command_has_a_room_of_its_name():
    from grpo_rlvr.cli.main import build_parser

    commands = set(build_parser()._subparsers._group_actions[0].choices)
    assert commands == set(COMMAND_ROOMS), commands ^ set(COMMAND_ROOMS)
    for command, room in COMMAND_ROOMS.items():
        assert (PKG / room / "__init__.py").is_file(), f"`grpo-rlvr {command}` has no room {room}/"
        assert room in COMMANDS or room in DOMAINS, room


def rooms_imported(room: str) -> dict[str, set[str]]:
    """``room``'s modules → the other rooms each imports (function-level imports included; a ground-floor module
    is its own room)."""
    return {str(p.relative_to(PKG)): {room_of(t) for t in module_imports(p)} - {room}
            for m, p in MODULES.items() if room_of(m) == room}


def test_the_records_import_only_the_ground_floor_and_identity():
    """The run's records are read by every command (watch, diagnose, report, the run check): a record module
    that imported the trainer would load TRL into each of them."""
    allowed = set(GROUND) | set(IDENTITY)
    upward = {f"{module}: {sorted(rooms - allowed)}" for module, rooms in rooms_imported("records").items()
              if rooms - allowed}
    assert not upward, sorted(upward)


def test_the_trainer_imports_only_the_records_identity_and_the_ground_floor():
    allowed = set(GROUND) | set(IDENTITY) | set(RECORDS)
    upward = {f"{module}: {sorted(rooms - allowed)}" for module, rooms in rooms_imported("trainer").items()
              if rooms - allowed}
    assert not upward, sorted(upward)


def test_nothing_outside_the_cli_imports_the_cli_or_the_front_door():
    inward = {f"{p.relative_to(PKG)}: {m}" for p in sorted(PKG.rglob("*.py")) if "cli" not in p.relative_to(PKG).parts
              and p.name not in ("__main__.py", "api.py") for m in grpo_imports(p)
              if m.startswith(("grpo_rlvr.cli", "grpo_rlvr.api"))}
    assert not inward, sorted(inward)


def test_only_the_lock_reads_the_brief_as_written():
    """Every phase takes the typed Brief; the YAML as written is recorded in the lock and read nowhere else."""
    readers = {str(p.relative_to(PKG)) for p in sorted(PKG.rglob("*.py"))
               for node in ast.walk(ast.parse(p.read_text()))
               if isinstance(node, ast.Attribute) and node.attr == "as_written"}
    assert readers == {"run/render.py"}, sorted(readers)


# Test files that check a property across several modules rather than one module, each with what it checks.
ACROSS_MODULES = {
    "test_adapter_model.py": "an SFT adapter through validate, preflight, inspect, merge and training",
    "test_bench_dynamic_sampling.py": "the arithmetic of benchmarks/bench_dynamic_sampling.py",
    "test_examples.py": "every shipped example brief validates and renders",
    "test_fuzz_inputs.py": "every reader behind the CLI, fuzzed",
    "test_layers.py": "the import layers and this layout",
    "test_overwrite_protection.py": "nothing overwrites a person's work, in any command",
    "test_red_team.py": "ways past the gate, across gate, render, launch and the run's records",
    "test_red_team_binding.py": "ways to change what a review binds (reward code, remote code, precision)",
    "test_regex_portability.py": "no regular expression uses a construct an early Python 3.11 mis-matches",
    "rewards/test_corpus.py": "every offline built-in reward's verdicts on a fixed corpus, through `grpo-rlvr score`",
    "rewards/test_builtins.py": "the built-in rewards' shared contract (TRL's call, reasons, composition)",
    "rewards/test_attacks.py": "every built-in reward attacked through the example briefs",
    "rewards/test_structured.py": "json_schema and tool_call together (one JSON reader)",
    "identity/test_identity.py": "content identity: compute, hash_cache and hub_cache together",
    "diagnosis/test_runs.py": "real runs engineered to show each failure mode",
    "diagnosis/test_plain_trl.py": "a plain TRL script's run, diagnosed",
    "cli/test_json_output.py": "every command's --json contract",
    "cli/test_exit_codes.py": "every command's exit codes",
    "cli/test_messages.py": "messages that point at the right folder or reward, across commands",
    "diagnosis/test_guidance.py": "what diagnose, watch, gate and the demo say to do next, across commands",
    "tools/test_visible.py": "the tools as validate, preflight, diagnose and the loader show them",
}
TESTS = Path(__file__).resolve().parent
OWN_LANES = {"plugin", "sandbox", "vllm_lane"}  # the plugin's files; the sandbox and vLLM lanes run on their own


def test_the_tests_mirror_the_package():
    """tests/<room>/test_<module>[_aspect].py for a module of src/grpo_rlvr/<room>/ (tests/test_<module>… for the
    modules at the top), so a module's tests are where its name says; a file that checks across modules says so
    in ACROSS_MODULES."""
    rooms = {p.name for p in PKG.iterdir() if (p / "__init__.py").is_file()}
    folders = {p.name for p in TESTS.iterdir() if (p / "__init__.py").is_file()}
    assert folders - OWN_LANES <= rooms, sorted(folders - OWN_LANES - rooms)
    astray = []
    for f in sorted(TESTS.glob("test_*.py")) + sorted(TESTS.glob("*/test_*.py")):
        rel = str(f.relative_to(TESTS))
        if f.parent.name in OWN_LANES or rel in ACROSS_MODULES:
            continue
        room = PKG / f.parent.relative_to(TESTS)
        modules = {p.stem.lstrip("_") for p in room.glob("*.py")} | {p.name for p in room.iterdir() if p.is_dir()}
        name = f.stem.removeprefix("test_")
        if not any(name == m or name.startswith(m + "_") for m in modules):
            astray.append(rel)
    assert not astray, f"test files that name no module of their room: {astray}"
    assert all((TESTS / rel).is_file() for rel in ACROSS_MODULES), "ACROSS_MODULES names a file that is gone"


GUARDED = '''
import pytest


def _warm_one_step():
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from grpo_rlvr.demo.warmup import sft_warmup

    model_dir = {model!r}
    tok, model = AutoTokenizer.from_pretrained(model_dir), AutoModelForCausalLM.from_pretrained(model_dir)
    rows = [{{"prompt": [{{"role": "user", "content": "1+1="}}], "answer": "2"}}]
    sft_warmup(model, tok, rows, ["<answer>2</answer>"], steps=1, lr=1e-3, batch_size=1, seed=0)


def test_unmarked():
    _warm_one_step()


@pytest.mark.e2e
def test_marked():
    _warm_one_step()


def test_no_training():
    assert True
'''


@pytest.mark.e2e
def test_a_test_that_trains_unmarked_fails(tmp_path, tiny_model_dir):
    """The e2e guard of tests/conftest.py, run on a test file of its own: one SFT step in a test not marked e2e
    fails it; marked, the same step passes; a test that trains nothing passes."""
    (tmp_path / "test_guarded.py").write_text(GUARDED.format(model=str(tiny_model_dir)))
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "conftest",
                          "-o", "addopts=", str(tmp_path / "test_guarded.py")],
                         capture_output=True, text=True, cwd=tmp_path, timeout=600,
                         env={**os.environ, "PYTHONPATH": str(TESTS)})
    assert "1 failed, 2 passed" in out.stdout, out.stdout[-3000:]
    assert "test_unmarked started 1 training(s) (sft) but is not marked e2e" in out.stdout, out.stdout[-3000:]
    # a test asking for a warmed model is refused at collection, before any fixture is built
    (tmp_path / "test_asks.py").write_text("def test_reads_a_warm_model(warm_model_dir):\n    pass\n")
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "conftest",
                          "-o", "addopts=", "--collect-only", str(tmp_path / "test_asks.py")],
                         capture_output=True, text=True, cwd=tmp_path, timeout=600,
                         env={**os.environ, "PYTHONPATH": str(TESTS)})
    assert out.returncode == 4 and "test_reads_a_warm_model" in out.stderr and "not marked e2e" in out.stderr, \
        out.stdout[-2000:] + out.stderr[-2000:]


# ---------------------------------------------------------------------------- TRL's internals, in one room

def trl_names() -> set[str]:
    """TRL's trainer's private names, read from the installed trl.GRPOTrainer and transformers.Trainer."""
    from grpo_rlvr.trainer.trl_seams import trl_private_names

    names = trl_private_names()
    assert {"_generate_and_score_completions", "_sync_tool_dicts", "_logs", "_save_checkpoint"} <= names, names
    return names


def private_trl_uses_outside_the_trainer(pkg: Path = PKG, names: set[str] | None = None) -> list[str]:
    from trl_private import private_trl_uses

    names = trl_names() if names is None else names
    return [f"{p.relative_to(pkg)}:{line}: {how}" for p in sorted(pkg.rglob("*.py"))
            if p.relative_to(pkg).parts[0] != "trainer" for line, _, how in private_trl_uses(p.read_text(), names)]


def test_only_the_trainer_names_trl_private_internals():
    """A private attribute of TRL's trainer (or a private module of TRL) is named in ``trainer/`` only, where
    ``trl_seams`` lists each and the build refuses a TRL without it; anywhere else a TRL release could break it
    unseen."""
    assert private_trl_uses_outside_the_trainer() == []


PLANTS = {
    "an attribute": "def f(trainer):\n    return trainer._generate_and_score_completions(None)\n",
    "an attribute on self": "class A:\n    def f(self):\n        return self._sync_tool_dicts\n",
    "an override": "from trl import GRPOTrainer\n\n\nclass T(GRPOTrainer):\n    def _calculate_rewards(self):\n"
                   "        return None\n",
    "a name in getattr": "def f(t):\n    return getattr(t, '_logs', None)\n",
    "a private module": "def f():\n    from trl.trainer._private_helpers import x\n    return x\n",
    "a private name": "from trl.trainer.utils import _private_helper\n",
}


@pytest.mark.parametrize("kind", sorted(PLANTS))
def test_a_private_trl_use_planted_in_another_room_fails_the_rule(tmp_path, kind):
    """So the rule above can fail: a copy of two rooms (the trainer, which names TRL's internals, and the records)
    with a use planted in a records module is refused; the untouched copy passes."""
    import shutil

    pkg = tmp_path / "grpo_rlvr"
    for room in ("trainer", "records"):
        shutil.copytree(PKG / room, pkg / room, ignore=shutil.ignore_patterns("__pycache__"))
    names = trl_names()
    assert private_trl_uses_outside_the_trainer(pkg, names) == []
    target = pkg / "records" / "watch_log.py"
    target.write_text(target.read_text() + "\n\n" + PLANTS[kind])
    found = private_trl_uses_outside_the_trainer(pkg, names)
    assert len(found) == 1 and found[0].startswith("records/watch_log.py:"), found
