"""Tool-use briefs for tests: the tiny model given a chat template that renders tool calls and tool replies and a
response template that parses a generated call (a stand-in for an instruct model's, which no test can download),
user tools in a ``tools.py`` beside the brief, and an environment class."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from briefs import example_brief_text

TEMPLATE = ("{% for m in messages %}{% if m['role'] == 'system' %}{{ m['content'] }}\n"
            "{% elif m['role'] == 'user' %}<|user|>{{ m['content'] }}"
            "{% elif m['role'] == 'assistant' %}<|assistant|>{{ m['content'] or '' }}"
            "{% for c in m['tool_calls'] or [] %}<call>{{ c['function']['name'] }}:{{ c['function']['arguments'] | tojson }}"
            "</call>{% endfor %}<|eos|>"
            "{% elif m['role'] == 'tool' %}<|user|>=>{{ m['content'] }}{% endif %}{% endfor %}"
            "{% if add_generation_prompt %}<|assistant|>{% endif %}")
RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"}, "start_anchor": "<|assistant|>",
    "fields": {"tool_calls": {"open_pattern": r"<call>(?P<name>[a-z_]+):", "close_pattern": r"</call>", "repeats": True,
                              "content": "json",
                              "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}},
               "content": {"close_pattern": r"<\|eos\|>", "content": "text"}}}

TOOLS_PY = '''
def add(a: int, b: int) -> int:
    """Add two whole numbers.

    Args:
        a: the first number.
        b: the second number.
    """
    return a + b
'''

ENV_PY = '''
class Abacus:
    """An abacus the model adds with; it breaks (outside the model's control) on rows whose answer is even."""

    def reset(self, **row):
        self.total = 0
        if int(row.get("answer", 1)) % 2 == 0:
            raise ConnectionError("the abacus service is down")
        return None

    @property
    def state(self):
        return {"total": self.total}

    def push(self, n: int) -> int:
        """Push a number onto the abacus and read its total.

        Args:
            n: the number to add.
        """
        self.total += n
        return self.total
'''


def tool_model(tiny_model_dir: Path, dest: Path) -> Path:
    """A copy of the tiny model whose tokenizer renders and parses tool calls."""
    from transformers import AutoTokenizer

    shutil.copytree(tiny_model_dir, dest)
    tok = AutoTokenizer.from_pretrained(dest)
    tok.chat_template = TEMPLATE
    tok.response_template = RESPONSE_TEMPLATE
    tok.save_pretrained(dest)
    return dest


def tool_brief(workspace: Path, tiny_model_dir: Path, name: str = "tools.yaml", tools: dict | None = None,
               **sections) -> Path:
    """The demo's brief on the tool model, with ``tools`` (default: the ``add`` function in tools.py)."""
    if not (workspace / "model-tools").exists():
        tool_model(tiny_model_dir, workspace / "model-tools")
    (workspace / "tools.py").write_text(TOOLS_PY)
    (workspace / "envs.py").write_text(ENV_PY)
    data = yaml.safe_load(example_brief_text())
    data["model"] = {"name_or_path": "./model-tools"}
    data["tools"] = tools if tools is not None else {"functions": ["tools.py:add"]}
    for key, value in sections.items():
        data[key] = {**data[key], **value} if isinstance(value, dict) and isinstance(data.get(key), dict) else value
    p = workspace / name
    p.write_text(yaml.safe_dump(data))
    return p
