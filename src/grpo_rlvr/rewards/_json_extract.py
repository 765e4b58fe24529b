"""Find the JSON a completion means (for ``json_schema`` and ``tool_call``); check ground-truth schemas.

Where the JSON is looked for, in order: fenced blocks (```` ```json ```` first, then any fence whose content
starts with ``{`` or ``[``; an unclosed fence runs to the end of the text), else the first balanced ``{…}`` or
``[…]`` in the prose that parses (brace matching skips JSON strings, so ``"}"`` inside a string does not
close; an unclosed span runs to the end). A span that does not parse is skipped whole, never searched inside:
a truncated ``{"a": {"b": 1}`` does not parse, rather than counting as ``{"b": 1}``. When a fenced candidate
exists, the prose is not searched: the fence is where the model put its answer. Limits: at most
``MAX_CANDIDATES`` prose spans are tried; the first parsing one wins, so prose like "see [1]" before the real
object is taken as the JSON, and a stray unclosed ``{`` before it hides it. What was found also records the
object keys given twice (``duplicates``: consumers disagree on which value wins) and the text after the JSON or
its closing fence (``trailing``), for the rewards to judge. JSON is read as RFC 8259 has it: ``NaN``,
``Infinity`` and a number too large for a float (``1e999``) do not parse (Python's reader would accept them,
and a NaN passes every ``minimum``/``maximum`` of a schema). JSON nested deeper than ``MAX_DEPTH`` arrays
and objects is refused before it is parsed (counted here, not left to the parser's recursion limit, which differs
between Python versions: 3.13 parses 5,000 nested arrays). Fences are found in one pass, so a run of thousands
of backticks is read in linear time.
"""
from __future__ import annotations

import bisect
import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache

from grpo_rlvr.errors import RewardError

MAX_CANDIDATES = 32
MAX_DEPTH = 100  # arrays and objects inside each other; deeper JSON is refused before parsing (any Python)

# A fenced block: ```lang ...``` (the closing fence may be missing in a truncated completion); see ``_fences``.
_LANG = re.compile(r"[ \t]*([A-Za-z0-9_+.-]*)")
# Tokens that matter for bracket matching: a whole JSON string (escapes included), or a bracket.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_OPENER = re.compile(r"[\[{]")
_CLOSER = {"{": "}", "[": "]"}


@dataclass(frozen=True)
class FoundJson:
    """What ``extract_json`` found: ``ok`` with the parsed ``value``, or a ``problem`` to use as a reason."""

    ok: bool
    value: object = None
    problem: str = ""
    where: str = ""  # "```json block", "fenced block", "text"
    duplicates: tuple[str, ...] = ()  # object keys given more than once, in order of appearance
    trailing: str = ""  # the stripped text after the JSON (after its closing fence when fenced)


def short(value: object, n: int = 40) -> str:
    """``value`` as compact text cut to ``n`` characters, for reasons."""
    s = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    s = re.sub(r"\s+", " ", s)
    return s if len(s) <= n else s[: n - 1] + "…"


def parse_json(text: str, duplicates: list[str] | None = None) -> tuple[bool, object]:
    """``(True, value)`` or ``(False, problem)``; never raises (deep nesting, huge integers included).

    Keys that an object gives twice are appended to ``duplicates`` when a list is passed (the value keeps the
    last, as ``json.loads`` does).
    """
    def pairs(items: list[tuple[str, object]]) -> dict:
        out = dict(items)
        if duplicates is not None and len(out) < len(items):
            seen: set[str] = set()
            duplicates.extend(k for k, _ in items if k in seen or seen.add(k))
        return out

    depth = nesting_depth(text)
    if depth > MAX_DEPTH:
        return False, f"JSON does not parse: it nests arrays and objects deeper than {MAX_DEPTH} levels"
    try:
        return True, json.loads(text, object_pairs_hook=pairs, parse_constant=_not_json, parse_float=_finite)
    except json.JSONDecodeError as e:
        return False, f"JSON does not parse: {e.msg} at line {e.lineno} col {e.colno}"
    except (ValueError, RecursionError) as e:  # int digit limit (nesting is bounded above, on every Python)
        return False, f"JSON does not parse: {short(str(e) or type(e).__name__, 80)}"


def nesting_depth(text: str) -> int:
    """How deep ``[`` and ``{`` nest in ``text`` (brackets inside JSON strings do not count); stops counting once
    past ``MAX_DEPTH``. Linear in the text, no recursion."""
    depth = deepest = 0
    for m in _TOKEN.finditer(text):
        tok = m.group()
        if tok[0] == '"':
            continue
        if tok in _CLOSER:
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_DEPTH:
                    break
        elif depth:
            depth -= 1
    return deepest


def _not_json(name: str) -> object:
    raise ValueError(f"{name} is not a JSON value")


def _finite(digits: str) -> float:
    x = float(digits)
    if not math.isfinite(x):
        raise ValueError(f"the number {digits[:24]} is too large for a float")
    return x


def _fences(text: str) -> list[tuple[str, str, int]]:
    """Every fenced block, in one pass: (language, stripped body, end of its closing fence or of the text). A
    fence opens with a run of three backticks, a language word and a line break; the first ``` after the line
    break closes it (none: it runs to the end)."""
    newlines = [m.start() for m in re.finditer("\n", text)]
    out = []
    pos = 0
    while (start := text.find("```", pos)) >= 0:
        k = bisect.bisect_left(newlines, start)
        if k == len(newlines):
            break  # no line break after this opener, nor after any later one
        eol = newlines[k]
        lang = _LANG.match(text, start + 3, eol).group(1).lower()
        close = text.find("```", eol + 1)
        end = len(text) if close < 0 else close + 3
        out.append((lang, text[eol + 1:len(text) if close < 0 else close].strip(), end))
        pos = end
    return out


def _span(text: str, start: int) -> str:
    """The text from the bracket at ``start`` to its match (string-aware), or to the end when unbalanced."""
    stack: list[str] = []
    for m in _TOKEN.finditer(text, start):
        tok = m.group()
        if tok[0] == '"':
            continue
        if tok in _CLOSER:
            stack.append(_CLOSER[tok])
        elif not stack or tok != stack.pop():
            return text[start:m.end()]  # a mismatched closer: the span is malformed, let the parser say where
        if not stack:
            return text[start:m.end()]
    return text[start:]


def _from_prose(text: str, every: bool) -> list[FoundJson]:
    problem = ""
    longest = -1
    tried = 0
    pos = 0
    found: list[FoundJson] = []
    while tried < MAX_CANDIDATES:
        m = _OPENER.search(text, pos)
        if m is None:
            break
        tried += 1
        span = _span(text, m.start())
        dupes: list[str] = []
        ok, got = parse_json(span, dupes)
        if ok:
            found.append(FoundJson(True, got, where="text", duplicates=tuple(dupes),
                                   trailing=text[m.start() + len(span):].strip()))
            if not every:
                break
        # Report the problem of the longest candidate: that is most likely the JSON the model meant.
        elif len(span) > longest:
            longest, problem = len(span), str(got)
        # Go on after the span, not inside it: '{"a": {"b": 1}' must not be scored as '{"b": 1}'.
        pos = m.start() + len(span)
    return found or [FoundJson(False, problem=problem or "no JSON found")]


def extract_json_values(text: str, every: bool = True) -> list[FoundJson]:
    """Every JSON value a completion gives, where ``extract_json`` looks (fences, else the prose), in that
    order; or one not-``ok`` ``FoundJson`` with the problem when none parses. At most ``MAX_CANDIDATES`` spans."""
    fences = _fences(text)
    candidates = [(b, "```json block", end) for lang, b, end in fences if lang == "json"]
    candidates += [(b, "fenced block", end) for lang, b, end in fences if lang != "json" and b[:1] in ("{", "[")]
    problem = ""
    found: list[FoundJson] = []
    for body, where, end in candidates[:MAX_CANDIDATES]:
        dupes: list[str] = []
        ok, got = parse_json(body, dupes)
        if ok:
            found.append(FoundJson(True, got, where=where, duplicates=tuple(dupes), trailing=text[end:].strip()))
            if not every:
                break
        else:
            problem = problem or f"{got} (in the {where})"
    if found:
        return found
    if problem:
        return [FoundJson(False, problem=problem)]
    return _from_prose(text, every)


def extract_json(text: str) -> FoundJson:
    """The JSON value a completion gives (see the module docstring for where it is looked for)."""
    return extract_json_values(text, every=False)[0]


# --- ground truth -----------------------------------------------------------------------------------------

def load_json_column(value: object, reward: str, column: str) -> object:
    """A ground-truth value given as a dict/list/bool, or as a JSON string. Bad data raise RewardError."""
    if isinstance(value, str):
        ok, got = parse_json(value)
        if not ok:
            raise RewardError(f"reward {reward!r}: the dataset column {column!r} holds text that is not JSON "
                              f"({got}): {short(value)!r}; store a JSON object there")
        return got
    return value


def canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


@lru_cache(maxsize=4096)
def _validator(schema_json: str):
    from jsonschema import SchemaError
    from jsonschema.validators import validator_for

    schema = json.loads(schema_json)
    cls = validator_for(schema)
    try:
        cls.check_schema(schema)
    except SchemaError as e:
        return None, f"at {e.json_path}: {short(e.message, 120)}"
    return cls(schema), ""  # no format_checker: "format" is an annotation only


def schema_validator(schema: object, reward: str, column: str):
    """A jsonschema validator for ``schema``, checked once per distinct schema (cached by canonical JSON).

    Raises:
        RewardError: the schema is not an object/boolean, or not a valid JSON Schema (bad data, not model
            output).
    """
    if not isinstance(schema, (dict, bool)):
        raise RewardError(f"reward {reward!r}: the dataset column {column!r} holds {type(schema).__name__} "
                          f"{short(schema)!r}, not a JSON Schema; store a JSON Schema object there")
    validator, problem = _validator(canonical(schema))
    if validator is None:
        raise RewardError(f"reward {reward!r}: the dataset column {column!r} holds an invalid JSON Schema "
                          f"({problem}): {short(schema, 80)!r}; fix the schema in the dataset")
    return validator


def validation_problem(validator, instance: object, reward: str, column: str) -> str | None:
    """Why ``instance`` is invalid ("at $.age: 'x' is not of type 'integer'"), or None when valid.

    Raises:
        RewardError: the schema has a ``$ref`` that cannot be resolved (bad data, found while validating).
    """
    from jsonschema.exceptions import best_match
    from referencing.exceptions import Unresolvable

    try:
        err = best_match(validator.iter_errors(instance))
    except Unresolvable as e:
        raise RewardError(f"reward {reward!r}: a schema in the dataset column {column!r} has a $ref that "
                          f"cannot be resolved ({short(str(e), 80)}); inline the referenced schema") from None
    except RecursionError:
        return "at $: too deeply nested to validate"
    if err is None:
        return None
    return f"at {err.json_path}: {short(err.message, 100)}"
