"""The demo's code task: write a one-line Python function, scored by the ``unit_tests`` reward in the sandbox.

A prompt is the user turn ``"f(x) = 3x + 1"``; a correct completion is
``"<answer>def f(x):\n    return 3*x + 1</answer>"``: a Python function, with its newline and indentation, inside
the tag. The row's ``tests`` are four asserts (``assert f(2) == 7``), run against the program in the sandbox; the
score is the share passed, so a near miss (``3*x + 2``) earns part of it. The tiny model writes it with the code
alphabet (``tiny_model.CODE_CHARACTERS``: printable ASCII and newline). ``answer`` is the reference expression,
which only the SFT warmup reads.

The oracle that stands in for the human reviewer is independent of the reward code and of the sandbox: it
recomputes the function from the prompt, reads the completion with ``ast`` (a module of ``def f(x): return EXPR``,
docstrings and other constants allowed around it) and evaluates the returned expression itself over numbers
(``+ - * / // % **``, small powers only) at the tests' points. A program outside that shape it judges wrong; one
that the sandbox would pass anyway (``y = 3*x + 1`` then ``return y``) is a disagreement the gate shows.
"""

from __future__ import annotations

import ast
import operator
import random
import re

from grpo_rlvr.demo.tiny_model import CODE_CHARACTERS

NAME = "code"
ORACLE_REVIEWER = "oracle:code-demo"
BRIEF_PACKAGE = "grpo_rlvr.examples.code"
CORRECTNESS = "unit_tests"       # the reward's name, as TRL logs it (rewards/unit_tests/mean)
CHARACTERS = CODE_CHARACTERS     # the tiny model's alphabet for this task
POINTS = (0, 1, 2, 5)            # where the tests evaluate f
# (prompt form, Python form) of f's expression; a in 2..9, b in 1..9
FORMS = (("{a}x + {b}", "{a}*x + {b}"), ("{a}x - {b}", "{a}*x - {b}"), ("x + {b}", "x + {b}"),
         ("{a}x", "{a}*x"), ("{b} - x", "{b} - x"), ("x*x + {b}", "x*x + {b}"))
# Measured (seed 0, 100 held-out prompts, 4 samples each): after 200 steps at smoothing 0.03 the model writes a
# correct function 0.085 of the time at temperature 1 (well-formed 0.51) and 0.815 at 0.5: it knows the task, and
# sampling noise over ~47 tokens spoils most samples, which GRPO sharpens. Smoothing 0.1 over this 100-token
# vocabulary left 0.0025 at temperature 1 (and 1.0 at 0.5): every token went astray too often.
WARMUP = {"steps": 200, "lr": 1e-3, "batch_size": 32, "label_smoothing": 0.03}


def make_rows(n: int, seed: int) -> list[dict]:
    """``n`` rows ``{"prompt": [user message], "tests": [4 asserts], "answer": "3*x + 1"}`` drawn with ``seed``."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        shown, python = rng.choice(FORMS)
        a, b = rng.randint(2, 9), rng.randint(1, 9)
        expr = python.format(a=a, b=b)
        tests = [f"assert f({x}) == {_evaluate(ast.parse(expr, mode='eval').body, 'x', x)}" for x in POINTS]
        rows.append({"prompt": [{"role": "user", "content": f"f(x) = {shown.format(a=a, b=b)}"}], "tests": tests,
                     "answer": expr})
    return rows


def target_completion(answer: str) -> str:
    return f"<answer>def f(x):\n    return {answer}</answer>"


# --- the oracle ---------------------------------------------------------------------------------------------------

_PROMPT = re.compile(r"^f\(x\) = (.+)$")
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
        ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}


class _Unjudged(Exception):
    """The program is outside what the oracle evaluates (it then judges it wrong)."""


def _evaluate(node: ast.AST, arg: str, x: int) -> float:
    """``node`` (an arithmetic expression over the name ``arg`` and numbers) at ``arg = x``, with Python's own
    arithmetic, so ``3.0*x`` compares as the sandbox's ``assert f(1) == 3`` does."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.Name) and node.id == arg:
        return x
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _evaluate(node.operand, arg, x)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        left, right = _evaluate(node.left, arg, x), _evaluate(node.right, arg, x)
        if isinstance(node.op, ast.Pow) and not (0 <= right <= 16 and abs(left) <= 1000):
            raise _Unjudged("a power the oracle does not evaluate")
        try:
            return _OPS[type(node.op)](left, right)
        except (ZeroDivisionError, OverflowError) as e:
            raise _Unjudged(type(e).__name__) from None
    raise _Unjudged(f"{type(node).__name__} in the expression")


def _function(program: str) -> ast.FunctionDef:
    """The last ``def f(one_arg)`` of a module that holds only function definitions and constant expressions."""
    tree = ast.parse(program)
    found = None
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef):
            if stmt.name == "f":
                found = stmt
        elif not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):
            raise _Unjudged(f"{type(stmt).__name__} at module level")
    if found is None or len(found.args.args) != 1 or found.decorator_list or found.args.defaults \
            or found.args.vararg or found.args.kwarg or found.args.kwonlyargs or found.args.posonlyargs:
        raise _Unjudged("no def f(x)")
    return found


def _computes(program: str, truth: ast.AST) -> bool:
    fn = _function(program)
    body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if not body or not isinstance(body[0], ast.Return) or body[0].value is None:
        raise _Unjudged("the function does not start by returning an expression")
    arg = fn.args.args[0].arg
    return all(_evaluate(body[0].value, arg, x) == _evaluate(truth, "x", x) for x in POINTS)


def oracle_judgement(prompt_text: str, completion_text: str) -> tuple[bool, bool]:
    """(well_formed, correct) decided without the reward code or the sandbox: one ``<answer>…</answer>`` (after at
    most one ``<think>…</think>``), and inside it a ``def f`` returning what the prompt's function returns."""
    m = _PROMPT.match(prompt_text.strip())
    if m is None:
        raise ValueError(f"not a code-task prompt: {prompt_text!r}")
    truth = ast.parse(_python(m.group(1)), mode="eval").body
    text = completion_text.strip()
    if text.startswith("<think>") and text.count("</think>") == 1 and text.count("<think>") == 1:
        text = text[text.index("</think>") + len("</think>"):].strip()
    well_formed = text.startswith("<answer>") and text.endswith("</answer>") and text.count("<answer>") == 1 \
        and text.count("</answer>") == 1
    if not well_formed:
        return False, False
    try:
        return True, _computes(text[len("<answer>"):-len("</answer>")], truth)
    except (SyntaxError, ValueError, _Unjudged, RecursionError, MemoryError):
        return True, False


def _python(shown: str) -> str:
    """The prompt's expression in Python: ``3x`` → ``3*x``."""
    return re.sub(r"(\d)x", r"\1*x", shown)

