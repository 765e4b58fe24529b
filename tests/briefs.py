"""Briefs for tests: the shipped arithmetic example as text, and copies of it with sections replaced."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def example_brief_text() -> str:
    return resources.files("grpo_rlvr.examples.arithmetic").joinpath("brief.yaml").read_text()


def write_brief(workspace: Path, name: str, **sections) -> Path:
    """The demo's brief with whole top-level sections replaced (``dataset={...}``), written to ``workspace/name``."""
    import yaml

    data = yaml.safe_load(example_brief_text())
    data.update(sections)
    p = workspace / name
    p.write_text(yaml.safe_dump(data))
    return p


def copy_brief(workspace: Path, text: str, name: str = "brief.yaml") -> Path:
    p = workspace / name
    p.write_text(text)
    return p


def brief_for(workspace: Path, name: str, delta: dict) -> Path:
    """The demo's brief with ``delta`` merged in (mappings key by key, anything else replaced), written to
    ``workspace/<name>.yaml``."""
    import yaml

    data = yaml.safe_load(example_brief_text())
    for k, v in delta.items():
        if isinstance(v, dict) and isinstance(data.get(k), dict):
            data[k] = {**data[k], **v}
        else:
            data[k] = v
    p = workspace / f"{name}.yaml"
    p.write_text(yaml.safe_dump(data))
    return p
