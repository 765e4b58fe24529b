"""The plugin's PreToolUse hook, fed the JSON Claude Code sends on stdin (session_id, transcript_path, cwd,
hook_event_name, tool_name, tool_input, tool_use_id), run as Claude Code runs it: the command in
hooks/hooks.json with ${CLAUDE_PLUGIN_ROOT} set. It denies (exit 2, reason on stderr) running `review` and
writing under inspection/; it allows everything else (exit 0)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from conftest import REPO

HOOKS = json.loads((REPO / "hooks" / "hooks.json").read_text())


def hook_command() -> str:
    (entry,) = HOOKS["hooks"]["PreToolUse"]
    (hook,) = entry["hooks"]
    assert hook["type"] == "command"
    return hook["command"]


def call(tool: str, tool_input: dict) -> subprocess.CompletedProcess:
    event = {"session_id": "abc123", "transcript_path": "/tmp/t.jsonl", "cwd": "/home/u/project",
             "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": tool,
             "tool_input": tool_input, "tool_use_id": "toolu_01"}
    return subprocess.run(["bash", "-c", hook_command()], input=json.dumps(event), capture_output=True, text=True,
                          env={**os.environ, "CLAUDE_PLUGIN_ROOT": str(REPO)}, timeout=30)


def test_hooks_json_is_claude_codes_format():
    (entry,) = HOOKS["hooks"]["PreToolUse"]
    assert set(entry["matcher"].split("|")) == {"Bash", "Write", "Edit", "MultiEdit", "NotebookEdit"}
    assert "${CLAUDE_PLUGIN_ROOT}/hooks/guard_review.py" in hook_command()


@pytest.mark.parametrize("command", [
    "grpo-rlvr review runs/x/inspection",
    "grpo-rlvr review runs/x/inspection --reviewer me",
    "grpo-rlvr-plugin review runs/x/inspection",
    "${CLAUDE_PLUGIN_ROOT}/bin/grpo-rlvr-plugin review out/inspection",
    "/home/u/.venv/bin/grpo-rlvr review out/inspection",
    "env grpo-rlvr review out/inspection",
    "env -i PATH=$PATH grpo-rlvr review out/inspection",
    "sh -c 'grpo-rlvr review out/inspection'",
    'bash -lc "cd proj && grpo-rlvr review out/inspection"',
    "python -m grpo_rlvr review out/inspection",
    "python3 -m grpo_rlvr.cli review out/inspection",
    "yes a | grpo-rlvr review out/inspection",
    'script -qc "grpo-rlvr review out/inspection" /dev/null',
    "nohup grpo-rlvr review out/inspection &",
    "echo $(grpo-rlvr review out/inspection)",
    "grpo-rlvr gate out/inspection || grpo-rlvr review out/inspection",
    "R=grpo-rlvr; $R review out/inspection",
    'python -c "from grpo_rlvr.review import review; review(\'out/inspection\')"',
])
def test_running_review_is_denied(command):
    out = call("Bash", {"command": command, "description": "review the samples"})
    assert out.returncode == 2 and "never runs it" in out.stderr, (command, out.stderr)


@pytest.mark.parametrize("tool,tool_input", [
    ("Write", {"file_path": "/home/u/project/runs/a/inspection/samples.jsonl", "content": "{}"}),
    ("Edit", {"file_path": "/home/u/project/out/inspection/manifest.json", "old_string": "a", "new_string": "b"}),
    ("MultiEdit", {"file_path": "/p/out/inspection/samples.jsonl", "edits": [{"old_string": "a", "new_string": "b"}]}),
    ("NotebookEdit", {"notebook_path": "/p/inspection/notes.ipynb", "new_source": "x"}),
    ("Write", {"file_path": "/p/out/inspection.bak-20260101T000000Z/samples.jsonl", "content": ""}),
    ("Edit", {"file_path": "/p/out/run/brief.lock.json", "old_string": "a", "new_string": "b"}),
])
def test_edits_under_inspection_are_denied(tool, tool_input):
    out = call(tool, tool_input)
    assert out.returncode == 2 and "inspection/" in out.stderr, out.stderr


@pytest.mark.parametrize("command", [
    "echo '{}' > out/inspection/samples.jsonl",
    "jq . x.json >> /p/out/inspection/manifest.json",
    "python fix.py 1>out/inspection/samples.jsonl",
    "cp /tmp/forged.jsonl out/inspection/samples.jsonl",
    "cp -t out/inspection /tmp/forged.jsonl",
    "mv /tmp/forged.jsonl out/inspection/samples.jsonl",
    "mv out/inspection /tmp/gone",
    "rm -rf out/inspection",
    "sed -i 's/disagree/agree/' out/inspection/samples.jsonl",
    "perl -pi -e 's/disagree/agree/' out/inspection/samples.jsonl",
    "cat x | tee out/inspection/samples.jsonl",
    "dd if=/tmp/x of=out/inspection/samples.jsonl",
    "sudo truncate -s 0 out/inspection/samples.jsonl",
    "cd out && touch inspection/.review.lock",
])
def test_shell_writes_under_inspection_are_denied(command):
    out = call("Bash", {"command": command})
    assert out.returncode == 2 and "written only by grpo-rlvr itself" in out.stderr, (command, out.stderr)


@pytest.mark.parametrize("tool,tool_input", [
    ("Bash", {"command": "grpo-rlvr gate out/inspection --json"}),
    ("Bash", {"command": "grpo-rlvr-plugin gate runs/review-2/inspection --brief brief.yaml --json"}),
    ("Bash", {"command": "grpo-rlvr-plugin inspect brief.yaml --force --json"}),
    ("Bash", {"command": "grpo-rlvr-plugin train out/run --dry-run --json"}),
    ("Bash", {"command": "cat out/inspection/samples.jsonl | jq .verdict > /tmp/verdicts.json"}),
    ("Bash", {"command": "cp out/inspection/report.html /tmp/report.html"}),
    ("Bash", {"command": "sed -n 1,5p out/inspection/samples.jsonl"}),
    ("Bash", {"command": "echo 'please run grpo-rlvr gate next' && ls out/inspection"}),
    ("Write", {"file_path": "/home/u/project/brief.yaml", "content": "name: x"}),
    ("Edit", {"file_path": "/home/u/project/my_reward.py", "old_string": "a", "new_string": "b"}),
    ("Read", {"file_path": "/home/u/project/out/inspection/samples.jsonl"}),
])
def test_everything_else_is_allowed(tool, tool_input):
    out = call(tool, tool_input)
    assert out.returncode == 0 and out.stdout == "" and out.stderr == "", out.stderr


def test_unparseable_input_is_allowed_not_crashed():
    out = subprocess.run(["bash", "-c", hook_command()], input="not json", capture_output=True, text=True,
                         env={**os.environ, "CLAUDE_PLUGIN_ROOT": str(REPO)}, timeout=30)
    assert out.returncode == 0 and "Traceback" not in out.stderr
