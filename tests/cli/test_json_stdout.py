"""With ``--json`` the command's JSON is all stdout holds, whatever the work it runs prints: Python prints in
this process, a library writing to file descriptor 1, and a child process that inherits it (train's launcher)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from grpo_rlvr.cli.json_stdout import document, json_stdout


def _noisy_work():
    print("* a dashboard logger announcing itself")
    os.write(1, b"a C library writing to fd 1\n")
    subprocess.run([sys.executable, "-c", "print('a launcher child printing')"], check=True)


def test_everything_but_the_document_goes_to_stderr(capfd):
    with json_stdout(True):
        _noisy_work()
        print(json.dumps({"ok": True}), file=document())
    print("after: stdout is stdout again")
    out, err = capfd.readouterr()
    assert out.splitlines() == ['{"ok": true}', "after: stdout is stdout again"]
    for line in ("dashboard logger", "C library", "launcher child"):
        assert line in err


def test_inactive_leaves_stdout_alone(capfd):
    with json_stdout(False):
        _noisy_work()
    out, _ = capfd.readouterr()
    assert out.count("\n") == 3 and document() is sys.stdout


def test_a_stdout_without_a_descriptor_still_gets_only_the_document(capsys):
    """pytest's capsys (or any in-process capture) has no file descriptor: Python prints still move aside."""
    with json_stdout(True):
        print("noise")
        print("{}", file=document())
    out, err = capsys.readouterr()
    assert out == "{}\n" and "noise" in err


def test_the_cli_gives_every_json_command_this_stdout(tmp_path):
    """`python -m grpo_rlvr memory --json`, with the command's work replaced by one that prints in-process and
    from a child (as train's launcher does with a dashboard logger's banner): stdout is one JSON document. This
    is the failure CI found: trackio's banner, printed by the trainer process, ahead of train's JSON."""
    script = tmp_path / "cli.py"
    script.write_text(
        "import subprocess, sys\n"
        "import grpo_rlvr.cli.main\nm = sys.modules['grpo_rlvr.cli.main']\n"
        "def noisy(args):\n"
        "    print('in-process banner')\n"
        "    subprocess.run([sys.executable, '-c', \"print('child banner')\"], check=True)\n"
        "    return m._emit({'ok': True}, args.json, str)\n"
        "m.COMMANDS = tuple((n, noisy if n == 'memory' else f, *rest) for n, f, *rest in m.COMMANDS)\n"
        "sys.exit(m.main(['memory', '--size', '1.5B', '--json']))\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout) == {"ok": True, "exit_code": 0}
    assert "in-process banner" in out.stderr and "child banner" in out.stderr
