#!/usr/bin/env python3
"""PreToolUse hook of the grpo-rlvr plugin: the agent never stands in for the person who reviews.

Claude Code sends every tool call (``hooks.json`` matches all of them, MCP tools included) as JSON on stdin:
``tool_name``, ``tool_input``, ``cwd``. The hook denies (exit 2, the reason on stderr, which Claude Code shows to
the agent):

- running ``grpo-rlvr review`` in a shell command, however it is reached (``grpo-rlvr``, the plugin's wrapper,
  ``python -m grpo_rlvr``, behind ``env``, ``sh -c '...'``, ``$(...)``, a variable), or importing
  ``grpo_rlvr.review``;
- setting a variable that loads code into training (``PYTHONPATH``, ``PYTHONSTARTUP``, ``PYTHONHOME``,
  ``PYTHONUSERBASE``, the dynamic loader's ``LD_*``, ``OPENSSL_CONF``, ``GCONV_PATH``) or ``GRPO_RLVR_CACHE``;
- writing, editing, moving or deleting a protected path (``grpo_guard/protected.py``: an inspection, a run's
  rendered files and records, startup hooks, every installed library, this plugin, the hash cache, the
  signed-review policy and the run key's folder), by a known writer (``grpo_guard/shell_writes.py``: redirections,
  ``cp``/``mv``/``rm``…, ``sed -i``, inline code, and the writers that name no target: ``git`` branch switches,
  merges, rebases, pulls, cherry-picks, ``git apply``, ``patch``, each a write to the whole tree), or by any
  program that is not a known reader (``grpo_guard/readers.py``) near a protected path or naming a folder above one
  (``python -c "os.rename(~/.config…)"``, ``tar --remove-files``, ``zip -m``, ``perl``, ``busybox mv``…);
- any tool call, reads included, that names grpo-rlvr's run key or its folder; running a run folder's ``train.py``
  or ``launch.sh`` directly (``grpo-rlvr train RUN [--resume]`` is the agent's door);
- a command the hook cannot read as bash would (a value set at run time, a part bash's grammar does not parse)
  near a protected path.

A shell command is read with tree-sitter-bash (``grpo_guard/bash_reading.py``): quotes, ``$'...'`` (ANSI-C, with
its octal and hex escapes), ``$"..."``, backslashes, variables set earlier in the command, substitutions,
here-documents and quoted scripts, as bash would. The parser is a dependency of grpo-rlvr: this file runs under
the user's ``python3``, and when that interpreter cannot import it, it runs again under the interpreter of the
grpo-rlvr the plugin uses (``$GRPO_RLVR_BIN``, ``grpo-rlvr`` on PATH, or the plugin's own environment, as
``bin/grpo-rlvr-plugin`` finds them). Without a parser anywhere the hook fails closed: a command that comes near
anything protected is denied, with how to install the parser.

Everything else is allowed (exit 0, no output). Input that is not a tool call it understands is allowed.

Limits: a command line is read, not run: a reader is trusted by its name (a ``cat`` that is a shell function or a
program put first on PATH is not cat), a program the agent writes and runs opens what it likes, a folder above a
protected path is found by a walk of at most a few thousand entries, and an existing hard link to an inspection
file is a name the hook does not know. The gate's checks are the layers behind this one.
"""

from __future__ import annotations

import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REEXEC_FLAG = "--parser-python"   # this run is the second one, under the backend's interpreter: do not look again


def _has_parser() -> bool:
    try:
        import tree_sitter  # noqa: F401
        import tree_sitter_bash  # noqa: F401
    except ImportError:
        return False
    return True


def _shebang_python(program: str | None) -> str | None:
    """The interpreter of a ``grpo-rlvr`` console script (its ``#!`` line), when it is one."""
    if not program or not os.path.isfile(program):
        return None
    try:
        with open(program, "rb") as fh:
            first = fh.readline(512).decode(errors="replace").strip()
    except OSError:
        return None
    python = first[2:].strip().split()[0] if first.startswith("#!") and first[2:].strip() else ""
    return python if os.path.basename(python).startswith("python") and os.access(python, os.X_OK) else None


def backend_pythons() -> list[str]:
    """The interpreters grpo-rlvr runs under for this plugin, in ``bin/grpo-rlvr-plugin``'s order."""
    data = os.environ.get("CLAUDE_PLUGIN_DATA") or os.path.join(
        os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share"),
        "grpo-rlvr-plugin")
    found = [_shebang_python(os.environ.get("GRPO_RLVR_BIN")), _shebang_python(shutil.which("grpo-rlvr")),
             os.path.join(data, "venv", "bin", "python")]
    return [p for p in dict.fromkeys(found) if p and os.access(p, os.X_OK)]


def main() -> int:
    if not _has_parser() and REEXEC_FLAG not in sys.argv:
        for python in backend_pythons():   # stdin is still unread: the next interpreter gets the event
            try:
                os.execv(python, [python, "-I", os.path.abspath(__file__), REEXEC_FLAG])
            except OSError:
                continue
    sys.path.insert(0, HERE)
    from grpo_guard.decision import main as decide_and_report

    return decide_and_report()


if __name__ == "__main__":
    sys.exit(main())
