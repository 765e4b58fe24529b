"""Tool calls for ``tool_call``: reading them from a completion, reading the expected ones from the data, and
comparing arguments.

A completion's calls: every ``<tool_call>…</tool_call>`` block (Hermes/Qwen; an unclosed last tag runs to the
end), else every JSON value in fences or the prose (``_json_extract``): bare objects, lists of calls (Mistral,
parallel calls), OpenAI's ``{"type": "function", "function": {...}}`` and ``{"tool_calls": [...]}``, and
Llama's ``{"name": ..., "parameters": {...}}``. A call's arguments may be a JSON string (OpenAI sends them so);
missing arguments are ``{}``. JSON that is not a call (no string ``name``) is passed over. A call object that
gives its arguments twice (both ``arguments`` and ``parameters``) or names two functions (a ``name`` beside a
``function`` object) is ambiguous: consumers read different keys, so it is a call with a problem (never full
credit), whichever key would have been read.

Equality of arguments (``same_value``): objects equal key by key, in any order; lists in order; a string never
equals a number or a boolean ("1" ≠ 1); a boolean never equals a number (true ≠ 1); numbers equal by value, so
1 == 1.0 (JSON has one number type and JSON Schema counts 1.0 as an integer); null equals only null, and a
missing key is not a null one.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from grpo_rlvr.errors import RewardError
from grpo_rlvr.rewards._json_extract import extract_json_values, load_json_column, parse_json, short

_TAG = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)


@dataclass(frozen=True)
class Call:
    """One call: its function name and arguments (``problem`` set when the arguments do not parse)."""

    name: str
    arguments: object
    problem: str = ""
    duplicates: tuple[str, ...] = ()


@dataclass(frozen=True)
class Expected:
    """What the data expects: a schema to validate one call against, or a list of expected calls."""

    calls: tuple[Call, ...] | None  # None: schema mode (any valid call of ``name``)
    name: str = ""  # schema mode: the function to call
    schemas: dict | None = None  # function name -> JSON Schema of its arguments, where the data gives one


# --- a completion's calls ---------------------------------------------------------------------------------

def _unwrap(value: object) -> list[object]:
    """The call objects in a parsed JSON value (a list of calls, a wrapper, or one call)."""
    if isinstance(value, list):
        return [c for v in value for c in _unwrap(v)]
    if isinstance(value, dict):
        if isinstance(value.get("tool_calls"), list) and "name" not in value:
            return _unwrap(value["tool_calls"])
        if "name" not in value and isinstance(value.get("function"), dict):
            return [value["function"]]
        if isinstance(value.get("name"), str):
            return [value]
    return []


def _ambiguous(obj: dict) -> str:
    """Why a completion's call object can be read two ways, or ""."""
    if "arguments" in obj and "parameters" in obj:
        return "gives both arguments and parameters (consumers read different ones)"
    if isinstance(obj.get("function"), dict):
        return "gives both a name and a function object (consumers read different ones)"
    return ""


def _as_call(obj: dict, dupes: tuple[str, ...] = ()) -> Call:
    args = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(args, str):
        more: list[str] = []
        ok, parsed = parse_json(args, more) if args.strip() else (True, {})
        if not ok:
            return Call(obj["name"], args, f"arguments string invalid: {parsed}")
        args, dupes = parsed, dupes + tuple(more)
    return Call(obj["name"], args, duplicates=dupes)


def completion_calls(text: str) -> tuple[list[Call], str]:
    """The calls in ``text`` and, when there are none, why ("no tool call found", a JSON problem)."""
    tags = _TAG.findall(text)
    sources = [found for body in tags for found in extract_json_values(body)] if tags else extract_json_values(text)
    calls: list[Call] = []
    problem = ""
    for found in sources:
        if not found.ok:
            problem = problem or found.problem
            continue
        objs = _unwrap(found.value)
        for o in objs:
            why = _ambiguous(o)
            calls.append(Call(o["name"], o.get("arguments"), why) if why else _as_call(o, found.duplicates))
        if not objs:
            problem = problem or f"no tool call: JSON {short(found.value)} has no \"name\""
    if not calls and (not problem or problem == "no JSON found"):
        problem = "no tool call found"
    return calls, problem


# --- the expected calls -----------------------------------------------------------------------------------

def _shape_error(column: str, value: object) -> RewardError:
    return RewardError(f"reward 'tool_call': the dataset column {column!r} holds {short(value, 80)!r}; store a "
                       'schema {"name", "parameters"}, an expected call {"name", "arguments"}, or a list of '
                       "expected calls there")


def _named(obj: object, column: str) -> dict:
    if isinstance(obj, dict) and "name" not in obj and isinstance(obj.get("function"), dict):
        obj = obj["function"]
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str) or not obj["name"]:
        raise _shape_error(column, obj)
    return obj


def expected_of(value: object, column: str) -> Expected:
    """What the ``tool`` value expects. Bad data raise RewardError naming the column."""
    tool = load_json_column(value, "tool_call", column)
    items = tool if isinstance(tool, list) else [tool]
    objs = [_named(o, column) for o in items]
    if not isinstance(tool, list) and "arguments" not in objs[0]:
        return Expected(None, objs[0]["name"], {objs[0]["name"]: objs[0].get("parameters", {"type": "object"})})
    calls = []
    for o in objs:
        if "arguments" not in o:
            raise _shape_error(column, o)
        call = _as_call(o)
        if call.problem or not isinstance(call.arguments, dict):
            raise RewardError(f"reward 'tool_call': the dataset column {column!r} holds expected call "
                              f"{short(o, 80)!r} whose arguments are not a JSON object; fix the data")
        calls.append(call)
    schemas = {o["name"]: o["parameters"] for o in objs if isinstance(o.get("parameters"), (dict, bool))}
    return Expected(tuple(calls), schemas=schemas)


# --- comparing arguments ----------------------------------------------------------------------------------

def same_value(a: object, b: object) -> bool:
    """JSON equality with strict types (see the module docstring)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) or isinstance(b, (int, float)):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and a == b
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys()
                and all(same_value(a[k], b[k]) for k in a))
    if isinstance(a, list) or isinstance(b, list):
        return (isinstance(a, list) and isinstance(b, list) and len(a) == len(b)
                and all(same_value(x, y) for x, y in zip(a, b, strict=True)))
    return type(a) is type(b) and a == b


def argument_diff(want: dict, got: object) -> tuple[float, str]:
    """(share of matching arguments, what differs) comparing top-level keys over both sides' keys."""
    if not isinstance(got, dict):
        return 0.0, f"arguments are {type(got).__name__}, not an object"
    keys = list(want) + [k for k in got if k not in want]
    if not keys:
        return 1.0, ""
    same = [k for k in keys if k in want and k in got and same_value(want[k], got[k])]
    missing = [k for k in want if k not in got]
    extra = [k for k in got if k not in want]
    wrong = [k for k in want if k in got and k not in same]
    parts = []
    if wrong:
        k = wrong[0]
        parts.append(f"{k}={short(json.dumps(got[k], default=str), 24)} expected "
                     f"{short(json.dumps(want[k], default=str), 24)}")
    if missing:
        parts.append(f"missing {', '.join(missing[:3])}")
    if extra:
        parts.append(f"unexpected {', '.join(extra[:3])}")
    return len(same) / len(keys), "; ".join(parts)
