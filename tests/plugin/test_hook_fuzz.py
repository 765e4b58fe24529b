"""The hook fails closed and decides every command: 2,088 everyday developer commands (``everyday_commands.py``)
and two generated mutations of each, in a project that holds an inspection, each get a decision without an
exception (in process, for speed); a sample of them, and input that is not a tool call, go through the launcher
as Claude Code runs it and come back as exit 0 or 2 with one line. The reader without tree-sitter reads what
tree-sitter reads wherever it reads at all; the hook imports nothing slow for an everyday command; its
functions stay under complexity 25."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from paths import REPO
from plugin.everyday_commands import everyday_commands, mutations
from plugin.hook_calls import hook_command, hook_env, scratch_project

CORPUS = everyday_commands()


@pytest.fixture(scope="module")
def hook_module():
    """The hook's entry point and package, imported here (the path the launcher gives them)."""
    sys.path[:0] = [str(REPO / "hooks")]
    try:
        import guard_review
        from grpo_guard import protected

        yield guard_review, protected
    finally:
        sys.path.remove(str(REPO / "hooks"))


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    return scratch_project(tmp_path_factory.mktemp("fuzz") / "proj")


def _decide(guard_review, command: str, cwd: Path):
    event = {"tool_name": "Bash", "tool_input": {"command": command}, "cwd": str(cwd)}
    return guard_review.decide_raw(json.dumps(event).encode())


def test_every_everyday_command_and_two_mutations_of_each_get_a_decision(hook_module, project, monkeypatch):
    guard_review, protected = hook_module
    monkeypatch.setenv("CLAUDE_PLUGIN_ROOT", str(REPO))
    protected._cache.clear()
    assert len(CORPUS) >= 2000
    rng = random.Random(53)
    mutated = [m for c in CORPUS for m in mutations(c, rng, count=2)]
    assert len(mutated) >= 4000
    crashed, denied = [], []
    for command in CORPUS + mutated:
        try:
            reason = _decide(guard_review, command, project)
        except Exception as e:   # noqa: BLE001 - what is collected here is the failure
            crashed.append((command[:120], repr(e)))
            continue
        assert reason is None or (isinstance(reason, str) and reason), (command, reason)
        if reason and command in CORPUS:
            denied.append(command)
    assert not crashed, crashed[:10]
    # the friction of working beside an inspection: the few denied are run-time deletes in its tree (find .
    # -delete), an archive extracted over it, make install into ~/.local, curl | bash
    assert len(denied) <= 0.02 * len(CORPUS), denied


def test_a_command_naming_too_many_paths_is_denied_saying_why_and_the_disk_is_read_afresh(hook_module, project,
                                                                                        monkeypatch):
    """Each word is resolved on disk once per decision; past the bound a command is denied with how to split it,
    not left to run past the deadline. What one decision learnt is not carried into the next."""
    guard_review, protected = hook_module
    monkeypatch.setenv("CLAUDE_PLUGIN_ROOT", str(REPO))
    from grpo_guard.decision import MAX_NAMES

    words = " ".join(f"f{i}.txt" for i in range(MAX_NAMES + 1))
    reason = _decide(guard_review, f"touch {words}", project)
    assert reason and re.search(r"names \d+ distinct words .* at most \d+ in one command: split it", reason), reason
    fresh = project / "fresh"
    fresh.mkdir()
    try:
        assert _decide(guard_review, "rm -rf fresh", project) is None
        (fresh / "inspection").mkdir()
        (fresh / "inspection" / "manifest.json").write_text('{"format_version": 1, "seal": "x"}')
        assert _decide(guard_review, "rm -rf fresh", project)   # the same words: the tree below is walked again
    finally:
        shutil.rmtree(fresh)


def test_the_launcher_decides_what_claude_code_sends_in_one_line(project):
    rng = random.Random(7)
    sample = rng.sample(CORPUS, 25) + [m for c in rng.sample(CORPUS, 15) for m in mutations(c, rng, count=2)]
    events = [json.dumps({"tool_name": "Bash", "tool_input": {"command": c}, "cwd": str(project)}).encode()
              for c in sample]
    events += [b"", b"null", b"{\xff", b'{"tool_name": 3}', b'{"tool_name": "Bash", "tool_input": {"command": "\\ud800"}}',
               b'{"tool_name": "Bash", "tool_input": {"command": "ls /proc/1/cwd"}, "cwd": "/proc/1/cwd"}',
               b'{"tool_name": "Write", "tool_input": {"file_path": "\\u0000x"}, "cwd": "/"}']
    for raw in events:
        out = subprocess.run(["bash", "-c", hook_command()], input=raw, capture_output=True, env=hook_env(),
                             timeout=30)
        err = out.stderr.decode("utf-8", "replace")
        assert out.returncode in (0, 2) and "Traceback" not in err, (raw[:200], out.returncode, err)
        assert err.count("\n") == (1 if out.returncode == 2 else 0), (raw[:200], err)


def test_a_decision_past_the_deadline_is_a_deny(project):
    event = json.dumps({"tool_name": "Bash", "tool_input": {"command": "ls"}, "cwd": str(project)})
    out = subprocess.run(["bash", "-c", hook_command()], input=event, capture_output=True, text=True, timeout=30,
                         env=hook_env(GRPO_RLVR_HOOK_DEADLINE_S="0.000001"))
    assert out.returncode == 2 and "TimeoutError" in out.stderr, out.stderr


def test_the_reader_without_tree_sitter_reads_what_tree_sitter_reads(hook_module):
    """On every everyday command the subset reader accepts, it gives the same commands, words and redirections."""
    from grpo_guard.bash_reading import read_command
    from grpo_guard.bash_subset import read_subset

    def shape(reading):
        return [(c.words, c.redirects) for c in reading.commands]

    read = 0
    for command in CORPUS:
        subset = read_subset(command, "/tmp")
        if subset.unreadable:
            continue
        read += 1
        full = read_command(command, "/tmp")
        assert shape(subset) == shape(full) and not full.unreadable, command
    assert read >= 0.4 * len(CORPUS), read


SLOW = ("dataclasses", "importlib.resources", "typing", "inspect", "shutil", "tarfile", "zipfile", "subprocess",
        "pathlib", "tempfile", "glob", "tree_sitter", "tree_sitter_bash")


def test_an_everyday_decision_imports_nothing_slow(project):
    """What the hook's 250 ms were (``python -X importtime``): none of it is imported for an everyday command."""
    event = json.dumps({"tool_name": "Bash", "cwd": str(project),
                        "tool_input": {"command": "git status && ls -la src && pytest -q tests 2>&1 | tail -5"}})
    out = subprocess.run([sys.executable, "-X", "importtime", "-I", "-S", str(REPO / "hooks" / "guard_review.py")],
                         input=event, capture_output=True, text=True, env=hook_env(), timeout=30)
    assert out.returncode == 0, out.stderr[-2000:]
    imported = set(re.findall(r"\|\s+([\w.]+)\s*$", out.stderr, re.M))
    assert "tree_sitter._binding" in imported and "grpo_guard.decision" in imported
    assert not imported & set(SLOW), sorted(imported & set(SLOW))


def test_the_hooks_functions_stay_under_complexity_25():
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not os.access(ruff, os.X_OK):
        pytest.skip("ruff is not installed in this environment (the main lane has it)")
    out = subprocess.run([ruff, "check", "--no-cache", "--select", "C901", "--config",
                          "lint.mccabe.max-complexity=24", str(REPO / "hooks")], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout
