"""The brief's tools as the model will be offered them, for ``validate`` to show: each tool's name, where it comes
from and its arguments with their types, read from the JSON schema transformers makes (the one the model sees)."""

from __future__ import annotations

from pathlib import Path

from grpo_rlvr.tools.loading import environment_methods, load_tools


def _arguments(fn) -> dict[str, str]:
    from transformers.utils import get_json_schema

    params = get_json_schema(fn)["function"].get("parameters") or {}
    return {name: str(p.get("type", "any")) for name, p in (params.get("properties") or {}).items()}


def describe_tools(spec: dict, base_dir: Path) -> dict:
    """``{"offered": [{"name", "from", "arguments"}], "environment": {"ref", "state"} or None}`` for a
    ``ToolsSpec.to_dict()`` (its tools import and check as ``load_tools`` does).

    Raises:
        ConfigError: as ``load_tools``.
    """
    loaded = load_tools(spec, Path(base_dir))
    offered = [{"name": fn.__name__, "from": ref, "arguments": _arguments(fn)} for ref, fn in loaded.functions]
    environment = None
    if loaded.environment is not None:
        ref, cls = loaded.environment
        offered += [{"name": m.__name__, "from": f"{ref} (a method; one instance per rollout)",
                     "arguments": _arguments(m)} for m in environment_methods(cls)]
        environment = {"ref": ref, "state": f"{cls.__name__}.state (what rewards read; stored with each trajectory)"}
    if loaded.python is not None:
        from grpo_rlvr.tools.python_tool import python_tool

        limits = ", ".join(f"{k} {v:g}" for k, v in loaded.python.items())
        offered.append({"name": "python", "from": f"built in: the code reward's sandbox ({limits})",
                        "arguments": _arguments(python_tool(**loaded.python))})
    return {"offered": offered, "environment": environment}


def tool_lines(tools: dict) -> list[str]:
    """``validate``'s text for the tools part of its report."""
    lines = [f"  tools        {t['name']}({', '.join(f'{a}: {ty}' for a, ty in t['arguments'].items())})  ← "
             f"{t['from']}" for t in tools.get("offered") or ()]
    if tools.get("environment"):
        lines.append(f"               environment state: {tools['environment']['state']}")
    if tools.get("template"):
        lines.append(f"               chat template: {tools['template']}")
    return lines


__all__ = ["describe_tools", "tool_lines"]
