"""Test-framework assertions written as calls, turned into what the parent judges: ``self.assertEqual(a, b)`` and
every other value-checking ``unittest`` method as an ``assert`` whose condition the parent evaluates
(``judging.assert_methods`` holds unittest's own decisions), and ``pytest.raises``/``self.assertRaises`` (as a
call or a ``with`` block) as an expected exception.

``framework_assert(node)`` returns ``("assert", ast.Assert)``, ``("raises", Raises)``, ``("warns", Raises)`` (a
``with`` block expected to warn) or None (not such a call).
Arguments bind as the method's own signature binds them; a ``msg`` is dropped (it only labels a failure).
Covered: the methods in ``_UNITTEST``, pytest's ``raises`` and ``warns`` (``match``) and unittest's
``assertRaises``/``assertWarns`` (and their ``Regex`` forms). Not covered: ``assertLogs`` and ``with ... as name``
blocks (their code runs in the sandbox: weak).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .numpy_ops import ASSERT_NAMES as NUMPY_ASSERTS

SEMANTICS_PREFIX = "__unittest_"  # names the rewritten asserts call: ``judging.parent_expr`` maps them to functions

_COMPARE = {
    "assertEqual": ast.Eq, "assertEquals": ast.Eq, "failUnlessEqual": ast.Eq,
    "assertNotEqual": ast.NotEq, "assertNotEquals": ast.NotEq, "failIfEqual": ast.NotEq,
    "assertIs": ast.Is, "assertIsNot": ast.IsNot, "assertIn": ast.In, "assertNotIn": ast.NotIn,
    "assertGreater": ast.Gt, "assertGreaterEqual": ast.GtE, "assertLess": ast.Lt, "assertLessEqual": ast.LtE,
}
_FUNCTIONS = {  # method -> (function of judging.assert_methods, its parameters after the two values)
    "assertSequenceEqual": ("sequence_equal", ("msg", "seq_type")),
    "assertListEqual": ("list_equal", ("msg",)), "assertTupleEqual": ("tuple_equal", ("msg",)),
    "assertDictEqual": ("dict_equal", ("msg",)), "assertSetEqual": ("set_equal", ("msg",)),
    "assertMultiLineEqual": ("multiline_equal", ("msg",)), "assertCountEqual": ("count_equal", ("msg",)),
    "assertItemsEqual": ("count_equal", ("msg",)),
    "assertAlmostEqual": ("almost_equal", ("places", "msg", "delta")),
    "assertAlmostEquals": ("almost_equal", ("places", "msg", "delta")),
    "failUnlessAlmostEqual": ("almost_equal", ("places", "msg", "delta")),
    "assertNotAlmostEqual": ("not_almost_equal", ("places", "msg", "delta")),
    "assertNotAlmostEquals": ("not_almost_equal", ("places", "msg", "delta")),
    "failIfAlmostEqual": ("not_almost_equal", ("places", "msg", "delta")),
    "assertRegex": ("regex", ("msg",)), "assertRegexpMatches": ("regex", ("msg",)),
    "assertNotRegex": ("not_regex", ("msg",)), "assertNotRegexpMatches": ("not_regex", ("msg",)),
}
_ONE = {"assertTrue": "truth", "assert_": "truth", "failUnless": "truth", "assertFalse": "not", "failIf": "not",
        "assertIsNone": "none", "assertIsNotNone": "not none"}
_RAISES = {"assertRaises": False, "failUnlessRaises": False, "assertRaisesRegex": True, "assertRaisesRegexp": True}


@dataclass(frozen=True)
class Raises:
    """An expected exception: ``expected`` the test's expression for the class (or tuple of classes), ``match`` a
    pattern its text must contain (or None), and what must raise it: ``call`` (one expression) or ``body`` (the
    statements of a ``with`` block)."""

    expected: ast.expr
    match: ast.expr | None
    call: ast.expr | None = None
    body: tuple[ast.stmt, ...] = ()


def framework_assert(node: ast.stmt):
    """``("assert", ast.Assert)``, ``("raises", Raises)``, or None when ``node`` is no framework assertion."""
    if isinstance(node, ast.With) and len(node.items) == 1 and node.items[0].optional_vars is None:
        raises = _raises_context(node.items[0].context_expr)
        if raises is not None:
            return "raises", Raises(raises[0], raises[1], body=tuple(node.body))
        warns = _warns_context(node.items[0].context_expr)
        if warns is not None:
            return "warns", Raises(warns[0], warns[1], body=tuple(node.body))
        return None
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return None
    call = node.value
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    func = call.func
    if _is_pytest_raises(func):
        return _raises_call(call, regex=False)
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if name in NUMPY_ASSERTS and not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                                       and func.value.id == "self"):  # numpy.testing's: whether it held
        return "assert", ast.fix_missing_locations(ast.copy_location(ast.Assert(test=call), node))
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"):
        return None
    name = func.attr
    if name in _RAISES:
        return _raises_call(call, regex=_RAISES[name])
    test = _unittest_condition(name, call)
    if test is None:
        return None
    return "assert", ast.fix_missing_locations(ast.copy_location(ast.Assert(test=test), node))


def _unittest_condition(name: str, call: ast.Call) -> ast.expr | None:
    if name in _COMPARE:
        bound = _bind(call, ("first", "second", "msg"))
        return bound and ast.Compare(bound["first"], [_COMPARE[name]()], [bound["second"]])
    if name in _ONE:
        bound = _bind(call, ("expr", "msg"))
        if not bound:
            return None
        value, kind = bound["expr"], _ONE[name]
        if kind == "truth":
            return value
        if kind == "not":
            return ast.UnaryOp(ast.Not(), value)
        return ast.Compare(value, [ast.Is() if kind == "none" else ast.IsNot()], [ast.Constant(None)])
    if name in ("assertIsInstance", "assertNotIsInstance"):
        bound = _bind(call, ("obj", "cls", "msg"))
        if not bound:
            return None
        test = ast.Call(ast.Name("isinstance", ast.Load()), [bound["obj"], bound["cls"]], [])
        return test if name == "assertIsInstance" else ast.UnaryOp(ast.Not(), test)
    if name in _FUNCTIONS:
        function, rest = _FUNCTIONS[name]
        bound = _bind(call, ("first", "second", *rest))
        if not bound:
            return None
        keywords = [ast.keyword(k, v) for k, v in bound.items() if k not in ("first", "second", "msg")]
        return ast.Call(ast.Name(SEMANTICS_PREFIX + function, ast.Load()), [bound["first"], bound["second"]], keywords)
    return None


def _bind(call: ast.Call, params: tuple[str, ...]) -> dict | None:
    """The call's arguments by parameter name (None when they do not fit the signature, as Python would refuse)."""
    if len(call.args) > len(params):
        return None
    bound = dict(zip(params, call.args, strict=False))
    for keyword in call.keywords:
        if keyword.arg not in params or keyword.arg in bound:
            return None
        bound[keyword.arg] = keyword.value
    required = params[:2] if len(params) > 2 and params[1] != "msg" else params[:1]
    return bound if all(p in bound for p in required) else None


def _is_pytest_raises(func: ast.expr) -> bool:
    return (isinstance(func, ast.Attribute) and func.attr == "raises" and isinstance(func.value, ast.Name)
            and func.value.id != "self") or (isinstance(func, ast.Name) and func.id == "raises")


def _raises_context(expr: ast.expr):
    """(expected, match) of ``pytest.raises(E, match=...)``, ``self.assertRaises(E)`` or ``self.assertRaisesRegex(E,
    regex)`` used as a context manager; None for any other ``with``."""
    if not isinstance(expr, ast.Call) or any(isinstance(a, ast.Starred) for a in expr.args):
        return None
    func = expr.func
    keywords = {k.arg: k.value for k in expr.keywords}
    if _is_pytest_raises(func) and len(expr.args) == 1 and set(keywords) <= {"match"}:
        return expr.args[0], keywords.get("match")
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self" \
            and func.attr in _RAISES and set(keywords) <= {"msg"}:
        regex = _RAISES[func.attr]
        if len(expr.args) == 1 + regex:
            return expr.args[0], expr.args[1] if regex else None
    return None


def _warns_context(expr: ast.expr):
    """(expected, match) of ``pytest.warns(W, match=...)`` or ``self.assertWarns(W)``/``assertWarnsRegex(W, regex)``."""
    if not isinstance(expr, ast.Call) or any(isinstance(a, ast.Starred) for a in expr.args):
        return None
    func, keywords = expr.func, {k.arg: k.value for k in expr.keywords}
    pytest_warns = (isinstance(func, ast.Attribute) and func.attr == "warns" and isinstance(func.value, ast.Name)
                    and func.value.id != "self") or (isinstance(func, ast.Name) and func.id == "warns")
    if pytest_warns and len(expr.args) == 1 and set(keywords) <= {"match"}:
        return expr.args[0], keywords.get("match")
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self" \
            and func.attr in ("assertWarns", "assertWarnsRegex") and set(keywords) <= {"msg"}:
        regex = func.attr == "assertWarnsRegex"
        if len(expr.args) == 1 + regex:
            return expr.args[0], expr.args[1] if regex else None
    return None


def _raises_call(call: ast.Call, regex: bool):
    """``pytest.raises(E, f, *args, **kwargs)`` / ``self.assertRaises(E, f, ...)`` / ``assertRaisesRegex(E, r, f,
    ...)``: the expected exception and the call ``f(*args, **kwargs)``; None for the context-manager form."""
    args = list(call.args)
    keywords = [k for k in call.keywords if k.arg not in ("match", "msg")]
    match = next((k.value for k in call.keywords if k.arg == "match"), None)
    if len(args) < 2 + regex:
        return None
    expected = args[0]
    if regex:
        match = args[1]
    fn, rest = args[1 + regex], args[2 + regex:]
    return "raises", Raises(expected, match, call=ast.Call(fn, rest, keywords))
