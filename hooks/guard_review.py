#!/usr/bin/env python3
"""PreToolUse hook of the grpo-rlvr plugin: the agent never stands in for the person who reviews.

Claude Code runs ``hooks/guard_review.sh``, which starts this file under a Python that has the hook's parser
(``python -I -S``: no startup hooks, no ``.pth`` files, no user variables), and sends every tool call
(``hooks.json`` matches all of them, MCP tools included) as JSON on stdin: ``tool_name``, ``tool_input``,
``cwd``. The hook denies (exit 2, a one-line reason on stderr, which Claude Code shows to the agent):

- running ``grpo-rlvr review`` in a shell command, however it is reached, or importing ``grpo_rlvr.review``;
- setting a variable that loads code into training (``PYTHONPATH``, ``LD_*``…) or ``GRPO_RLVR_CACHE``;
- writing, editing, moving or deleting a protected path (``grpo_guard/protected.py``: an inspection, a run's
  rendered files and records, startup hooks, every installed library, this plugin and the Python its hook runs
  under, the hash cache, the signed-review policy, the run key's folder with the account's log of inspection draws,
  Claude Code's settings), judged by what each program writes (``grpo_guard/programs.py``), git by what git tracks
  (``grpo_guard/git_writes.py``);
- near a protected path, any program that is not a reader, a writer the hook follows, grpo-rlvr itself or the
  agent's own script (``grpo_guard/readers.py``);
- any tool call, reads included, that names grpo-rlvr's run key or reads a folder above it whole;
- what it cannot read (a target or code made at run time, a value set at run time, a part that does not parse)
  where anything protected is near.

**It fails closed**: input it cannot read, an exception, or a decision that takes longer than ``DEADLINE_S``
(Claude Code cancels a hook at ``hooks.json``'s timeout and then runs the call) is a deny, with its reason on one
line. Everything else is allowed (exit 0, no output).

Limits (docs/threat-model.md's table): a command line is read, not run, so a reader is trusted by its name, a
program the agent writes and runs opens what it likes, a folder above a protected path is found by a walk of at
most a few thousand entries, and what a ``git pull`` fetches in the same command is not known before it runs.
"""

import os
import sys


def _deadline_s() -> float:
    """hooks.json gives the hook 10 s; past them Claude Code cancels it and the call runs. A test may ask for
    less (GRPO_RLVR_HOOK_DEADLINE_S), never for more."""
    try:
        return min(8.0, float(os.environ.get("GRPO_RLVR_HOOK_DEADLINE_S") or 8.0))
    except ValueError:
        return 8.0


DEADLINE_S = _deadline_s()
HERE = os.path.dirname(os.path.abspath(__file__))
PREFIX = "grpo-rlvr plugin: denied. "


def _site_folders() -> list[str]:
    """Where this interpreter's packages live, found as ``site`` would (the hook runs under ``-S``, which skips
    it, and so every ``.pth`` file): a virtual environment's own site-packages (the folder above its ``bin``
    holds ``pyvenv.cfg``; the system's too when that file says so); else the interpreter's, the user's
    (``pip install --user``) and Debian's dist-packages."""
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    venv = os.path.dirname(os.path.dirname(os.path.abspath(sys.executable or "")))
    system = [os.path.join(b, "lib", version, "site-packages") for b in dict.fromkeys((sys.base_prefix, sys.prefix))]
    system += [os.path.join(os.path.expanduser("~"), ".local", "lib", version, "site-packages")]
    system += [os.path.join(b, "lib", name, "dist-packages") for b in ("/usr/local", "/usr") for name in (version,
                                                                                                          "python3")]
    try:
        with open(os.path.join(venv, "pyvenv.cfg"), encoding="utf-8") as f:
            config = f.read()
    except OSError:
        found = system
    else:
        shared = "include-system-site-packages = true" in config.replace("\t", " ").lower()
        found = [os.path.join(venv, "lib", version, "site-packages")] + (system if shared else [])
    return [f for f in found if os.path.isdir(f)]


def _deadline(signum, frame):
    raise TimeoutError(f"no decision within {DEADLINE_S} s")


def _say(text: str) -> None:
    """One line on stderr, whatever bytes the reason holds (a lone surrogate from the JSON, a NUL)."""
    line = PREFIX + " ".join(str(text).split())[:2000] + "\n"
    sys.stderr.buffer.write(line.encode("utf-8", "backslashreplace"))
    sys.stderr.flush()


def decide_raw(raw: bytes) -> str | None:
    """The reason to deny the tool call ``raw`` (the JSON Claude Code sends), or None to allow it. Raises on
    anything it cannot read."""
    import json

    event = json.loads(raw.decode("utf-8"))
    if not isinstance(event, dict):
        raise ValueError("the input is not a JSON object")
    from grpo_guard.decision import decide

    return decide(event)


def main() -> int:
    try:
        import signal

        signal.signal(signal.SIGALRM, _deadline)
        signal.setitimer(signal.ITIMER_REAL, DEADLINE_S)
        for folder in _site_folders():
            if folder not in sys.path:
                sys.path.append(folder)
        sys.path.insert(0, HERE)
        reason = decide_raw(sys.stdin.buffer.read())
        signal.setitimer(signal.ITIMER_REAL, 0)
        if reason:
            _say(reason)
            return 2
        return 0
    except BaseException as e:   # noqa: BLE001 - a guard fails closed: nothing that goes wrong here means "allow"
        try:
            _say(f"the hook could not decide on this tool call ({type(e).__name__}: {e}), so it is refused. If "
                 "the call is needed, spell it more plainly; if every call is refused, the hook's Python or its "
                 "files are broken: `sh hooks/guard_review.sh --where` in the plugin's folder shows which Python "
                 "it runs under.")
        except BaseException:   # noqa: BLE001 - even stderr failing is a deny
            pass
        return 2


if __name__ == "__main__":
    sys.exit(main())
