"""Property-based fuzzing of every reader behind the CLI: random trees, random bytes and mutations of the
shipped briefs and of a real inspection artifact give a result or a ``GrpoRlvrError`` (the CLI's `Error:`,
exit 2) — never another exception, and never a hang (each case is bounded by ``hang_guard.no_hang``). Case
counts are in the ``fuzz_settings`` of each test: derandomized, so every machine runs the same cases; the random
sweep outside CI is ``benchmarks/fuzz_sweep.py``."""

from __future__ import annotations

import copy
import json
import shutil

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from briefs import example_brief_text
from fuzz_profile import fuzz_settings
from grpo_rlvr.brief import load_brief
from grpo_rlvr.errors import GrpoRlvrError
from hang_guard import Hang, no_hang
from paths import REPO

FUZZ = fuzz_settings(150, fixture_per_case=True)   # derandomized in CI; tests/fuzz_profile.py

leaves = (st.none() | st.booleans() | st.integers(-10**40, 10**40) | st.floats()
          | st.text(max_size=12) | st.sampled_from(["5e-7", "yes", "no", "~", "-1", "1e400", "", "../x", "\x00"]))
trees = st.recursive(leaves, lambda k: st.lists(k, max_size=4) | st.dictionaries(st.text(max_size=10), k, max_size=4),
                     max_leaves=25)


def _paths(tree, prefix=()):
    """Every path to a node of a JSON-like tree."""
    yield prefix
    if isinstance(tree, dict):
        for k, v in tree.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(tree, list):
        for i, v in enumerate(tree):
            yield from _paths(v, (*prefix, i))


def _mutate(tree, choice: int, value, how: str):
    tree = copy.deepcopy(tree)
    paths = list(_paths(tree))[1:]
    if not paths:
        return value
    *parent_path, last = paths[choice % len(paths)]
    parent = tree
    for p in parent_path:
        parent = parent[p]
    if how == "delete":
        del parent[last]
    elif how == "add" and isinstance(parent, dict):
        parent[f"{last}_x"] = value
    else:
        parent[last] = value
    return tree


def _briefs() -> list[tuple[str, dict]]:
    shipped = [("demo", yaml.safe_load(example_brief_text()))]
    shipped += [(p.name, yaml.safe_load(p.read_text())) for p in sorted((REPO / "examples").glob("*.yaml"))]
    return shipped


BRIEFS = _briefs()


@FUZZ
@given(st.integers(0, len(BRIEFS) - 1), st.integers(0, 10**6), trees, st.sampled_from(["set", "delete", "add"]))
def test_mutated_shipped_briefs_load_or_say_why(workspace, which, choice, value, how):
    name, tree = BRIEFS[which]
    folder = workspace if name == "demo" else REPO / "examples"
    p = folder / "fuzz-brief.yaml"
    try:
        p.write_text(yaml.safe_dump(_mutate(tree, choice, value, how), allow_unicode=True))
        try:
            with no_hang():
                load_brief(p)
        except GrpoRlvrError as e:
            assert str(e)  # a message for the person
    finally:
        p.unlink(missing_ok=True)


@FUZZ
@given(trees)
def test_random_trees_as_briefs(tmp_path_factory, tree):
    p = tmp_path_factory.mktemp("b") / "brief.yaml"
    p.write_text(yaml.safe_dump(tree))
    with pytest.raises(GrpoRlvrError), no_hang():
        load_brief(p)  # no random tree is a whole brief


@pytest.fixture(scope="module")
def artifact_dir(tmp_path_factory, tiny_model_dir):
    from artifacts import make_artifact
    from grpo_rlvr.demo import arithmetic_task
    from grpo_rlvr.files import write_jsonl_atomic

    ws = tmp_path_factory.mktemp("ws")
    (ws / "brief.yaml").write_text(example_brief_text())
    write_jsonl_atomic(ws / "data" / "train.jsonl", arithmetic_task.make_rows(200, seed=1))
    (ws / "model").symlink_to(tiny_model_dir, target_is_directory=True)
    return make_artifact(ws / "brief.yaml", ws / "out" / "inspection")


@FUZZ
@given(st.integers(0, 99), st.integers(0, 10**6), trees, st.sampled_from(["set", "delete", "add"]))
def test_mutated_artifact_gates_or_says_why(artifact_dir, tmp_path_factory, row, choice, value, how):
    from grpo_rlvr.gate.check import check_gate

    d = tmp_path_factory.mktemp("insp") / "inspection"
    shutil.copytree(artifact_dir, d)
    lines = (d / "samples.jsonl").read_text().split("\n")[:-1]
    i = row % len(lines)
    lines[i] = json.dumps(_mutate(json.loads(lines[i]), choice, value, how))
    (d / "samples.jsonl").write_text("\n".join(lines) + "\n")
    try:
        with no_hang():
            check_gate(d, demo=False).format()  # passing is possible: a reviewer's note is free text
    except GrpoRlvrError as e:
        assert str(e)


@FUZZ
@given(trees, st.integers(0, 10**6), st.sampled_from(["set", "delete", "add"]))
def test_mutated_manifest_gates_or_says_why(artifact_dir, tmp_path_factory, value, choice, how):
    from grpo_rlvr.gate.check import check_gate

    d = tmp_path_factory.mktemp("insp") / "inspection"
    shutil.copytree(artifact_dir, d)
    manifest = json.loads((d / "manifest.json").read_text())
    (d / "manifest.json").write_text(json.dumps(_mutate(manifest, choice, value, how)))
    try:
        with no_hang():
            check_gate(d).format()
    except GrpoRlvrError as e:
        assert str(e)


@fuzz_settings(60)
@given(st.binary(max_size=300) | trees.map(lambda t: json.dumps(t).encode()),
       st.sampled_from(["trainer_state.json", "metrics.jsonl"]))
def test_random_logs_diagnose_or_say_why(tmp_path_factory, data, name):
    from grpo_rlvr.diagnosis import diagnose

    d = tmp_path_factory.mktemp("logs")
    (d / name).write_bytes(data)
    try:
        with no_hang():
            diagnose(d / name, out_dir=d / "out")
    except GrpoRlvrError as e:
        assert str(e)


@fuzz_settings(60)
@given(st.lists(trees, min_size=1, max_size=4))
def test_random_score_input_scores_or_says_why(tmp_path_factory, rows):
    from grpo_rlvr.score.scoring import score_file

    p = tmp_path_factory.mktemp("score") / "in.jsonl"
    p.write_text("".join(json.dumps({"completion": r, "answer": "1", "prompt": "1+0="}) + "\n" for r in rows))
    for reward in ("exact_match", "format", "math", "json_schema"):
        try:
            with no_hang():
                score_file(p, reward=reward, options=["schema_column=answer"] if reward == "json_schema" else [])
        except GrpoRlvrError as e:
            assert str(e)


def test_every_property_test_takes_the_shared_fuzz_settings():
    """A hypothesis test with its own ``settings`` would draw new cases on each run (not derandomized) and be
    left out of the sweep's multiplier: each one takes ``fuzz_settings``, directly or through a module constant."""
    import ast

    unshared = []
    files = sorted((REPO / "tests").rglob("test_*.py"))
    for path in files:
        tree = ast.parse(path.read_text())
        shared = {t.id for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
                  and getattr(n.value.func, "id", None) == "fuzz_settings" for t in n.targets}
        for fn in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
            names = [getattr(d.func if isinstance(d, ast.Call) else d, "id", None) for d in fn.decorator_list]
            if "given" in names and not ("fuzz_settings" in names or shared & set(names)):
                unshared.append(f"{path.relative_to(REPO)}::{fn.name}")
    assert unshared == []
    assert len(files) > 60     # the glob found the test files in every folder


def test_the_hang_guard_counts_cpu_time_not_the_wall_clock():
    """What bounds each case above: a block that computes past the bound fails as ``Hang``; one that only waits
    (a loaded machine, a sleep) as long spends no CPU time and passes."""
    import time

    with no_hang(0.2):
        time.sleep(0.4)
    end = time.monotonic() + 60   # a bound of its own, should the guard never fire
    with pytest.raises(Hang, match="spent 0.2 s of CPU time"), no_hang(0.2):
        while time.monotonic() < end:
            pass
    assert time.monotonic() < end
