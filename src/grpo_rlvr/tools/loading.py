"""The brief's tools, imported and checked at the edge, and what the review binds them by.

A function must have type hints and a Google-style docstring (transformers turns them into the JSON schema the
model is shown; TRL refuses a tool without them only once the trainer is built). An environment class must define
``reset`` (TRL calls ``reset(**row)`` at every rollout), and its public methods are its tools, held to the same rule;
its ``state`` property gives what rewards read of it (JSON-able: each stored trajectory keeps it, so the gate can
re-score); a ``get_reward`` is refused, since TRL would add it as a reward nobody reviewed.
Every file of the tools' code is recorded by its bytes (``record``), as a user reward's is, so the gate can see an
edit before it imports anything.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from pathlib import Path

from grpo_rlvr.errors import ConfigError, RewardError

PYTHON_DEFAULTS = {"timeout_s": 5.0, "memory_mb": 512}


@dataclass
class LoadedTools:
    functions: list = field(default_factory=list)   # (ref, function)
    environment: tuple | None = None                 # (ref, class)
    python: dict | None = None                       # the python tool's limits
    call_timeout_s: float | None = 30.0
    record: dict = field(default_factory=dict)       # what the manifest binds: spec, fingerprint, sources


def schema_problem(fn, where: str) -> str | None:
    """Why TRL could not show ``fn`` to the model as a tool (its JSON schema cannot be made), or None."""
    from transformers.utils import get_json_schema

    try:
        get_json_schema(fn)
    except Exception as e:  # noqa: BLE001 - transformers raises TypeError or its own DocstringParsingException
        return (f"{where}: {fn.__name__} cannot be shown to the model as a tool: {e}; give every argument a type "
                "hint and the function a Google-style docstring with an Args: section describing each argument")
    return None


def environment_methods(cls) -> list:
    """The tools an environment class offers, as TRL reads them: its public functions but reset and get_reward."""
    return [fn for name, fn in inspect.getmembers(cls, predicate=inspect.isfunction)
            if not name.startswith("_") and name not in ("reset", "get_reward")]


def load_tools(spec: dict, base_dir: Path) -> LoadedTools:
    """Import and check the tools a ``ToolsSpec.to_dict()`` names.

    Raises:
        ConfigError: a tool that cannot be imported, has no usable schema, or an environment without ``reset``;
            every problem, each naming its ``tools.`` field.
    """
    from grpo_rlvr.rewards._reward import source_fingerprint
    from grpo_rlvr.rewards.user import _load, code_record

    problems, out = [], LoadedTools(call_timeout_s=spec.get("call_timeout_s"))
    imports, sources = {}, {}
    for i, ref in enumerate(spec.get("functions") or ()):
        where = f"tools.functions[{i}] {ref!r}"
        try:
            module, fn = _load(ref, base_dir, what="tool", default="")
        except RewardError as e:
            problems.append(f"tools.functions[{i}]: {e}")
            continue
        if inspect.isclass(fn) or not callable(fn):
            problems.append(f"{where}: not a function (an environment class goes in tools.environment)")
            continue
        problems.extend(p for p in [schema_problem(fn, where)] if p)
        out.functions.append((ref, fn))
        imp, src = code_record(module, fn, base_dir)
        imports.update(imp)
        sources.update(src)
    ref = spec.get("environment")
    if ref:
        try:
            module, cls = _load(ref, base_dir, what="tool environment", default="")
        except RewardError as e:
            problems.append(f"tools.environment: {e}")
        else:
            if not inspect.isclass(cls) or not callable(getattr(cls, "reset", None)):
                problems.append(f"tools.environment {ref!r}: not a class with a reset(**row) method (TRL resets one "
                                "instance per rollout with the dataset row)")
            elif callable(getattr(cls, "get_reward", None)):
                problems.append(f"tools.environment {ref!r}: defines get_reward(), which TRL would add as a reward the "
                                "review never showed; score the outcome with a reward in rewards: instead (a user "
                                "reward receives environments=, one per completion, and reads each one's state)")
            elif not isinstance(inspect.getattr_static(cls, "state", None), property):
                problems.append(f"tools.environment {ref!r}: has no state property; give it one returning the "
                                "environment's state as JSON-able data (the inspection records it with each "
                                "trajectory, and rewards read it, in training and when the gate re-scores)")
            else:
                methods = environment_methods(cls)
                if not methods:
                    problems.append(f"tools.environment {ref!r}: no public method to offer the model as a tool")
                problems.extend(p for p in (schema_problem(m, f"tools.environment {ref!r}") for m in methods) if p)
                out.environment = (ref, cls)
                imp, src = code_record(module, cls, base_dir)
                imports.update(imp)
                sources.update(src)
    python = spec.get("python")
    if python is not None and python is not False:   # {} or True: the tool with its default limits
        out.python = {**PYTHON_DEFAULTS, **(python if isinstance(python, dict) else {})}
    if problems:
        raise ConfigError(problems)
    objs = [fn for _, fn in out.functions] + ([out.environment[1]] if out.environment else [])
    fingerprint = source_fingerprint(*objs, extra={"spec": spec, "imports": imports}) if objs else \
        source_fingerprint(extra={"spec": spec})
    out.record = {"spec": spec, "fingerprint": fingerprint, "sources": sources}
    return out


__all__ = ["LoadedTools", "PYTHON_DEFAULTS", "environment_methods", "load_tools", "schema_problem"]
