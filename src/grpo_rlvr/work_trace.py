"""An opt-in record of the expensive steps a command repeats: each brief load, each re-score of the gate's
samples and each training start (GRPO in train.py, the demo's SFT warmup), with the process that did it.
``GRPO_RLVR_TRACE=FILE`` appends one JSON line per step to FILE (from every process of a launch, the
clean-interpreter checks and ``train.py`` included); unset, nothing is written.

It only observes: no decision reads it, so setting it (or writing to the file) changes nothing a run does.
``benchmarks/trace_train.py`` reads it to count what one ``grpo-rlvr train`` does.
"""

from __future__ import annotations

import json
import os
import sys
import time

ENV = "GRPO_RLVR_TRACE"


def event(name: str, **fields) -> None:
    """Append ``name`` (``brief_load``, ``gate_rescore``, ``training_start``) with this process's pid and command
    line, and its parent's (which process started a clean-interpreter check)."""
    path = os.environ.get(ENV)
    if not path:
        return
    try:
        with open(f"/proc/{os.getppid()}/cmdline", "rb") as f:
            parent = [a.decode(errors="replace") for a in f.read().split(b"\0")[:4]]
    except OSError:
        parent = []
    line = json.dumps({"event": name, "pid": os.getpid(), "argv": sys.argv[:3], "parent_argv": parent,
                       "t": round(time.time(), 3), **fields}, default=str)
    try:
        with open(path, "a", encoding="utf-8") as f:  # O_APPEND: lines from several processes stay whole
            f.write(line + "\n")
    except OSError:
        pass  # a trace that cannot be written must not stop the step it records
