"""The plugin's PreToolUse hook run as Claude Code runs it: the command in hooks/hooks.json (``/bin/sh`` and the
launcher) with ``${CLAUDE_PLUGIN_ROOT}`` set, the event as JSON on stdin (session_id, transcript_path, cwd,
hook_event_name, tool_name, tool_input, tool_use_id), the decision in the exit code (2 denies, the reason on
stderr; anything else lets the call run). And a command run as Claude Code would run it once allowed."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from paths import REPO

HOOKS = json.loads((REPO / "hooks" / "hooks.json").read_text())


def hook_command() -> str:
    (entry,) = HOOKS["hooks"]["PreToolUse"]
    (hook,) = entry["hooks"]
    assert hook["type"] == "command"
    return hook["command"]


def hook_env(**extra) -> dict:
    """The environment Claude Code runs the hook in, with this interpreter's folder first on PATH: its
    ``grpo-rlvr`` (or ``python3``) has the parser (tree-sitter-bash), as the plugin's environment does."""
    return {**os.environ, "PATH": f"{os.path.dirname(sys.executable)}:{os.environ.get('PATH', '')}",
            "CLAUDE_PLUGIN_ROOT": str(REPO), **extra}


def call(tool: str, tool_input: dict, cwd: str = "/home/u/project", **env) -> subprocess.CompletedProcess:
    event = {"session_id": "abc123", "transcript_path": "/tmp/t.jsonl", "cwd": cwd,
             "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": tool,
             "tool_input": tool_input, "tool_use_id": "toolu_01"}
    return subprocess.run(["bash", "-c", hook_command()], input=json.dumps(event), capture_output=True, text=True,
                          env=hook_env(**env), timeout=30)


def bash(command: str, cwd: Path, **env) -> subprocess.CompletedProcess:
    """``command`` run for real, as Claude Code's Bash tool runs an allowed call."""
    return subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env})


def digest(path: Path) -> str:
    """The content of a file, or of every file below a folder (names and bytes), or that it is missing."""
    if path.is_symlink():
        return "link:" + os.readlink(path)
    if path.is_file():
        return hashlib.sha256(path.read_bytes()).hexdigest()
    if path.is_dir():
        h = hashlib.sha256()
        for p in sorted(path.rglob("*")):
            h.update(str(p.relative_to(path)).encode() + b"\0" + (digest(p).encode() if not p.is_dir() else b"d"))
        return h.hexdigest()
    return "missing"


def scratch_project(project: Path) -> Path:
    """A project as the hook meets one: sources, an inspection and a run's lock under a gitignored ``out/``, and a
    git repository when git is here (the fuzz test's and the latency benchmark's)."""
    for sub in ("src", "tests", "data", "out/inspection", "out/run/output"):
        (project / sub).mkdir(parents=True)
    (project / "out" / "inspection" / "manifest.json").write_text('{"format_version": 1, "seal": "x"}')
    (project / "out" / "inspection" / "samples.jsonl").write_text("{}\n")
    (project / "out" / "run" / "brief.lock.json").write_text("{}")
    (project / "src" / "app.py").write_text("print(1)\n")
    (project / ".gitignore").write_text("out/\n")
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q", str(project)], check=True)
    return project
