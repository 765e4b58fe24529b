"""The brief's tools imported and checked at the edge: a function the model can be shown (type hints, a Google
docstring), an environment with TRL's contract, each problem named by its field; the code recorded by its bytes."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from grpo_rlvr.brief import load_brief
from grpo_rlvr.errors import ConfigError
from grpo_rlvr.tools.loading import load_tools
from paths import CLI
from tool_briefs import tool_brief


def test_a_documented_function_loads_and_its_code_is_recorded(workspace, tiny_model_dir):
    brief = load_brief(tool_brief(workspace, tiny_model_dir))
    assert brief.tools.functions == ("tools.py:add",) and brief.grpo["max_tool_calling_iterations"] == 8
    loaded = load_tools(brief.tools.to_dict(), brief.base_dir)
    assert [fn(2, 3) for _, fn in loaded.functions] == [5]
    assert list(loaded.record["sources"]) == ["tools.py"] and len(loaded.record["fingerprint"]) == 64
    assert brief.origin["max_tool_calling_iterations"] == "tools"


def test_a_tool_the_model_cannot_be_shown_is_refused_naming_the_field(workspace, tiny_model_dir):
    p = tool_brief(workspace, tiny_model_dir)
    (workspace / "tools.py").write_text("def add(a, b):\n    return a + b\n")
    with pytest.raises(ConfigError, match=r"tools.functions\[0\] 'tools.py:add': add cannot be shown to the model"):
        load_brief(p)
    out = subprocess.run([*CLI, "validate", str(p)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 2 and "type hint" in out.stderr and "Traceback" not in out.stderr, out.stderr


@pytest.mark.parametrize("body, says", [
    ("class Abacus:\n    pass\n", "not a class with a reset(**row) method"),
    ("class Abacus:\n    def reset(self, **row):\n        pass\n    def get_reward(self):\n        return 1.0\n",
     "defines get_reward()"),
    ("class Abacus:\n    def reset(self, **row):\n        pass\n    def push(self, n: int) -> int:\n"
     "        '''Push.\n\n        Args:\n            n: a number.\n        '''\n        return n\n", "has no state property"),
])
def test_an_environment_without_trls_contract_is_refused(workspace, tiny_model_dir, body, says):
    p = tool_brief(workspace, tiny_model_dir, tools={"environment": "envs.py:Abacus"})
    (workspace / "envs.py").write_text(body)
    with pytest.raises(ConfigError, match=re.escape(says)):
        load_brief(p)


def test_an_environment_with_the_contract_loads(workspace, tiny_model_dir):
    brief = load_brief(tool_brief(workspace, tiny_model_dir, tools={"environment": "envs.py:Abacus", "python": True}))
    loaded = load_tools(brief.tools.to_dict(), brief.base_dir)
    assert loaded.environment[0] == "envs.py:Abacus" and loaded.python == {"timeout_s": 5.0, "memory_mb": 512}
    assert list(loaded.record["sources"]) == ["envs.py"]


def test_a_tools_section_naming_nothing_is_refused(workspace, tiny_model_dir):
    with pytest.raises(ConfigError, match="tools: names no tool"):
        load_brief(tool_brief(workspace, tiny_model_dir, tools={"call_timeout_s": 3}))


QUIZ_PY = '''
import json
from pathlib import Path


class Quiz:
    """Asks the question its data file holds for the row."""

    def reset(self, **row):
        tasks = json.loads((Path(__file__).parent / "data" / "tasks.json").read_text())
        self.done = False
        return tasks.get(str(row.get("answer")), "")

    @property
    def state(self):
        return {"done": self.done}

    def submit(self, n: int) -> str:
        """Submit an answer.

        Args:
            n: the answer.
        """
        self.done = True
        return "ok"
'''


def test_an_environments_data_file_edited_after_the_review_is_refused(workspace, tiny_model_dir):
    """The environment lives in a folder of its own and reads its questions from a data file there: the file is
    bound by its bytes, so editing it after the review fails the gate before anything is imported."""
    from artifacts import make_artifact
    from grpo_rlvr.errors import GateRefused
    from grpo_rlvr.gate.check import check_gate
    from tool_briefs import tool_brief

    env = workspace / "quiz"
    (env / "data").mkdir(parents=True)
    (env / "quiz.py").write_text(QUIZ_PY)
    (env / "data" / "tasks.json").write_text('{"7": "What is 3+4?"}')
    p = tool_brief(workspace, tiny_model_dir, tools={"environment": "quiz/quiz.py:Quiz"})
    art = make_artifact(p, workspace / "out" / "inspection")
    sources = json.loads((art / "manifest.json").read_text())["tools"]["sources"]
    assert set(sources) == {"quiz/quiz.py", "quiz/data/tasks.json"}
    assert check_gate(art).passed
    (env / "data" / "tasks.json").write_text('{"7": "Spell cat backwards."}')
    with pytest.raises(GateRefused, match=r"tools: their code or their folder's files changed .* quiz/data/tasks.json"):
        check_gate(art)


def test_a_tool_beside_the_brief_binds_its_code_not_the_projects_files(workspace, tiny_model_dir):
    from artifacts import make_artifact
    from tool_briefs import tool_brief

    p = tool_brief(workspace, tiny_model_dir)
    (workspace / "notes.md").write_text("a person's notes, edited at will")
    art = make_artifact(p, workspace / "out" / "inspection")
    assert list(json.loads((art / "manifest.json").read_text())["tools"]["sources"]) == ["tools.py"]


def test_a_tool_folder_too_large_to_bind_is_refused_with_the_fix(tmp_path, monkeypatch):
    from grpo_rlvr.tools import loading

    (tmp_path / "tool.py").write_text("x = 1\n")
    for i in range(5):
        (tmp_path / f"d{i}.bin").write_bytes(b"0" * 10)
    monkeypatch.setattr(loading, "MAX_FOLDER_FILES", 3)
    files, why = loading.folder_files(str(tmp_path / "tool.py"))
    assert files == [] and "into a folder of their own" in why
