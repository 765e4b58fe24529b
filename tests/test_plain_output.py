"""Terminal escape codes are taken out of what train.py writes to a file or a pipe, and kept in a terminal."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys

from grpo_rlvr.plain_output import PlainStream

BANNER = '\x1b[1m\x1b[38;5;208mtrackio show --project "p"\x1b[0m\n'


def test_escape_sequences_go_and_the_text_stays():
    out = io.StringIO()
    s = PlainStream(out)
    s.write(BANNER)
    s.write("cut \x1b[3")                         # a sequence split over two writes
    s.write("1mred\x1b[0m and a link \x1b]8;;https://x\x07here\x1b]8;;\x07\n")
    s.write("a lone escape \x1b")                 # never finished: its byte goes, the text stays
    s.flush()
    assert out.getvalue() == 'trackio show --project "p"\ncut red and a link here\na lone escape '


CODE = ("import sys; from grpo_rlvr.plain_output import plain_when_redirected; plain_when_redirected(); "
        f"sys.stdout.write({BANNER!r}); sys.stderr.write({BANNER!r})")


def test_a_file_gets_plain_text_and_a_terminal_keeps_its_colour(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, env=env, check=True)
    assert done.stdout == done.stderr == 'trackio show --project "p"\n'
    pid, fd = pty.fork()
    if pid == 0:   # the child: stdout and stderr are the terminal
        os.execve(sys.executable, [sys.executable, "-c", CODE], env)
    seen = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.waitpid(pid, 0)
    assert seen.count(b"\x1b[38;5;208m") == 2, seen


ORDER = ("import sys; from grpo_rlvr.plain_output import plain_when_redirected; plain_when_redirected(); "
         "print('[train] training'); print('* Trackio project initialized: p'); sys.stderr.write('  step 1/3\\n'); "
         "print('* Created new run: r'); sys.stderr.write('  step 2/3\\n')")


def test_a_log_holding_stdout_and_stderr_keeps_the_order_they_were_written_in(tmp_path):
    """A redirected stdout is block-buffered: trackio's banner (stdout) came out after the demo's later phase and
    step lines (stderr) in a log of both. Redirected, stdout is written a line at a time."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("PYTHONUNBUFFERED", None)
    with (tmp_path / "demo.log").open("w") as log:
        subprocess.run([sys.executable, "-c", ORDER], stdout=log, stderr=subprocess.STDOUT, env=env, check=True)
    assert (tmp_path / "demo.log").read_text() == ("[train] training\n* Trackio project initialized: p\n  step 1/3\n"
                                                   "* Created new run: r\n  step 2/3\n")


def test_library_warnings_print_as_one_line_without_their_source():
    """In a process of its own (pytest shows warnings its own way): a library's warning is one line, with no
    source line under it."""
    import subprocess
    import sys

    code = ("import warnings; from grpo_rlvr.plain_output import one_line_warnings; "
            "one_line_warnings(); warnings.warn(\"GRPOTrainer's tools are experimental and may change\", "
            "UserWarning, stacklevel=1)")
    err = subprocess.run([sys.executable, "-W", "always", "-c", code], capture_output=True, text=True).stderr
    assert err == "warning: UserWarning: GRPOTrainer's tools are experimental and may change\n", err


def test_the_cli_prints_a_library_warning_as_one_line():
    """preflight and inspect build TRL's trainer in the CLI's own process: its warnings print as train.py prints
    them, one line, no source line (a plain user saw `…/rollout_trainer.py:29: UserWarning: …` and the call)."""
    import subprocess
    import sys

    code = ("import sys, warnings; from grpo_rlvr.cli.main import main; code = main(['validate', '/nonexistent.yaml']); "
            "warnings.warn(\"You are using 'environment_factory'\", UserWarning, stacklevel=1); sys.exit(code)")
    err = subprocess.run([sys.executable, "-W", "always", "-c", code], capture_output=True, text=True).stderr
    assert err.endswith("warning: UserWarning: You are using 'environment_factory'\n"), err
