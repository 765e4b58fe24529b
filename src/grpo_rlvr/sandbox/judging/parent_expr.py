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

from . import assert_methods, numpy_ops
from .assert_calls import SEMANTICS_PREFIX
from .expected_values import Env, Unplannable, inline_constants, short_source, target_name
from .leaf_values import Crossed, LeafError, NotPlain, Raised, crossed_name, shown
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
    instance_facts_ok,
    isclose_number,
    literal_source,
    truth,
)
from .plaindata import CONSUMERS, short_repr

MAX_UNROLL = 1000  # elements of a comprehension, or calls of a map, the parent plans one by one

__all__ = ["Env", "Leaf", "Strong", "Unplannable", "inline_constants", "literal_source", "plan_condition"]


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

    def judge(self, values: list) -> tuple[bool, str, bool]:
        """(passed, why not, weak) for the leaf values (plain data, or the markers of ``judging.leaf_values``)."""
        values = list(values)
        weak = False
        for i, leaf in enumerate(self.leaves):
            if not leaf.method:
                continue
            receiver = values[leaf.receiver]
            base = receiver.value if type(receiver) is Crossed else receiver
            if type(receiver) is Raised:
                values[i] = receiver  # the call on it never happened
            elif type(receiver) is NotPlain:
                if leaf.method in TEXT_ONLY_METHODS:
                    return False, f"{self.leaves[leaf.receiver].source} returned {receiver.what}, not text", False
                weak = weak or type(values[i]) not in (NotPlain, Raised)  # the program's own method ran there
            elif type(base) in METHODS:
                try:
                    values[i] = call_method(base, leaf.method, leaf.args)
                except (ArithmeticError, TypeError, ValueError, LookupError, RecursionError) as e:
                    return False, f"{leaf.source} raised {type(e).__name__}: {e}", False
            elif leaf.method in TEXT_ONLY_METHODS:
                return False, f"{self.leaves[leaf.receiver].source} returned a {type(base).__name__}, not text", False
        for i, leaf in enumerate(self.leaves):
            if leaf.consumed and leaf.consumed[0] == "k" and instance_facts_ok(values[i]) and values[i]["abstract"]:
                weak = True  # an abstract class of the program's decided isinstance itself
        try:
            ok = truth(self.tree, values)
        except LeafError as e:
            return False, e.reason(self.leaves[e.index].source)[:300], weak
        except (ArithmeticError, TypeError, ValueError, LookupError, RecursionError, MemoryError) as e:
            return False, f"assert {self.text} raised {type(e).__name__}: {e}"[:300], weak
        if ok:
            return True, "", weak
        return False, self._why(values), weak

    def _why(self, values: list) -> str:
        tree = self.tree
        if tree[0] == "cmp" and len(tree[2]) == 1 and tree[1][0] == "leaf" and tree[2][0][1][0] == "const":
            op, (_, _, expected) = tree[2][0][0], tree[2][0][1]
            raw = values[tree[1][1]]
            got = raw.value if type(raw) is Crossed else raw
            label = self.leaves[tree[1][1]].source
            if op in ("==", "is"):
                g, w = shown(raw), short_repr(expected)
                crossed_as = crossed_name(raw)
                if crossed_as:
                    g = f"{g} (a {crossed_as}, compared as a {type(got).__name__})"
                    w = f"{w} ({type(expected).__name__})" if type(got) is not type(expected) else w
                elif g == w or type(got) is not type(expected):
                    g, w = f"{g} ({type(got).__name__})", f"{w} ({type(expected).__name__})"
                return f"{label} returned {g}, expected {w}"
            if op in ("!=", "is not"):
                return f"{label} returned {shown(raw)}, expected anything else"
        if tree[0] == "call" and tree[1] is isclose_number and tree[2][0][0] == "leaf" and tree[2][1][0] == "const":
            label = self.leaves[tree[2][0][1]].source
            return f"{label} returned {shown(values[tree[2][0][1]])}, expected about {tree[2][1][2]!r}"
        if tree[0] == "leaf":
            return f"{self.leaves[tree[1]].source} is {shown(values[tree[1]])}, expected true"
        if tree[0] == "unary" and tree[1] is operator.not_ and tree[2][0] == "leaf":
            return f"{self.leaves[tree[2][1]].source} is {shown(values[tree[2][1]])}, expected false"
        got = ", ".join(f"{leaf.source} returned {shown(values[i], 40)}" for i, leaf in enumerate(self.leaves))
        return f"assert {self.text} failed: {got}"[:300]


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

    def _list_comp(self, node: ast.ListComp | ast.SetComp) -> tuple:
        return ("display", "list" if isinstance(node, ast.ListComp) else "set", tuple(self._comprehension(node)))

    def _dict_comp(self, node: ast.DictComp) -> tuple:
        pairs = self._comprehension(node)
        return ("dict", tuple(k for k, _ in pairs), tuple(v for _, v in pairs))

    def _approx(self, node: ast.expr) -> tuple | None:
        """``X == pytest.approx(E, rel=..., abs=..., nan_ok=...)`` (either side, or ``!=``) with ``E`` the test's:
        pytest's own decision, made here (``judging.assert_methods.approx_eq``) on the value that crossed."""
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq))):
            return None
        for probe, other in ((node.left, node.comparators[0]), (node.comparators[0], node.left)):
            func = other.func if isinstance(other, ast.Call) else None
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name != "approx" or not 1 <= len(other.args) <= 3 or any(isinstance(a, ast.Starred) for a in other.args):
                continue
            arguments = dict(zip(("expected", "rel", "abs"), other.args, strict=False))
            for keyword in other.keywords:
                if keyword.arg not in ("rel", "abs", "nan_ok") or keyword.arg in arguments:
                    raise Unplannable(f"{short_source(other)}: arguments pytest.approx does not take")
                arguments[keyword.arg] = keyword.value
            if not all(self.env.leaf_free(v) for v in arguments.values()):
                raise Unplannable(f"{short_source(other)}: an expected value the test does not give")
            folded = {k: self.env.fold(v) for k, v in arguments.items()}
            if not _approx_supported(folded["expected"]):
                raise Unplannable(f"{short_source(other)}: pytest.approx of a value not judged here")
            fn = assert_methods.approx_eq if isinstance(node.ops[0], ast.Eq) else assert_methods.approx_ne
            kwargs = tuple((k, ("const", None, v)) for k, v in folded.items() if k != "expected")
            return ("call", fn, (self.build(probe), ("const", None, folded["expected"])), kwargs)
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
        if isinstance(func, ast.Name) and func.id in CONSUMERS and func.id not in DECIDED_HERE and not env.known(func.id):
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

    def _test_object(self, node: ast.expr):
        """What a dotted name of the test's means (``np.testing.assert_allclose``, an imported function), or None."""
        path = []
        while isinstance(node, ast.Attribute):
            path.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        target = self.env.functions.get(node.id) if not path else self.env.module(node.id)
        for part in reversed(path):
            target = getattr(target, part, None)
        return target

    def _decided_here(self, node: ast.Call) -> tuple | None:
        """``all``, ``any``, ``bool``, ``isinstance`` and ``type`` of program values, decided here from the values
        that crossed (never applied in the sandbox, where the program could rebind what applies them); None for
        any other call."""
        func = node.func
        if not (isinstance(func, ast.Name) and func.id in DECIDED_HERE and not self.env.known(func.id)):
            return None
        name, args = func.id, node.args
        if node.keywords or any(isinstance(a, ast.Starred) for a in args) or len(args) != DECIDED_HERE[name]:
            raise Unplannable(f"{short_source(node)}: not the arguments {name}() takes")
        if name in ("all", "any"):
            return self._all_any(name, args[0])
        if name == "bool":
            return ("truth", self.build(args[0]))
        if name == "type":
            return ("type", self.build(args[0]))
        if self.env.leaf_free(args[1]):
            return ("isinstance", self.build(args[0]), ("const", None, self.env.fold_classes(args[1])))
        # a class of the program's: what crosses is the names of the value's class and its ancestors, and of the
        # class asked for (an abstract class, which decides membership itself, makes the test weak)
        specs = [self._consumer(a) or ["e", ast.unparse(self._sent(a))] for a in args]
        self.leaves.append(Leaf(ast.unparse(self._sent(node)), consumed=("k", *specs)))
        return ("kinstance", ("leaf", len(self.leaves) - 1))

    def _all_any(self, name: str, arg: ast.expr) -> tuple:
        """``all``/``any`` over: a generator (its elements evaluated here one by one, stopping where Python stops), a
        list (every element first), ``map`` of a function over values the test gives (one call each), or an
        iterable value of the program's (its elements cross; their number is then the program's)."""
        if isinstance(arg, (ast.GeneratorExp, ast.ListComp, ast.SetComp)):
            how = "lazy" if isinstance(arg, ast.GeneratorExp) else "eager"
            return ("allany", name, how, tuple(self._comprehension(arg)))
        if isinstance(arg, (ast.List, ast.Tuple, ast.Set)) and not any(isinstance(e, ast.Starred) for e in arg.elts):
            return ("allany", name, "eager", tuple(self.build(e) for e in arg.elts))
        mapped = self._mapped(arg)
        if mapped is not None:
            return ("allany", name, "lazy", mapped)
        spec = self._consumer(arg)
        if spec is None and self.env.program_rooted(arg):
            spec = ["e", ast.unparse(self._sent(arg))]
        if spec is not None:  # the program's own iterable: its elements cross, as a list
            self.leaves.append(Leaf(ast.unparse(self._sent(arg)), consumed=("c", "list", [spec], [])))
            return ("allany", name, "iter", (("leaf", len(self.leaves) - 1),))
        return ("allany", name, "iter", (self.build(arg),))

    def _mapped(self, node: ast.expr) -> tuple | None:
        """``map(F, XS, ...)`` with each ``XS`` given by the test: the tree of each call ``F(x, ...)`` (``F`` a name
        or a lambda of the test's), so the parent knows how many there are; None for anything else."""
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "map"
                and not self.env.known("map") and len(node.args) >= 2 and not node.keywords):
            return None
        if not all(self.env.leaf_free(a) for a in node.args[1:]) or self.env.leaf_free(node.args[0]):
            return None
        columns = [self.env.fold(ast.Call(ast.Name("list", ast.Load()), [a], [])) for a in node.args[1:]]
        rows = list(zip(*columns, strict=False))
        if len(rows) > MAX_UNROLL:
            raise Unplannable(f"{short_source(node)}: more than {MAX_UNROLL} calls")
        fn = node.args[0]
        if isinstance(fn, ast.Lambda):
            params = [a.arg for a in fn.args.args]
            if fn.args.vararg or fn.args.kwonlyargs or fn.args.kwarg or fn.args.defaults or len(params) != len(columns):
                raise Unplannable(f"{short_source(fn)}: a lambda with other than plain parameters")
            return tuple(self._bound(fn.body, dict(zip(params, row, strict=True))) for row in rows)
        return tuple(self.build(ast.Call(fn, [_literal(v) for v in row], []))
                     for row in rows)

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> list:
        """The element trees of a comprehension over values the test gives (its conditions the test's too), one per
        element, in order: each evaluated here as Python would (a dict comprehension: (key, value) pairs)."""
        out: list = []

        def walk(generators: list, bindings: dict) -> None:
            if not generators:
                if isinstance(node, ast.DictComp):
                    out.append((self._bound(node.key, bindings), self._bound(node.value, bindings)))
                else:
                    out.append(self._bound(node.elt, bindings))
                return
            gen = generators[0]
            env = self._env_with(bindings)
            if gen.is_async or not env.leaf_free(gen.iter):
                raise Unplannable(f"{short_source(node)} loops over values the test does not give")
            values = env.fold(ast.Call(ast.Name("list", ast.Load()), [gen.iter], []))
            if len(out) + len(values) > MAX_UNROLL:
                raise Unplannable(f"{short_source(node)}: more than {MAX_UNROLL} elements")
            for value in values:
                inner = dict(bindings)
                _unpack(gen.target, value, inner)
                if all(self._env_with(inner).fold(cond) for cond in gen.ifs):
                    walk(generators[1:], inner)

        walk(list(node.generators), {})
        return out

    def _env_with(self, bindings: dict) -> Env:
        env = self.env.copy()
        for name, value in bindings.items():
            env.mark_helper(name)
            env.helpers.discard(name)
            env.consts[name] = value
        return env

    def _bound(self, node: ast.expr, bindings: dict) -> tuple:
        """``node`` built with the comprehension or lambda variables ``bindings`` known as the test's values."""
        saved = self.env
        self.env = self._env_with(bindings)
        try:
            return self.build(node)
        finally:
            self.env = saved

    def _argument(self, node: ast.expr) -> tuple:
        """An argument of a built-in or method the parent applies: a generator over the test's values is its
        elements' trees (an iterator of them here, as ``sum``, ``sorted`` or ``' '.join`` take it)."""
        if isinstance(node, ast.GeneratorExp):
            return ("display", "iter", tuple(self._comprehension(node)))
        return self.build(node)

    def _call(self, node: ast.Call) -> tuple:
        env, func = self.env, node.func
        decided = self._decided_here(node)
        if decided is not None:
            return decided
        consumed = self._consumer(node)
        if consumed is not None:
            self.leaves.append(Leaf(ast.unparse(self._sent(node)), consumed=consumed))
            return ("leaf", len(self.leaves) - 1)
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise Unplannable(f"{short_source(node)}: starred arguments")
        fn = None
        if isinstance(func, ast.Name) and func.id.startswith(SEMANTICS_PREFIX):  # a unittest method's own decision
            fn = getattr(assert_methods, func.id[len(SEMANTICS_PREFIX):])
        elif isinstance(func, ast.Name) and func.id in FUNCTIONS and not env.known(func.id):
            fn = FUNCTIONS[func.id]
        elif isinstance(func, ast.Name) and func.id in env.functions and func.id in MATH:
            fn = MATH[func.id] if env.functions[func.id] is getattr(math, func.id, None) else None
        elif isinstance(func, ast.Attribute) and env.module_of(func.value) is math and func.attr in MATH:
            fn = MATH[func.attr]
        else:
            fn = numpy_ops.resolve(self._test_object(func))
        if fn is not None:
            args = tuple(self._argument(a) for a in node.args)
            kwargs = tuple((k.arg, ("const", None, env.fold(k.value))) for k in node.keywords)
            if fn in _COMPARERS and len(args) >= 2 and all(leaf_indices(a) for a in args[:2]):
                raise Unplannable(f"{short_source(node)} compares two values of the program")
            return ("call", fn, args, kwargs)
        if isinstance(func, ast.Attribute) and func.attr in numpy_ops.METHODS and not env.program_rooted(func.value) \
                and func.attr not in METHOD_NAMES and not node.keywords:  # ``(f(x) == e).all()``: an array's method
            return ("method", self.build(func.value), func.attr, tuple(self.build(a) for a in node.args))
        if isinstance(func, ast.Attribute) and func.attr in METHOD_NAMES and env.module_of(func.value) is None:
            if node.keywords:
                raise Unplannable(f"{short_source(node)}: keyword arguments of a method")
            if env.program_rooted(func.value):  # the program's value: its method is called in the sandbox too
                args = tuple(env.fold(a) for a in node.args)
                receiver = self.leaf(func.value)[1]
                self.leaves.append(Leaf(f"{self.leaves[receiver].source}.{func.attr}(...)", receiver, func.attr,
                                        literal_source(args), args))
                return ("leaf", len(self.leaves) - 1)
            return ("method", self.build(func.value), func.attr, tuple(self._argument(a) for a in node.args))
        if env.program_rooted(node):
            return self.leaf(node)
        raise Unplannable(f"{short_source(func)}() is not judged in the parent (it runs in the sandbox)")


# The node types ``_Builder.build`` turns into parent-side trees, each with its builder (node types are distinct:
# at most one row matches a node).
_SHAPES = ((ast.Compare, _Builder._compare), (ast.BoolOp, _Builder._bool), (ast.UnaryOp, _Builder._unary),
           (ast.BinOp, _Builder._binary), (ast.IfExp, _Builder._if), (ast.Subscript, _Builder._subscript),
           (ast.Slice, _Builder._slice), ((ast.List, ast.Tuple, ast.Set), _Builder._display),
           (ast.Dict, _Builder._dict), ((ast.ListComp, ast.SetComp), _Builder._list_comp),
           (ast.DictComp, _Builder._dict_comp))
def _approx_supported(expected) -> bool:
    """A number (``Decimal`` too), or a flat list, tuple or dict of them (or of other plain values, compared by ``==``
    as pytest does)."""
    flat = expected.values() if isinstance(expected, dict) else expected if isinstance(expected, (list, tuple)) else None
    if flat is None:
        return not isinstance(expected, (set, frozenset, str, bytes))
    return not any(isinstance(x, (list, tuple, dict, set, frozenset)) for x in flat)


# Functions comparing their first two arguments: comparing the program with itself is no test.
_COMPARERS = frozenset({isclose_number, numpy_ops.array_equal, numpy_ops.array_equiv, numpy_ops.allclose,
                        numpy_ops.isclose, numpy_ops.assert_array_equal, numpy_ops.assert_equal,
                        numpy_ops.assert_allclose, numpy_ops.assert_almost_equal, numpy_ops.assert_array_almost_equal,
                        *(getattr(assert_methods, n) for n in ("sequence_equal", "list_equal", "tuple_equal",
                                                               "dict_equal", "set_equal", "multiline_equal",
                                                               "count_equal", "almost_equal", "not_almost_equal"))})


# Built-ins of a test decided here from the values that crossed, with the number of arguments they take.
DECIDED_HERE = {"all": 1, "any": 1, "bool": 1, "type": 1, "isinstance": 2}


def _literal(value) -> ast.expr:
    return ast.parse(literal_source(value), mode="eval").body


def _unpack(target: ast.expr, value, bindings: dict) -> None:
    """Bind a loop target (a name, or nested tuples of names) to ``value`` as Python would."""
    if isinstance(target, ast.Name):
        bindings[target.id] = value
        return
    if isinstance(target, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in target.elts):
        try:
            items = list(value)
        except TypeError as e:
            raise Unplannable(f"cannot unpack {short_repr(value, 40)}") from e
        if len(items) != len(target.elts):
            raise Unplannable(f"cannot unpack {short_repr(value, 40)} into {len(target.elts)} names")
        for element, item in zip(target.elts, items, strict=True):
            _unpack(element, item, bindings)
        return
    raise Unplannable(f"{ast.unparse(target)}: a loop target other than names")


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
