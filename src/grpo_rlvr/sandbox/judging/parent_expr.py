"""Asserts judged in the parent: which parts of a condition the sandbox evaluates, and the rest, done here.

A condition is *strong* when the parent compares plain data that the program returned against a value the
parent computed from the test text alone. ``plan_condition`` splits the condition into **leaves** - calls
into the program (``candidate(3)``, ``Solution().two_sum([2, 7], 9)``, a name the program defined) - which
the sandbox evaluates and returns as plain data, and everything around them, which this process evaluates
on those values with its own builtins: comparisons (Python's own ``==``, ``!=``, ``in``, ``<``... on plain data;
``is`` only against ``None``, ``True``, ``False``, ``...`` or a type), arithmetic,
``not``/``and``/``or``, subscripts, displays, the builtins in ``FUNCTIONS`` (``len``, ``sorted``, ``abs``,
``set``...), ``math`` functions (``math.isclose``...) and the methods of plain ``str``/``list``/``dict``/... in
``METHODS`` (``shout('abc').startswith('ABC')``: the program returns the string, the parent calls
``startswith``; a value that is not a plain ``str`` fails there, while for names a class of the program may
define - ``get``, ``count``, ``keys``... - the program's own method ran in the sandbox and that test is
weak). Parts without a leaf are the test's own values: literals, names the test bound to them, and
expressions of those and the standard library (``2.0 / 3.0``, ``math.sqrt(2)``, ``sum([i ** 2 for i in
lst])``), evaluated here once when the plan is made. Every comparison must have such a side: ``f(3) ==
g(3)`` compares the program with itself. Anything else - a helper the test defines (the program could patch
what it calls), a method of a value that is not plain data, a builtin not listed here, a comprehension over
program values - makes the condition weak (``Unplannable``): it then runs whole in the sandbox, counted and
labelled as weak. What the parent applies to values, and its bounds: ``judging.plain_ops``; what the test's names
mean, and how its values stay out of the sandbox: ``judging.expected_values``.
Covered: the shapes above. Not covered: short-circuiting (every leaf of a condition is evaluated, left to
right, before the parent decides), exceptions as expected outcomes (``pytest.raises`` stays weak).
"""

from __future__ import annotations

import ast
import math
import operator
from dataclasses import dataclass

from .expected_values import Env, Unplannable, inline_constants, short_source, target_name
from .plain_ops import (
    BINOPS,
    CMP_NAMES,
    FUNCTIONS,
    MATH,
    METHOD_NAMES,
    METHODS,
    TEXT_ONLY_METHODS,
    UNARY,
    call_method,
    evaluate,
    isclose_number,
    literal_source,
)
from .plaindata import CONSUMERS, short_repr

__all__ = ["Env", "Leaf", "Strong", "Unplannable", "inline_constants", "literal_source", "not_plain", "plan_condition"]


# --- the parent-side expression -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Leaf:
    """A part the sandbox evaluates: an expression (``method`` None), a listed method called on the value of an
    earlier leaf (``receiver``), with arguments the test gave (``args_source``, ``args``), or a built-in that
    consumes a program value (``consumed``: the spec ``isolation.child`` evaluates with the real built-ins)."""

    source: str
    receiver: int = -1
    method: str = ""
    args_source: str = "()"
    args: tuple = ()
    consumed: tuple = ()


@dataclass(frozen=True)
class Strong:
    """A condition the parent judges: ``tree`` (nested tuples, see ``evaluate``) over leaf values."""

    tree: tuple
    leaves: tuple[Leaf, ...]
    text: str

    def probe(self) -> list:
        """The sandbox's side: ``["e", source]`` or ``["m", receiver, method, args source]`` per leaf."""
        return [list(x.consumed) if x.consumed else ["e", x.source] if not x.method
                else ["m", x.receiver, x.method, x.args_source] for x in self.leaves]

    def judge(self, values: list, names: list | None = None) -> tuple[bool, str, bool]:
        """(passed, why not, weak) for the leaf values (plain data, or ``NOT_PLAIN`` markers); ``names``: per leaf,
        the type it had in the sandbox when it crossed as a built-in (``Counter``), for the reason."""
        values = list(values)
        names = list(names or [""] * len(values))
        weak = False
        for i, leaf in enumerate(self.leaves):
            if leaf.method:
                receiver = values[leaf.receiver]
                if not isinstance(receiver, _NotPlain) and type(receiver) in METHODS:
                    try:
                        values[i] = call_method(receiver, leaf.method, leaf.args)
                    except (ArithmeticError, TypeError, ValueError, LookupError, RecursionError) as e:
                        return False, f"{leaf.source} raised {type(e).__name__}: {e}", False
                elif leaf.method in TEXT_ONLY_METHODS:
                    what = receiver.what if isinstance(receiver, _NotPlain) else f"a {type(receiver).__name__}"
                    return False, f"{self.leaves[leaf.receiver].source} returned {what}, not text", False
                elif not isinstance(values[i], _NotPlain):
                    weak = True  # a method of the program's own object ran in the sandbox
        used = leaf_indices(self.tree)
        for i, leaf in enumerate(self.leaves):
            if isinstance(values[i], _NotPlain) and i in used:
                return False, f"{leaf.source} returned {values[i].what}, not plain data", weak
        try:
            ok = bool(evaluate(self.tree, values))
        except (ArithmeticError, TypeError, ValueError, LookupError, RecursionError, MemoryError) as e:
            return False, f"assert {self.text} raised {type(e).__name__}: {e}"[:300], weak
        if ok:
            return True, "", weak
        return False, self._why(values, names), weak

    def _why(self, values: list, names: list) -> str:
        tree = self.tree
        if tree[0] == "cmp" and len(tree[2]) == 1 and tree[1][0] == "leaf" and tree[2][0][1][0] == "const":
            op, (_, _, expected) = tree[2][0][0], tree[2][0][1]
            got = values[tree[1][1]]
            label = self.leaves[tree[1][1]].source
            if op in ("==", "is"):
                g, w = short_repr(got), short_repr(expected)
                crossed_as = names[tree[1][1]]
                if crossed_as:
                    g = f"{g} (a {crossed_as}, compared as a {type(got).__name__})"
                    w = f"{w} ({type(expected).__name__})" if type(got) is not type(expected) else w
                elif g == w or type(got) is not type(expected):
                    g, w = f"{g} ({type(got).__name__})", f"{w} ({type(expected).__name__})"
                return f"{label} returned {g}, expected {w}"
            if op in ("!=", "is not"):
                return f"{label} returned {short_repr(got)}, expected anything else"
        if tree[0] == "call" and tree[1] is isclose_number and tree[2][0][0] == "leaf" and tree[2][1][0] == "const":
            label = self.leaves[tree[2][0][1]].source
            return f"{label} returned {short_repr(values[tree[2][0][1]])}, expected about {tree[2][1][2]!r}"
        if tree[0] == "leaf":
            return f"{self.leaves[tree[1]].source} is {short_repr(values[tree[1]])}, expected true"
        if tree[0] == "unary" and tree[1] is operator.not_ and tree[2][0] == "leaf":
            return f"{self.leaves[tree[2][1]].source} is {short_repr(values[tree[2][1]])}, expected false"
        got = ", ".join(f"{leaf.source} returned {short_repr(values[i], 40)}" for i, leaf in enumerate(self.leaves))
        return f"assert {self.text} failed: {got}"[:300]


class _NotPlain:
    def __init__(self, what: str):
        self.what = what


def not_plain(what: str) -> _NotPlain:
    """The marker for a leaf whose value the sandbox could not send as plain data."""
    return _NotPlain(what)


def leaf_indices(tree) -> set[int]:
    """The leaves a tree reads (constants are not walked: a test's tuple may look like a node)."""
    found: set[int] = set()

    def walk(node) -> None:
        if not isinstance(node, tuple) or not node or node[0] == "const":
            return
        if node[0] == "leaf" and len(node) == 2 and type(node[1]) is int:
            found.add(node[1])
            return
        for part in node:
            if isinstance(part, tuple):
                walk(part)

    walk(tree)
    return found


class _Builder:
    def __init__(self, env: Env):
        self.env = env
        self.leaves: list[Leaf] = []

    def leaf(self, node: ast.expr) -> tuple:
        sent, exposed = inline_constants(node, self.env)
        if exposed:
            raise Unplannable(f"{short_source(node)} binds a name the test also uses as a value")
        self.leaves.append(Leaf(ast.unparse(sent)))
        return ("leaf", len(self.leaves) - 1)

    def build(self, node: ast.expr) -> tuple:
        env = self.env
        dotted = target_name(node) if isinstance(node, ast.Attribute) else None
        if dotted in env.consts:  # self.expected, set in setUp
            return ("const", None, env.consts[dotted])
        if dotted in env.program:
            return self.leaf(node)
        if env.leaf_free(node):
            return ("const", None, env.fold(node))
        if isinstance(node, ast.Call):
            return self._call(node)
        if env.program_rooted(node):
            return self.leaf(node)
        approx = self._approx(node)
        if approx is not None:
            return approx
        for types, shape in _SHAPES:
            if isinstance(node, types):
                tree = shape(self, node)
                if tree is not None:
                    return tree
                break
        if isinstance(node, ast.Name) and node.id in env.helpers:
            raise Unplannable(f"{node.id} is defined by the test (it runs in the sandbox)")
        raise Unplannable(f"{short_source(node)} is not judged in the parent")

    # --- the shapes the parent evaluates itself: each builds its parts in source order (leaf indices follow it),
    # or returns None when this instance of the shape is not one the parent evaluates

    def _compare(self, node: ast.Compare) -> tuple:
        first = previous = self.build(node.left)
        parts = []
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = self.build(comparator)
            if isinstance(op, (ast.Is, ast.IsNot)) and not (_identity_known(previous) or _identity_known(right)):
                raise Unplannable(f"{short_source(node)} asks the identity of a value that crossed from the sandbox")
            parts.append((CMP_NAMES[type(op)], right))
            previous = right
        return ("cmp", first, tuple(parts))

    def _bool(self, node: ast.BoolOp) -> tuple:
        return ("bool", "and" if isinstance(node.op, ast.And) else "or", tuple(self.build(v) for v in node.values))

    def _unary(self, node: ast.UnaryOp) -> tuple:
        return ("unary", UNARY[type(node.op)], self.build(node.operand))

    def _binary(self, node: ast.BinOp) -> tuple | None:
        if type(node.op) not in BINOPS:
            return None
        return ("bin", BINOPS[type(node.op)], self.build(node.left), self.build(node.right))

    def _if(self, node: ast.IfExp) -> tuple:
        return ("if", self.build(node.test), self.build(node.body), self.build(node.orelse))

    def _subscript(self, node: ast.Subscript) -> tuple:
        return ("sub", self.build(node.value), self.build(node.slice))

    def _slice(self, node: ast.Slice) -> tuple:
        return ("slice", *(None if p is None else self.build(p) for p in (node.lower, node.upper, node.step)))

    def _display(self, node: ast.List | ast.Tuple | ast.Set) -> tuple | None:
        if any(isinstance(e, ast.Starred) for e in node.elts):
            return None
        kind = {ast.List: "list", ast.Tuple: "tuple", ast.Set: "set"}[type(node)]
        return ("display", kind, tuple(self.build(e) for e in node.elts))

    def _dict(self, node: ast.Dict) -> tuple | None:
        if None in node.keys:
            return None
        return ("dict", tuple(self.build(k) for k in node.keys), tuple(self.build(v) for v in node.values))

    def _approx(self, node: ast.expr) -> tuple | None:
        """``X == pytest.approx(NUMBER)`` (either side): ``isclose`` with pytest's tolerances (rel 1e-6, abs 1e-12)."""
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq)):
            return None
        for probe, other in ((node.left, node.comparators[0]), (node.comparators[0], node.left)):
            func = other.func if isinstance(other, ast.Call) else None
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name == "approx" and len(other.args) == 1 and not other.keywords:
                expected = self.env.fold(other.args[0])
                if type(expected) not in (int, float):
                    raise Unplannable("pytest.approx of something other than a number")
                kwargs = (("rel_tol", ("const", None, 1e-6)), ("abs_tol", ("const", None, 1e-12)))
                return ("call", isclose_number, (self.build(probe), ("const", None, expected)), kwargs)
        return None

    def _consumer(self, node: ast.expr) -> tuple | None:
        """The sandbox's spec of a built-in applied to a program value (``list(gen(3))``, ``sum(map(f, xs))``,
        ``len(range(n))``, ``sorted(d.keys())``, ``' '.join(words(s))``, ``type(f(x))``), nested as written; None
        when ``node`` is not one. Python applies it to the value where the value lives, calling the value's own
        ``__iter__``, ``__len__``...: the sandbox does the same, with the built-ins as they were before the
        program ran, and only the result crosses (a generator or a ``map`` never would)."""
        if not isinstance(node, ast.Call) or any(isinstance(a, ast.Starred) for a in node.args) or any(
                k.arg is None for k in node.keywords):
            return None
        env, func = self.env, node.func
        if isinstance(func, ast.Name) and func.id in CONSUMERS and not env.known(func.id):
            name, parts = func.id, list(node.args)
        elif (isinstance(func, ast.Attribute) and func.attr == "join" and isinstance(func.value, ast.Constant)
              and type(func.value.value) is str and len(node.args) == 1 and not node.keywords):
            name, parts = "str.join", [func.value, node.args[0]]
        else:
            return None
        specs, reaches_program = [], False
        for part in parts + [k.value for k in node.keywords]:
            inner = self._consumer(part)
            if inner is not None or env.program_rooted(part):
                reaches_program = True
                specs.append(inner if inner is not None else ["e", ast.unparse(self._sent(part))])
            elif isinstance(part, ast.Name) and part.id in CONSUMERS and not env.known(part.id):
                specs.append(["b", part.id])  # map(str, ...): the real built-in too
            elif env.leaf_free(part):
                specs.append(["e", ast.unparse(self._sent(part))])
            else:
                return None
        if not reaches_program:
            return None
        args, kwargs = specs[:len(parts)], [[k.arg, spec] for k, spec in zip(node.keywords, specs[len(parts):],
                                                                              strict=True)]
        return ("c", name, args, kwargs)

    def _sent(self, node: ast.expr) -> ast.expr:
        sent, exposed = inline_constants(node, self.env)
        if exposed:
            raise Unplannable(f"{short_source(node)} binds a name the test also uses as a value")
        return sent

    def _call(self, node: ast.Call) -> tuple:
        env, func = self.env, node.func
        consumed = self._consumer(node)
        if consumed is not None:
            self.leaves.append(Leaf(ast.unparse(self._sent(node)), consumed=consumed))
            return ("leaf", len(self.leaves) - 1)
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise Unplannable(f"{short_source(node)}: starred arguments")
        fn = None
        if isinstance(func, ast.Name) and func.id in FUNCTIONS and not env.known(func.id):
            fn = FUNCTIONS[func.id]
        elif isinstance(func, ast.Name) and func.id in env.functions and func.id in MATH:
            fn = MATH[func.id] if env.functions[func.id] is getattr(math, func.id, None) else None
        elif isinstance(func, ast.Attribute) and env.module_of(func.value) is math and func.attr in MATH:
            fn = MATH[func.attr]
        if fn is not None:
            args = tuple(self.build(a) for a in node.args)
            kwargs = tuple((k.arg, ("const", None, env.fold(k.value))) for k in node.keywords)
            if fn is isclose_number and len(args) >= 2 and all(leaf_indices(a) for a in args[:2]):
                raise Unplannable(f"{short_source(node)} compares two values of the program")
            return ("call", fn, args, kwargs)
        if isinstance(func, ast.Attribute) and func.attr in METHOD_NAMES and env.module_of(func.value) is None:
            if node.keywords:
                raise Unplannable(f"{short_source(node)}: keyword arguments of a method")
            if env.program_rooted(func.value):  # the program's value: its method is called in the sandbox too
                args = tuple(env.fold(a) for a in node.args)
                receiver = self.leaf(func.value)[1]
                self.leaves.append(Leaf(f"{self.leaves[receiver].source}.{func.attr}(...)", receiver, func.attr,
                                        literal_source(args), args))
                return ("leaf", len(self.leaves) - 1)
            return ("method", self.build(func.value), func.attr, tuple(self.build(a) for a in node.args))
        if env.program_rooted(node):
            return self.leaf(node)
        raise Unplannable(f"{short_source(func)}() is not judged in the parent (it runs in the sandbox)")


# The node types ``_Builder.build`` turns into parent-side trees, each with its builder (node types are distinct:
# at most one row matches a node).
_SHAPES = ((ast.Compare, _Builder._compare), (ast.BoolOp, _Builder._bool), (ast.UnaryOp, _Builder._unary),
           (ast.BinOp, _Builder._binary), (ast.IfExp, _Builder._if), (ast.Subscript, _Builder._subscript),
           (ast.Slice, _Builder._slice), ((ast.List, ast.Tuple, ast.Set), _Builder._display),
           (ast.Dict, _Builder._dict))


def _identity_known(tree) -> bool:
    """A side whose identity means the same on both sides of the process boundary: ``None``, ``True``, ``False``,
    ``...`` or a type (``assert f() is None``)."""
    if not (isinstance(tree, tuple) and tree and tree[0] == "const"):
        return False
    value = tree[2]
    return value is None or value is True or value is False or value is Ellipsis or isinstance(value, type)


def _comparisons_have_a_test_side(tree) -> bool:
    """Every comparison has a side without leaves: comparing the program with itself is no test."""
    if not isinstance(tree, tuple) or (tree and tree[0] == "const"):
        return True
    if tree and tree[0] == "cmp":
        operands = [tree[1]] + [right for _, right in tree[2]]
        for a, b in zip(operands, operands[1:], strict=False):
            if leaf_indices(a) and leaf_indices(b):
                return False
    return all(_comparisons_have_a_test_side(x) for x in tree if isinstance(x, tuple))


def plan_condition(test: ast.expr, env: Env) -> Strong:
    """Split an assert condition into leaves for the sandbox and the parent's part.

    Raises:
        Unplannable: it cannot be judged in the parent; the message says why.
    """
    builder = _Builder(env)
    tree = builder.build(test)
    if not builder.leaves:
        raise Unplannable("the assert checks nothing of the program")
    if not _comparisons_have_a_test_side(tree):
        raise Unplannable(f"{short_source(test)} compares the program with itself")
    return Strong(tree, tuple(builder.leaves), short_source(test))
