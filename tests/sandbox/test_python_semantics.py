"""The ``unit_tests`` reward follows what the test's own Python does to its values: an expected value the
test mutates (item, slice, ``+=``, ``append``/``extend``/``sort``/``del``, aliasing, a ``setUp`` or a loop
that fills it), an argument the program changes in place (rotate, sort, reverse, transpose, remove duplicates
and return the length, a dict or a set filled), and ``!=`` / ``not in`` where ``True == 1``; and Python's own
types and lazy values returned (``Counter``, ``defaultdict``, ``namedtuple``, a keys view, generators, ``map``),
round trips tested both ways, and test classes keeping state on ``self``. The corpus is ``mutation_corpus.CORPUS``
and ``types_corpus.CORPUS``: each task in three formats (an assert list, pytest functions or a test class,
HumanEval's ``check``), a right program, wrong ones (a "cheater" first) and others Python accepts.

First the corpus is checked in plain Python (no sandbox): the right programs pass every test of every format,
each wrong program fails at least one in every format. Then through the sandbox: every right program scores
1.0, every wrong one scores less or is labelled weak, and the cheater scores less than 1.0 in every format.
"""

from __future__ import annotations

import io
import unittest

import pytest

from grpo_rlvr.sandbox import SandboxLimits, run_unit_tests

from . import types_corpus
from .mutation_corpus import CORPUS as MUTATION_CORPUS
from .mutation_corpus import FORMATS, KINDS, Task

CORPUS = MUTATION_CORPUS + types_corpus.CORPUS

LIMITS = SandboxLimits(timeout_s=10.0, cpu_s=10.0)


# ------------------------------------------------------------------ plain Python: what each format means


def _is_test_case(obj) -> bool:
    return isinstance(obj, type) and issubclass(obj, unittest.TestCase) and obj is not unittest.TestCase


def _is_pytest_class(name: str, obj) -> bool:
    return name.startswith("Test") and isinstance(obj, type) and not issubclass(obj, unittest.TestCase)


def _pytest_class_failures(cls) -> list[str]:
    """A pytest ``class Test*`` as pytest runs it: a fresh instance per test method, ``setup_method`` and
    ``teardown_method`` around it."""
    failures = []
    for name in [n for n in vars(cls) if n.startswith("test")]:
        instance = cls()
        try:
            if hasattr(instance, "setup_method"):
                instance.setup_method(getattr(cls, name))
            getattr(instance, name)()
        except Exception as e:
            failures.append(f"{cls.__name__}.{name}: {type(e).__name__}")
    return failures


def _python_failures(program: str, task: Task, fmt: str) -> list[str]:
    """Run ``program`` then the task's tests of format ``fmt`` in a fresh namespace, as plain Python; the
    tests that failed (empty: all passed)."""
    ns: dict = {"__name__": "corpus_under_test"}
    try:
        exec(compile(program, "<program>", "exec"), ns)
    except Exception as e:  # a broken program fails every test
        return [f"program: {type(e).__name__}: {e}"]
    failures = []
    if fmt == "asserts":
        for i, line in enumerate(task.asserts):
            try:
                exec(compile(line, f"<assert {i}>", "exec"), ns)
            except Exception as e:
                failures.append(f"line {i} {line!r}: {type(e).__name__}")
                break  # later lines may read what this one failed to make
    elif fmt == "pytest":
        exec(compile(task.pytest, "<tests>", "exec"), ns)
        for name, obj in list(ns.items()):
            if name.startswith("test_") and callable(obj):
                try:
                    obj()
                except Exception as e:
                    failures.append(f"{name}: {type(e).__name__}")
            elif _is_pytest_class(name, obj):
                failures += _pytest_class_failures(obj)
            elif _is_test_case(obj):
                suite = unittest.defaultTestLoader.loadTestsFromTestCase(obj)
                result = unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(suite)
                failures += [f"{case.id()}: {trace.strip().splitlines()[-1]}"
                             for case, trace in result.failures + result.errors]
                assert result.testsRun > 0, f"{task.name}: {name} runs no test"
    else:
        exec(compile(task.check, "<check>", "exec"), ns)
        try:
            ns["check"](ns[task.entry_point])
        except Exception as e:
            failures.append(f"check: {type(e).__name__}")
    return failures


def _ran_something(task: Task) -> bool:
    ns: dict = {"__name__": "corpus_under_test"}
    exec(compile(task.pytest, "<tests>", "exec"), ns)
    return any(k.startswith("test_") or _is_test_case(v) or _is_pytest_class(k, v) for k, v in ns.items())


def test_the_corpus_means_what_it_says_in_plain_python():
    problems = []
    names = [t.name for t in CORPUS]
    assert len(names) == len(set(names)), "task names repeat"
    assert len(CORPUS) >= 34
    kinds = {k: [t.name for t in CORPUS if t.kind == k] for k in KINDS + types_corpus.KINDS}
    assert {t.kind for t in CORPUS} <= set(KINDS + types_corpus.KINDS)
    assert len(kinds["in_place"]) >= 10 and len(kinds["mutated_expected"]) >= 10, kinds
    assert len(kinds["python_semantics"]) >= 3, kinds
    assert all(len(kinds[k]) >= 2 for k in types_corpus.KINDS), kinds
    assert any(t.uses_unittest for t in CORPUS) and not all(t.uses_unittest for t in CORPUS)
    for task in CORPUS:
        assert next(iter(task.wrong)) == "cheater", f"{task.name}: the cheater comes first"
        for program in (task.correct, *task.also_right, *task.wrong.values()):  # wrong, not merely misnamed
            ns: dict = {}
            exec(compile(program, "<program>", "exec"), ns)
            assert callable(ns.get(task.entry_point)), f"{task.name}: a program lacks {task.entry_point}"
        assert _ran_something(task), f"{task.name}: its test code defines no test"
        for fmt in FORMATS:
            for i, program in enumerate((task.correct, *task.also_right)):
                if failed := _python_failures(program, task, fmt):
                    problems.append(f"{task.name}/{fmt}: right program {i} fails in Python: {failed}")
            for wname, program in task.wrong.items():
                if not _python_failures(program, task, fmt):
                    problems.append(f"{task.name}/{fmt}: wrong program {wname!r} passes in Python")
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------ through the sandbox

CASES = [pytest.param(task, fmt, id=f"{task.kind}-{task.name}-{fmt}") for task in CORPUS for fmt in FORMATS]
RIGHT_CASES = [pytest.param(task, fmt, program, id=f"{task.kind}-{task.name}-{fmt}-{label}")
               for task in CORPUS for fmt in FORMATS
               for label, program in (("correct", task.correct),
                                      *((f"also_right{i}", p) for i, p in enumerate(task.also_right)))]
WRONG_CASES = [pytest.param(task, fmt, wname, id=f"{task.kind}-{task.name}-{fmt}-{wname}")
               for task in CORPUS for fmt in FORMATS for wname in task.wrong]


def _score(program: str, task: Task, fmt: str):
    return run_unit_tests(program, task.tests(fmt), entry_point=task.entry_for(fmt), limits=LIMITS)


@pytest.mark.parametrize(("task", "fmt", "program"), RIGHT_CASES)
def test_a_right_program_scores_full(task, fmt, program):
    verdict = _score(program, task, fmt)
    assert verdict.total > 0 and verdict.passed == verdict.total, verdict.reason


@pytest.mark.parametrize(("task", "fmt", "wname"), WRONG_CASES)
def test_a_wrong_program_scores_less_or_is_labelled_weak(task, fmt, wname):
    verdict = _score(task.wrong[wname], task, fmt)
    assert verdict.passed < verdict.total or verdict.weak > 0, verdict.reason


@pytest.mark.parametrize(("task", "fmt"), CASES)
def test_the_cheater_scores_less_than_full_and_the_right_program_full(task, fmt):
    """The must-show of the issue, weak or not: the right program 1.0, the cheater below 1.0, every format."""
    right = _score(task.correct, task, fmt)
    cheat = _score(task.wrong["cheater"], task, fmt)
    assert right.total > 0 and right.score == 1.0, f"right: {right.reason}"
    assert cheat.score < 1.0, f"cheater: {cheat.reason}"
