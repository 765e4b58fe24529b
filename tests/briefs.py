"""Briefs for tests: the shipped arithmetic example as text, and copies of it with sections replaced."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

# Tests write synthetic inspections (tests/artifacts.py: completions of every outcome, scored by the real rewards),
# which no model's own rollouts resemble, so the review audit would stop every run trained behind one. The test
# briefs ask the audit to record only, as a brief may; the audit's own tests (tests/audit, the e2e attacks) use briefs
# without this line.
LOOSENED_AUDIT = "audit: {stop_on: never}   # tests: synthetic inspections (tests/briefs.py)\n"


def shipped_example_text() -> str:
    return resources.files("grpo_rlvr.examples.arithmetic").joinpath("brief.yaml").read_text()


def example_brief_text() -> str:
    return shipped_example_text() + LOOSENED_AUDIT


def _example_with(path: Path, sections: dict, merge: bool) -> Path:
    """Write the demo's brief to ``path`` with ``sections`` put in: each replacing its whole top-level section, or
    with ``merge``, mappings updated key by key."""
    import yaml

    data = yaml.safe_load(example_brief_text())
    for k, v in sections.items():
        data[k] = {**data[k], **v} if merge and isinstance(v, dict) and isinstance(data.get(k), dict) else v
    path.write_text(yaml.safe_dump(data))
    return path


def write_brief(workspace: Path, name: str, **sections) -> Path:
    """The demo's brief with whole top-level sections replaced (``dataset={...}``), written to ``workspace/name``."""
    return _example_with(workspace / name, sections, merge=False)


def copy_brief(workspace: Path, text: str, name: str = "brief.yaml") -> Path:
    p = workspace / name
    p.write_text(text)
    return p


def brief_for(workspace: Path, name: str, delta: dict) -> Path:
    """The demo's brief with ``delta`` merged in (mappings key by key, anything else replaced), written to
    ``workspace/<name>.yaml``."""
    return _example_with(workspace / f"{name}.yaml", delta, merge=True)


# A user correctness reward as the red-team tests review it: 1.0 when <answer>N</answer> holds the row's answer.
SUM_REWARD = """\
import re

def reward(completions, answer, **kw):
    out = []
    for c, a in zip(completions, answer):
        m = re.search(r"<answer>(\\d+)</answer>", c if isinstance(c, str) else c[-1]["content"])
        out.append(1.0 if m and m.group(1) == str(a) else 0.0)
    return out
"""
