"""The built-in rewards' reference page, made from the registry: params (from each factory's signature and the
``Args:`` of its docstring), dataset columns and their shapes, reasons, and an example brief entry.

``skills/grpo-rlvr-training/references/rewards.md`` (inside the skill folder, so a skill installed alone has
it; ``references/`` at the repository root links there) is this module's output; a test fails when they differ.
Regenerate with ``python -m grpo_rlvr.rewards.reference > skills/grpo-rlvr-training/references/rewards.md``.
``grpo-rlvr score --reward NAME --list-params`` prints one reward's params (``format_params``).
"""

from __future__ import annotations

import inspect
import json
import re
from dataclasses import dataclass

import yaml

from grpo_rlvr.errors import RewardError


@dataclass(frozen=True)
class Param:
    name: str
    default: object
    meaning: str


def _docstring_args(fn) -> dict[str, str]:
    """``name -> meaning`` from the ``Args:`` section of ``fn``'s docstring (continuation lines joined)."""
    doc = inspect.getdoc(fn) or ""
    m = re.search(r"^Args:\n(.*?)(?=^\S|\Z)", doc, re.S | re.M)
    out: dict[str, str] = {}
    current = None
    for line in (m.group(1) if m else "").splitlines():
        head = re.match(r"^    (\w+): (.*)$", line)
        if head:
            current = head.group(1)
            out[current] = head.group(2).strip()
        elif current and line.strip():
            out[current] += " " + line.strip()
    return out


def params_of(name: str) -> list[Param]:
    """The params of the built-in ``name``, with defaults and meanings.

    Raises:
        RewardError: ``name`` is not a built-in, or a param has no meaning in the factory's docstring.
    """
    from grpo_rlvr.rewards import REGISTRY, factory_params

    entry = REGISTRY.get(name)
    if entry is None:
        raise RewardError(f"--list-params: {name!r} is not a built-in reward; built-ins are {', '.join(REGISTRY)} "
                          "(a user reward's params are its function's keyword arguments)")
    from grpo_rlvr.rewards._inside_tag import ANSWER_READERS, PARAMS

    meanings = _docstring_args(entry.factory)
    out = []
    for p in factory_params(entry):
        if p.name not in meanings:
            raise RewardError(f"reward {name!r}: param {p.name!r} is not described in the factory's docstring")
        out.append(Param(p.name, None if p.default is inspect.Parameter.empty else p.default, meanings[p.name]))
    if name in ANSWER_READERS:  # the params build_reward takes for every answer reader (_inside_tag)
        out += [Param("require_format", True, PARAMS["require_format"]), Param("format", None, PARAMS["format"])]
    return out


def columns_read(name: str, params: dict) -> list[str] | None:
    """The dataset columns the built-in ``name`` reads with ``params``: its ``*_column`` params, defaults filled in
    (for ``length_penalty``, the wrapped reward's). None for a user reward, whose reads are not declared."""
    from grpo_rlvr.rewards import REGISTRY

    if name not in REGISTRY:
        return None
    if name == "length_penalty":
        inner = params.get("reward", "exact_match")
        return columns_read(inner, dict(params.get("reward_params") or {})) if isinstance(inner, str) else None
    return [params.get(p.name, p.default) for p in params_of(name) if p.name.endswith("_column")]


def _show(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def format_params(name: str) -> str:
    """One reward's params as plain text, for ``grpo-rlvr score --list-params``."""
    from grpo_rlvr.rewards import REGISTRY

    lines = [f"{name}: {REGISTRY[name].summary}" if name in REGISTRY else name]
    for p in params_of(name):
        lines.append(f"  {p.name} = {_show(p.default)}")
        lines.append(f"      {p.meaning}")
    for col, shape in REGISTRY[name].columns.items():
        lines.append(f"  column ({col}): {shape}")
    return "\n".join(lines)


def _md(text: str) -> str:
    """Docstring text as Markdown: ``code`` -> `code`; outside code, < and | escaped; one line."""
    parts = re.sub(r"\s*\n\s*", " ", text).replace("``", "`").split("`")
    for i in range(0, len(parts), 2):  # even parts are outside code spans
        parts[i] = parts[i].replace("<", "&lt;").replace("|", "\\|")
    return "`".join(parts)


def _cell(text: str) -> str:
    return _md(text)


def _how(module) -> list[str]:
    """The paragraphs of a module docstring after its title line, as Markdown."""
    doc = inspect.getdoc(module) or ""
    body = doc.split("\n\n", 1)[1] if "\n\n" in doc else ""
    paras = [p for p in re.split(r"\n\s*\n", body) if p.strip() and not p.lstrip().startswith("Run")]
    out = []
    for p in paras:
        if re.match(r"^\s*- ", p):  # a list: one item per line
            out += [f"- {_md(item)}" for item in re.split(r"\n\s*- ", p.strip()[2:])]
        else:
            out.append(_md(p))
        out.append("")
    return out


def render_reference() -> str:
    """The Markdown of the skill's ``references/rewards.md``."""
    from grpo_rlvr.rewards import (
        REGISTRY,
        _answer,
        _answer_shape,
        _inside_tag,
        _json_extract,
        _math_compare,
        _math_text,
        _tool_calls,
    )

    # the private modules whose docstrings state a reward's rules, shown after its own module's
    more = {"exact_match": [_answer], "math": [_answer, _math_text, _answer_shape, _math_compare], "json_schema": [_json_extract],
            "tool_call": [_tool_calls]}
    out = ["# Built-in rewards: params, columns, reasons",
           "",
           "<!-- Generated from the reward registry by `python -m grpo_rlvr.rewards.reference`; do not edit by "
           "hand: tests/rewards/test_reference.py fails when this page and the registry differ. -->",
           "",
           "Each built-in reward is used by name in a brief's `rewards:` list, with optional `params:`, or alone "
           "with `grpo-rlvr score --input FILE.jsonl --reward NAME --option KEY=VALUE`. "
           "`grpo-rlvr score --reward NAME --list-params` prints the same params as below. "
           "Dataset columns are mapped under `dataset.columns` in the brief (`answer: solution`). "
           "Column values that are objects are best stored as JSON strings: a dict column loaded through "
           "`datasets` (Arrow) gets every row's keys, missing ones as null. "
           "How to write your own reward is in [reward-functions.md](reward-functions.md).",
           ""]
    out += [f"- [`{name}`](#{name})" for name in REGISTRY]
    out += ["", "## Correctness reads inside the format's tag", ""] + _how(_inside_tag)
    for name, entry in REGISTRY.items():
        out += ["", f"## {name}", "", _md(entry.summary[:1].upper() + entry.summary[1:]) + ".", ""]
        for module in [inspect.getmodule(entry.factory), *more.get(name, [])]:
            out += _how(module)
        out += ["| param | default | meaning |", "|---|---|---|"]
        for p in params_of(name):
            out.append(f"| `{p.name}` | `{_cell(_show(p.default))}` | {_cell(p.meaning)} |")
        out.append("")
        if entry.columns:
            out.append("Columns:")
            out.append("")
            for col, shape in entry.columns.items():
                default = next(p.default for p in params_of(name) if p.name == col)
                out.append(f"- `{col}` (default `{default}`): {shape}")
            out.append("")
        else:
            out += ["Columns: none.", ""]
        out.append("Reasons (`{…}` marks the parts that vary):")
        out.append("")
        out += [f"- `{r}`" if "`" not in r else f"- {r}" for r in entry.reasons]
        brief = {"rewards": [{"name": name, "weight": 1.0, "params": entry.example}]}
        out += ["", "Example brief entry:", "", "```yaml",
                yaml.safe_dump(brief, sort_keys=False, allow_unicode=True).rstrip(), "```"]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(render_reference(), end="")
