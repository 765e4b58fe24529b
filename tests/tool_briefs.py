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


# An environment whose every call takes ``seconds`` (a remote service) and logs when each call started and ended
# (``.format(log=..., seconds=...)``): the concurrency test and benchmarks/bench_tool_concurrency.py read the log.
SLOW_ENV = '''
import json, os, threading, time

LOG = {log!r}


class Slow:
    """An environment whose every call takes a while (a remote service)."""

    def reset(self, **row):
        self.answer = row["answer"]
        self.total = 0
        self.calls = 0
        return None

    @property
    def state(self):
        return {{"total": self.total, "calls": self.calls}}

    def push(self, n: int) -> str:
        """Push a number and read the total.

        Args:
            n: the number to add.
        """
        self.calls += 1
        start = time.monotonic()
        time.sleep({seconds})
        self.total += n
        with open(LOG, "a") as f:
            f.write(json.dumps({{"env": id(self), "answer": self.answer, "seq": self.calls, "start": start,
                                 "end": time.monotonic()}}) + "\\n")
        return f"{{self.answer}}:{{self.total}}"
'''


def calling_model(dest: Path) -> Path:
    """The tiny model with the demo's tool-calling format, warmed (150 SFT steps, about 20 s) to call ``push n=1``
    and then answer, so TRL's tool loop makes real calls."""
    from grpo_rlvr.demo import tiny_model, tool_chat
    from grpo_rlvr.demo.warmup import sft_warmup_chats

    tok = tool_chat.build_tokenizer()
    model = tiny_model.build_model(tok, seed=0)
    call = {"type": "function", "function": {"name": "push", "arguments": {"n": 1}}}
    convs = [[{"role": "user", "content": f"{a}+{a}="}, {"role": "assistant", "content": "", "tool_calls": [call]},
              {"role": "tool", "name": "push", "content": f"{a}:1"}, {"role": "assistant", "content": "<answer>1</answer>"}]
             for a in range(10, 42)]
    sft_warmup_chats(model, tok, convs, steps=150, lr=3e-3, batch_size=16, seed=0)
    tiny_model.save_pretrained(model, tok, dest, {"seed": 0, "kind": "test: calls push"})
    return dest


# The slow environment's rows: "a+a=" for eight numbers (the calling model was warmed on prompts of this shape).
SLOW_ROWS = [{"prompt": [{"role": "user", "content": f"{a}+{a}="}], "answer": str(a)} for a in range(10, 18)]


def slow_env_brief(workspace: Path, model: Path, concurrency: int, seconds: float) -> Path:
    """The tool demo's brief on ``model`` with the slow environment (``SLOW_ENV``, its log ``calls-<concurrency>.jsonl``
    in ``workspace``) at ``tools.concurrency``, and ``SLOW_ROWS`` as its data."""
    import json
    from importlib import resources

    log = workspace / f"calls-{concurrency}.jsonl"
    (workspace / "slowenv.py").write_text(SLOW_ENV.format(log=str(log), seconds=seconds))
    data = yaml.safe_load(resources.files("grpo_rlvr.examples.tool").joinpath("brief.yaml").read_text())
    data["model"] = {"name_or_path": str(model)}
    data["tools"] = {"environment": "slowenv.py:Slow", "concurrency": concurrency}
    (workspace / "data").mkdir(exist_ok=True)
    (workspace / "data" / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in SLOW_ROWS))
    p = workspace / f"brief-{concurrency}.yaml"
    p.write_text(yaml.safe_dump(data))
    return p


def read_calls(workspace: Path, concurrency: int) -> list[dict]:
    """The calls the slow environment logged at ``concurrency`` (none if it was never called)."""
    import json

    log = workspace / f"calls-{concurrency}.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def most_at_once(calls: list[dict]) -> int:
    """The most logged calls that were running at the same moment."""
    now = best = 0
    for _, d in sorted([(c["start"], 1) for c in calls] + [(c["end"], -1) for c in calls]):
        now += d
        best = max(best, now)
    return best
