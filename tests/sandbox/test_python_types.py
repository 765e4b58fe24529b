"""Python's own types are judged as Python judges them: a ``Counter``, ``defaultdict`` or ``OrderedDict`` compares
as the dict it holds, a ``namedtuple`` as its tuple, a numpy scalar as its ``.item()``, a dict's keys view as a set;
and a built-in the test applies to a program value (``list(gen(3))``, ``sum(map(...))``, ``len(range(n))``,
``sorted(d.keys())``, ``' '.join(genexpr)``, ``len(obj)`` of a class with ``__len__``) is applied where the value
lives, as Python would, with the built-ins as they were before the program ran. The trainer still compares plain
data only: a subclass's own ``__eq__`` never decides.

Each case is checked against plain Python first (per assert, in order, in one namespace): the sandbox must agree
with Python on every assert, for the right program and the wrong ones, in four formats.
"""

from __future__ import annotations

import ast
import builtins

import pytest

from grpo_rlvr.sandbox import SandboxLimits, run_unit_tests

from .plain_runs import assert_outcomes as python_outcomes

try:
    import numpy  # noqa: F401 - only whether it is there: the numpy case needs it in the sandbox's Python too
except ImportError:
    HAS_NUMPY = False
else:
    HAS_NUMPY = True

LIMITS = SandboxLimits(timeout_s=10.0, cpu_s=10.0)

CASES = {
    "counter": ("from collections import Counter\ndef counts(s):\n    return Counter(s)\n",
                ["from collections import Counter\ndef counts(s):\n    return Counter(s[1:])\n",
                 "def counts(s):\n    return {c: 1 for c in s}\n"],
                ["assert counts('aab') == {'a': 2, 'b': 1}", "assert counts('') == {}",
                 "assert counts('zz')['z'] == 2", "assert sorted(counts('ba')) == ['a', 'b']"]),
    "defaultdict": ("from collections import defaultdict\ndef by_len(words):\n    out = defaultdict(list)\n"
                    "    for w in words:\n        out[len(w)].append(w)\n    return out\n",
                    ["from collections import defaultdict\ndef by_len(words):\n    out = defaultdict(list)\n"
                     "    for w in words:\n        out[len(w)].insert(0, w)\n    return out\n"],
                    ["assert by_len(['a', 'bb', 'c']) == {1: ['a', 'c'], 2: ['bb']}", "assert by_len([]) == {}",
                     "assert len(by_len(['x', 'yy'])) == 2"]),
    "ordereddict": ("from collections import OrderedDict\ndef ranks(xs):\n"
                    "    return OrderedDict((x, i) for i, x in enumerate(sorted(xs)))\n",
                    ["from collections import OrderedDict\ndef ranks(xs):\n"
                     "    return OrderedDict((x, i) for i, x in enumerate(xs))\n"],
                    ["assert ranks([3, 1, 2]) == {1: 0, 2: 1, 3: 2}", "assert list(ranks([2, 1])) == [1, 2]"]),
    "namedtuple": ("from collections import namedtuple\nPoint = namedtuple('Point', 'x y')\n"
                   "def mid(a, b):\n    return Point((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)\n",
                   ["from collections import namedtuple\nPoint = namedtuple('Point', 'x y')\n"
                    "def mid(a, b):\n    return Point(a[0], b[1])\n"],
                   ["assert mid((0, 0), (2, 4)) == (1.0, 2.0)", "assert mid((1, 1), (1, 1))[0] == 1",
                    "assert list(mid((0, 2), (2, 0))) == [1, 1]"]),
    "numpy": ("import numpy as np\ndef mean(xs):\n    return np.mean(xs)\ndef is_even(n):\n    return np.int64(n) % 2 == 0\n"
              "def total(xs):\n    return np.sum(np.array(xs, dtype=np.int64))\n",
              ["import numpy as np\ndef mean(xs):\n    return np.median(xs) + 1\ndef is_even(n):\n    return np.bool_(n % 3)\n"
               "def total(xs):\n    return np.int64(len(xs))\n"],
              ["assert mean([1, 2]) == 1.5", "assert is_even(4)", "assert not is_even(3)", "assert total([2, 3]) == 5",
               "assert mean([2, 2, 5]) > 2.9"]),
    "generators": ("def evens(n):\n    for i in range(0, n, 2):\n        yield i\n"
                   "def doubled(xs):\n    return map(lambda x: 2 * x, xs)\ndef shout(s):\n"
                   "    return (w.upper() for w in s.split())\n",
                   ["def evens(n):\n    yield from range(1, n, 2)\ndef doubled(xs):\n    return map(lambda x: x + 2, xs)\n"
                    "def shout(s):\n    return (w for w in s.split())\n"],
                   ["assert list(evens(5)) == [0, 2, 4]", "assert sum(evens(7)) == 12", "assert next(evens(3)) == 0",
                    "assert sum(doubled([1, 2, 3])) == 12", "assert ' '.join(shout('a bc')) == 'A BC'",
                    "assert max(doubled([4, 1])) == 8"]),
    "views_and_ranges": ("def keys_of(d):\n    return d.keys()\ndef span(n):\n    return range(n)\n"
                         "def pairs(a, b):\n    return zip(a, b)\n",
                         ["def keys_of(d):\n    return d.values()\ndef span(n):\n    return range(n + 1)\n"
                          "def pairs(a, b):\n    return zip(b, a)\n"],
                         ["assert sorted(keys_of({'b': 1, 'a': 2})) == ['a', 'b']", "assert keys_of({'a': 1}) == {'a'}",
                          "assert len(span(5)) == 5", "assert list(span(3)) == [0, 1, 2]",
                          "assert list(pairs([1, 2], 'ab')) == [(1, 'a'), (2, 'b')]",
                          "assert dict(pairs('ab', [1, 2])) == {'a': 1, 'b': 2}"]),
    "own_container": ("class Bag:\n    def __init__(self, xs):\n        self.xs = list(xs)\n    def __len__(self):\n"
                      "        return len(self.xs)\n    def __iter__(self):\n        return iter(self.xs)\n"
                      "def bag(xs):\n    return Bag(sorted(set(xs)))\n",
                      ["class Bag:\n    def __init__(self, xs):\n        self.xs = list(xs)\n    def __len__(self):\n"
                       "        return len(self.xs)\n    def __iter__(self):\n        return iter(self.xs)\n"
                       "def bag(xs):\n    return Bag(xs)\n"],
                      ["assert len(bag([3, 1, 3])) == 2", "assert list(bag([2, 1, 2])) == [1, 2]",
                       "assert sorted(bag('ba')) == ['a', 'b']", "assert 3 in list(bag([3]))"]),
}
FORMATS = ("asserts", "pytest", "unittest", "check")


def _entry(line: str) -> str:
    """The program function an assert calls first (the ``check`` format's candidate)."""
    for node in ast.walk(ast.parse(line)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not hasattr(builtins, node.func.id):
            return node.func.id
    raise AssertionError(line)


def _unittest_line(line: str) -> str:
    test = ast.parse(line).body[0].test
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
        return f"self.assertEqual({ast.unparse(test.left)}, {ast.unparse(test.comparators[0])})"
    return f"self.assertTrue({ast.unparse(test)})"


def written_as(fmt: str, lines: list[str]):
    """``(tests, entry_point)``: the asserts as an assert list, pytest functions, a TestCase, or HumanEval's check
    (each line one test in every format; ``check`` calls the first line's function ``candidate``)."""
    if fmt == "asserts":
        return lines, None
    if fmt == "pytest":
        return "".join(f"def test_{k}():\n    {line}\n\n\n" for k, line in enumerate(lines)), None
    if fmt == "unittest":
        methods = "".join(f"    def test_{k}(self):\n        {_unittest_line(line)}\n\n" for k, line in enumerate(lines))
        return f"import unittest\n\n\nclass T(unittest.TestCase):\n{methods}", None
    entry = _entry(lines[0])
    body = "".join(f"    {line.replace(entry + '(', 'candidate(')}\n" for line in lines)
    return f"def check(candidate):\n{body}", entry


PARAMS = [pytest.param(name, fmt, id=f"{name}-{fmt}", marks=pytest.mark.skipif(
    name == "numpy" and not HAS_NUMPY, reason="numpy is not installed")) for name in CASES for fmt in FORMATS]


def test_the_cases_mean_what_they_say_in_plain_python():
    for name, (right, wrongs, lines) in CASES.items():
        if name == "numpy" and not HAS_NUMPY:
            continue
        assert all(python_outcomes(right, lines)), name
        for wrong in wrongs:
            assert not all(python_outcomes(wrong, lines)), name


@pytest.mark.parametrize(("name", "fmt"), PARAMS)
def test_the_sandbox_agrees_with_python_on_every_assert(name, fmt):
    right, wrongs, lines = CASES[name]
    tests, entry_point = written_as(fmt, lines)
    for program in (right, *wrongs):
        verdict = run_unit_tests(program, tests, entry_point=entry_point, limits=LIMITS)
        ours = [d.startswith(f"test {i + 1} passed") for i, d in enumerate(verdict.details)]
        assert ours == python_outcomes(program, lines), verdict.details
        assert verdict.weak == 0, verdict.reason
    assert run_unit_tests(right, tests, entry_point=entry_point, limits=LIMITS).score == 1.0


def test_the_reason_names_the_type_that_crossed():
    verdict = run_unit_tests(CASES["counter"][0], ["assert counts('ab') == {'a': 2}"], limits=LIMITS)
    assert "returned {'a': 1, 'b': 1} (a Counter, compared as a dict)" in verdict.details[0]


def test_type_checks_are_pythons():
    program = "from collections import Counter\ndef counts(s):\n    return Counter(s)\ndef plain(s):\n    return dict(Counter(s))\n"
    lines = ["assert type(counts('a')) is dict", "assert isinstance(counts('a'), dict)", "assert type(plain('a')) is dict",
             "assert type(plain('a')) == dict", "assert isinstance(counts('a'), Counter)"]
    verdict = run_unit_tests(program, lines, limits=LIMITS)
    assert [d.endswith("passed") for d in verdict.details] == python_outcomes(program, lines) == [False, True, True,
                                                                                                   True, True]


def test_an_impostors_own_methods_decide_nothing():
    # A subclass crosses as the built-in value it holds; its __eq__, __iter__, items or startswith never run here.
    cheat = ("class I(int):\n    __eq__ = lambda self, o: True\n    __hash__ = int.__hash__\n"
             "class D(dict):\n    __eq__ = lambda self, o: True\n    def items(self):\n        return [('a', 2)]\n"
             "class L(list):\n    __eq__ = lambda self, o: True\n    def __iter__(self):\n        return iter([1, 2])\n"
             "def n():\n    return I(0)\ndef d():\n    return D()\ndef seq():\n    return L()\n")
    lines = ["assert n() == 5", "assert d() == {'a': 2}", "assert seq() == [1, 2]", "assert list(seq()) == [1, 2]"]
    verdict = run_unit_tests(cheat, lines, limits=LIMITS)
    assert verdict.details[:3] == ("test 1 failed: n() returned 0 (a I, compared as a int), expected 5",
                                   "test 2 failed: d() returned {} (a D, compared as a dict), expected {'a': 2}",
                                   "test 3 failed: seq() returned [] (a L, compared as a list), expected [1, 2]")
    assert verdict.details[3] == "test 4 passed"  # as in Python: list() calls its __iter__


def test_a_builtin_the_program_rebinds_is_not_the_one_the_test_applies():
    cheat = ("import builtins\nbuiltins.sorted = lambda *a, **k: [1, 2, 3]\nbuiltins.len = lambda x: 3\n"
             "builtins.list = lambda *a: [0, 1, 2]\ndef f():\n    return iter(['x'])\n")
    lines = ["assert sorted(f()) == [1, 2, 3]", "assert len(list(f())) == 3", "assert list(f()) == [0, 1, 2]"]
    verdict = run_unit_tests(cheat, lines, limits=LIMITS)
    assert verdict.passed == 0, verdict.reason
