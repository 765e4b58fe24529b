"""Benchmark: what the plugin's PreToolUse hook costs each tool call, beside starting a bare interpreter and bash.

Run: ``python benchmarks/bench_hook_latency.py [--runs 100]`` (from the repository root; seconds per 100 runs).

Each call is started as Claude Code starts a hook (``/bin/sh -c`` with hooks.json's command, the event as JSON on
stdin, ``${CLAUDE_PLUGIN_ROOT}`` set) in a scratch project that holds an inspection, a rendered run and a git
repository, for a few everyday tool calls (``git status``, a test run piped to ``tail``, the gate, a Write). Side by
side, in the same round-robin so that load on a shared machine falls on all alike: the hook as it was at 6591b7c
(``python3 hooks/guard_review.py``, taken from git), ``python -c pass`` and ``python -I -S -c pass`` (the
interpreter the launcher picks), and ``bash -c true``. Printed per variant: the median and 90th percentile wall time
(ms), the median CPU time (user + system, ms: less sensitive to other work on the machine), and each median over
``python -c pass``'s; with the load average before and after and the number of cores.
Limits: the wall time counts process start-up, which the machine's load and its file cache move; the target
(issue 53) is a median of at most 60 ms for an everyday call on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from plugin.hook_calls import scratch_project  # noqa: E402  (the fuzz test's project, one builder)

OLD = "6591b7c"   # the hook before issue 53
CALLS = {
    "git status": ("Bash", {"command": "git status"}),
    "pytest | tail": ("Bash", {"command": "python3 -m pytest -q tests 2>&1 | tail -5"}),
    "gate": ("Bash", {"command": "grpo-rlvr-plugin gate out/inspection --json"}),
    "Write src/": ("Write", {"file_path": "src/new.py", "content": "x = 1\n"}),
}


def old_hook(folder: Path) -> Path | None:
    """hooks/ as it was at 6591b7c, or None when this checkout does not have that commit."""
    target = folder / "old"
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", OLD, "hooks"], capture_output=True)
    if archive.returncode != 0:
        return None
    target.mkdir()
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def timed(argv: list[str], stdin: bytes, env: dict) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child and its children) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, input=stdin, capture_output=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 2):
        raise SystemExit(f"{argv} exited {done.returncode}: {done.stderr.decode()[-500:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=100, help="runs of each variant (default 100)")
    args = ap.parse_args()
    hook_cmd = json.loads((ROOT / "hooks" / "hooks.json").read_text())["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
           "CLAUDE_PLUGIN_ROOT": str(ROOT)}
    where = subprocess.run(["/bin/sh", str(ROOT / "hooks" / "guard_review.sh"), "--where"], capture_output=True,
                           text=True, env=env).stdout
    python = where.split("hook python: ", 1)[1].split("\n", 1)[0]
    with tempfile.TemporaryDirectory(prefix="bench-hook-") as tmp:
        project = scratch_project(Path(tmp) / "proj")
        old = old_hook(Path(tmp))
        events = {name: json.dumps({"tool_name": tool, "tool_input": inp, "cwd": str(project),
                                    "hook_event_name": "PreToolUse"}).encode() for name, (tool, inp) in CALLS.items()}
        variants: dict[str, tuple[list[str], bytes, dict]] = {}
        for name, event in events.items():
            variants[f"hook: {name}"] = (["/bin/sh", "-c", hook_cmd], event, env)
        if old is not None:
            for name, event in events.items():
                variants[f"hook at {OLD}: {name}"] = (["/bin/sh", "-c", f'python3 "{old}/hooks/guard_review.py"'],
                                                        event, {**env, "CLAUDE_PLUGIN_ROOT": str(old)})
        user_bin = Path(tmp) / "user-bin"   # only grpo-rlvr, as a user's install puts it on PATH
        user_bin.mkdir()
        (user_bin / "grpo-rlvr").symlink_to(Path(sys.executable).parent / "grpo-rlvr")
        user = {**env, "PATH": f"{user_bin}:{os.environ.get('PATH', '')}"}
        event = events["git status"]
        variants["user PATH, hook: git status"] = (["/bin/sh", "-c", hook_cmd], event, user)
        if old is not None:
            variants[f"user PATH, hook at {OLD}: git status"] = (
                ["/bin/sh", "-c", f'python3 "{old}/hooks/guard_review.py"'], event, {**user,
                                                                                   "CLAUDE_PLUGIN_ROOT": str(old)})
        variants["python -c pass"] = ([python, "-c", "pass"], b"", env)
        variants["python -I -S -c pass"] = ([python, "-I", "-S", "-c", "pass"], b"", env)
        variants["bash -c true"] = (["bash", "-c", "true"], b"", env)
        load_before = os.getloadavg()
        samples: dict[str, list[tuple[float, float]]] = {k: [] for k in variants}
        for argv, stdin, e in variants.values():   # warm the file cache and the .pyc files once
            timed(argv, stdin, e)
        for _ in range(args.runs):
            for name, (argv, stdin, e) in variants.items():
                samples[name].append(timed(argv, stdin, e))
        load_after = os.getloadavg()
    base = statistics.median(w for w, _ in samples["python -c pass"])
    print(f"{os.cpu_count()} cores; load average before {load_before[0]:.2f}, after {load_after[0]:.2f}; "
          f"{args.runs} runs each, round-robin; hook python: {python}")
    print(f"user PATH: {shutil.which('python3')} is its python3")
    print(f"{'variant':<40} {'median ms':>10} {'p90 ms':>8} {'cpu ms':>8} {'× python -c pass':>17}")
    for name, xs in samples.items():
        walls = sorted(w for w, _ in xs)
        print(f"{name:<40} {1000 * statistics.median(walls):>10.1f} {1000 * walls[int(0.9 * len(walls))]:>8.1f} "
              f"{1000 * statistics.median(c for _, c in xs):>8.1f} {statistics.median(walls) / base:>17.2f}")


if __name__ == "__main__":
    main()
