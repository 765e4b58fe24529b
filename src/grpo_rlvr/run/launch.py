"""``grpo-rlvr train``: run what ``render`` wrote, nothing else, and only behind a passing gate.

Single process (CPU, or one GPU with vLLM colocated): ``python train.py``. Several GPU processes or nodes:
``accelerate launch --config_file accelerate.yaml train.py``. Several CPU processes: ``python -m
torch.distributed.run --standalone --nproc_per_node N train.py`` (accelerate would start only one). vLLM server mode: ``bash launch.sh``, which
owns the server's lifecycle. ``--resume`` continues from the newest *complete* checkpoint.

Before launching, the same check the rendered train.py makes itself (``run.guard.check_run``): the gate passes
and no rendered file changed since render. The result reports ``train_summary.json`` only when that file was
written by this launch. ``--unreviewed-smoke-test`` is the one way past the gate (see run/guard.py).
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from grpo_rlvr.cpu_threads import WAIT_POLICY
from grpo_rlvr.cpu_time import CPU_LIMIT_S
from grpo_rlvr.errors import GateRefused, GrpoRlvrError, LaunchError, RunFolderInUse
from grpo_rlvr.records.checked_run import RunCheck
from grpo_rlvr.records.crash_record import crash_lines, read_crash, record_exit, record_stop
from grpo_rlvr.records.one_trainer import in_use, release
from grpo_rlvr.records.provenance import STARTED_BY
from grpo_rlvr.records.run_outputs import second_run_problem
from grpo_rlvr.report.at_end import report_at_end, write_quietly
from grpo_rlvr.run.check import check_run_here
from grpo_rlvr.run.guard import SMOKE_MAX_STEPS, check_run, demo_acceptance
from grpo_rlvr.run.lock import LOCK
from grpo_rlvr.run.plan import LaunchPlan

log = logging.getLogger("grpo_rlvr")


@dataclass
class TrainResult:
    run: Path
    ok: bool
    returncode: int | None
    command: list[str]
    resumed_from: str | None = None
    seconds: float = 0.0
    global_step: int | None = None
    dry_run: bool = False
    env: dict = field(default_factory=dict)
    plan: list[str] = field(default_factory=list)   # server mode dry run: the commands launch.sh would run
    refused: list[str] = field(default_factory=list)  # dry run: why training would be refused now (empty: it starts)
    cpu_estimate_s: float | None = None  # a CPU run's rough time estimate (cpu_time), when one was made
    cpu_needs_flag: bool = False  # dry run: the estimate is over the limit and --allow-cpu was not given
    notes: list[str] = field(default_factory=list)  # what was changed from the request (a smoke test's step cap)
    watch_stop: dict | None = None  # the watchdog's stop event (output/watch.jsonl) when it stopped this launch
    crash: dict | None = None  # how the trainer died or was stopped (output/crash.json, records/crash_record.py)

    @property
    def stopped(self) -> bool:
        """Stopped by Ctrl-C (the record says what it saved and how to resume)."""
        return (self.crash or {}).get("kind") == "stopped"

    def to_dict(self) -> dict:
        return {"run": str(self.run), "ok": self.ok, "returncode": self.returncode, "command": self.command,
                "resumed_from": self.resumed_from, "seconds": round(self.seconds, 1),
                "global_step": self.global_step, "dry_run": self.dry_run, "env": self.env, "plan": self.plan,
                "refused": self.refused, "cpu_estimate_s": self.cpu_estimate_s, "notes": self.notes,
                "watch_stop": self.watch_stop, "crash": self.crash, "stopped": self.stopped}

    def format(self) -> str:
        cmd = " ".join(self.command)
        if self.dry_run:
            env = " ".join(f"{k}={v}" for k, v in self.env.items())
            lines = [*self.notes, f"Would run in {self.run}:", f"  {env} {cmd}".rstrip()]
            lines += [f"    {p}" for p in self.plan]
            if self.cpu_estimate_s is not None:
                lines.append(f"Rough time on this CPU: {self.cpu_estimate_s / 60:.0f} min"
                             + (f" (over {CPU_LIMIT_S // 60} min: `grpo-rlvr train` starts it on this CPU only with "
                                "--allow-cpu)" if self.cpu_needs_flag else ""))
            if self.refused:
                lines.append("Training would be refused now:")
                lines += [f"  - {p}" for p in self.refused]
            return "\n".join(lines)
        if self.watch_stop is not None and self.watch_stop.get("id") == "review_audit":
            w = self.watch_stop
            return "\n".join([*self.notes, f"Training STOPPED by the review audit at step {w['step']}, before the "
                              f"optimizer stepped: {w['title']}; nothing was trained. What differs and what to do are "
                              f"printed above and in {self.run / 'output' / 'review_audit.json'}",
                              f"Next: grpo-rlvr diagnose {self.run}"])
        if self.watch_stop is not None:
            w = self.watch_stop
            return "\n".join([*self.notes, f"Training STOPPED by the watchdog at step {w['step']}: [{w['severity']}] "
                              f"{w['title']}; checkpoint {w['checkpoint']}; the finding, the variant or brief change "
                              f"and the next command are printed above and in {self.run / 'output' / 'watch.jsonl'}",
                              f"Next: grpo-rlvr diagnose {self.run}"])
        if self.stopped:
            return "\n".join([*self.notes, f"Training STOPPED after {self.seconds:.0f}s; outputs in {self.run / 'output'}",
                              *[f"  {line}" for line in crash_lines(self.crash)]])
        state = "finished" if self.ok else f"FAILED (exit {self.returncode})"
        died = [f"  {line}" for line in crash_lines(self.crash)] if self.crash else []
        step = self.global_step if self.global_step is not None else (self.crash or {}).get("last_step")
        at = f"at step {step}" if step is not None else "before its first logged step"
        return "\n".join([*self.notes, f"Training {state} after {self.seconds:.0f}s in all (loading included) {at}; "
                          f"outputs in {self.run / 'output'}", *died, f"Next: grpo-rlvr diagnose {self.run}"])


_CKPT = re.compile(r"^checkpoint-(\d+)$")
_WEIGHTS = ("model.safetensors", "adapter_model.safetensors", "pytorch_model.bin", "model.safetensors.index.json")


def is_complete_checkpoint(d: Path) -> bool:
    """A checkpoint is complete when its trainer state parses and its weights and optimizer state are there."""
    try:
        state = json.loads((d / "trainer_state.json").read_text())
    except (OSError, json.JSONDecodeError):
        return False
    has_weights = any((d / w).is_file() and (d / w).stat().st_size > 0 for w in _WEIGHTS)
    has_optim = any((d / o).is_file() for o in ("optimizer.pt", "optimizer.bin")) or any(d.glob("global_step*"))
    return has_weights and has_optim and isinstance(state.get("global_step"), int)


def newest_complete_checkpoint(output_dir: Path) -> Path | None:
    """The newest complete checkpoint, among those the run's ledger lists when it has one (a checkpoint killed
    before the trainer listed it is passed over; the run check refuses unlisted ones)."""
    from grpo_rlvr.records.checkpoint_ledger import read_ledger

    listed = read_ledger(output_dir)
    found = []
    for d in Path(output_dir).glob("checkpoint-*"):
        m = _CKPT.match(d.name)
        if m and d.is_dir() and is_complete_checkpoint(d) and (not listed or d.name in listed):
            found.append((int(m.group(1)), d))
    return max(found)[1] if found else None


LAUNCHER_CHECKED = "GRPO_RLVR_LAUNCHER_CHECKED"  # launch.sh: the gate was checked by the launcher a moment ago


def _check(run: Path, demo: bool, smoke: bool, resume: str | None) -> RunCheck:
    """The run check: in a clean interpreter, or for the demo in this process (its oracle verdicts accepted)."""
    if demo:
        return check_run_here(run, demo=True, smoke=smoke, resume=resume)
    return check_run(run, smoke=smoke, resume=resume)


def check_before_launch(run: Path, demo: bool = False, smoke: bool = False, resume: Path | None = None) -> dict:
    """The rendered files and the brief are unchanged since render, the gate passes (unless ``smoke``), and the
    checkpoint to resume from is one this run saved.

    Returns the lock. Raises GateRefused listing every reason.
    """
    check = _check(run, demo, smoke, str(resume) if resume else None)
    if check.problems:
        raise GateRefused("training refused:\n" + "\n".join(f"- {p}" for p in check.problems))
    return check.lock


def plan_of(run: Path, lock: dict) -> LaunchPlan:
    return LaunchPlan.from_dict(lock.get("launch"), f"{Path(run) / LOCK}")


def train(run, resume: bool = False, dry_run: bool = False, max_steps: int | None = None, demo: bool = False,
          stream=None, unreviewed_smoke_test: bool = False, allow_cpu: bool = False) -> TrainResult:
    """Launch the run folder ``run``.

    Args:
        run: the folder ``render`` wrote.
        resume: continue from the newest complete checkpoint in ``run/output`` (a fresh start when the output
            folder holds no run; over a run with no checkpoint, RunFolderInUse).
        dry_run: return the command and environment without running anything.
        max_steps: override ``max_steps`` (smoke runs).
        demo: accept the demo's oracle review at the gate (only ``grpo-rlvr demo`` sets it); training then runs
            in this process, inside ``run.guard.demo_acceptance``, so nothing outside it can claim the demo.
        unreviewed_smoke_test: skip the gate for a capped, marked smoke test that saves nothing.
        allow_cpu: train a CPU brief even when the estimated time is above ``cpu_time.CPU_LIMIT_S``.
    Raises:
        GateRefused: the gate fails or the brief changed since render.
        LaunchError: the run folder is incomplete.
        RunFolderInUse: a trainer of this run is alive (it holds the run's lock, ``records/one_trainer``), or
            ``run/output`` already holds a run's outputs and this is not a ``resume`` of it.
    """
    run = Path(run).resolve()
    if busy := in_use(run):   # one trainer per run, held by the trainer itself (records/one_trainer.py)
        raise RunFolderInUse(busy)
    ckpt = newest_complete_checkpoint(run / "output") if resume else None
    if not unreviewed_smoke_test and (mixed := second_run_problem(run / "output", run, resuming=ckpt is not None)):
        raise RunFolderInUse(mixed)   # a run folder holds one run (records/run_outputs.py); train.py refuses it too
    if dry_run:  # shows the commands whatever the gate says, and says whether training would be refused
        check = _check(run, demo, unreviewed_smoke_test, str(ckpt) if ckpt else None)
        lock, refused = check.lock, check.problems
    else:
        lock, refused = check_before_launch(run, demo=demo, smoke=unreviewed_smoke_test, resume=ckpt), []
    notes = []
    if unreviewed_smoke_test:   # capped here, so the command, the estimate and the report say what will run
        if max_steps is not None and max_steps > SMOKE_MAX_STEPS:
            notes.append(f"Note: --max-steps {max_steps} is capped at {SMOKE_MAX_STEPS}: an unreviewed smoke test runs "
                         f"at most {SMOKE_MAX_STEPS} steps (review the inspection to train longer)")
            log.warning("%s", notes[-1])
        max_steps = min(max_steps or SMOKE_MAX_STEPS, SMOKE_MAX_STEPS)
    missing = [f for f in ("train.py", "grpo_config.yaml", "accelerate.yaml", "launch.sh") if not (run / f).is_file()]
    if missing:
        raise LaunchError(f"{run}: missing {', '.join(missing)}; run `grpo-rlvr render` again")
    plan = plan_of(run, lock)
    cmd = plan.argv(run)
    if ckpt is not None:
        cmd += ["--resume", str(ckpt)]
    if max_steps is not None:
        cmd += ["--max-steps", str(max_steps)]
    if unreviewed_smoke_test:
        cmd += ["--unreviewed-smoke-test"]
    # idle OpenMP threads sleep instead of spinning (cpu_threads), unless the caller's environment says otherwise
    env_extra = {"TOKENIZERS_PARALLELISM": "false", "PYTHONUNBUFFERED": "1",
                 WAIT_POLICY: os.environ.get(WAIT_POLICY, "PASSIVE"), STARTED_BY: "grpo-rlvr train"}
    if plan.server and not refused:  # launch.sh skips its own early check, made just now
        env_extra[LAUNCHER_CHECKED] = "1"
    from grpo_rlvr.brief import load_brief
    from grpo_rlvr.cpu_time import check_training_time
    from grpo_rlvr.dataset.rows import load_rows

    def count_rows(brief):
        return lambda: len(load_rows(brief))

    if dry_run:   # the estimate is shown whatever the gate says, and refuses nothing
        try:
            brief = load_brief(lock["brief"])
            cpu_s = check_training_time(brief, max_steps, allow_cpu, estimate_only=True, count_rows=count_rows(brief))
        except GrpoRlvrError:   # a brief that no longer loads: the refusals above say so
            cpu_s = None
        res = TrainResult(run, not refused, None, cmd, str(ckpt) if ckpt else None, dry_run=True, env=env_extra,
                          refused=refused, cpu_estimate_s=cpu_s, notes=notes,
                          cpu_needs_flag=cpu_s is not None and cpu_s > CPU_LIMIT_S and not allow_cpu)
        if plan.server or plan.nodes > 1:  # launch.sh prints the exact commands it would run, on each node
            res.plan = _node_plans(plan, cmd, run, env_extra)
        return res
    brief = load_brief(lock["brief"])
    check_training_time(brief, max_steps, allow_cpu, count_rows=count_rows(brief))
    t0, started = time.monotonic(), time.time()
    interrupted = False
    if demo:
        returncode = _train_in_process(run, plan, cmd[cmd.index(str(run / "train.py")) + 1:])
    else:
        returncode, interrupted = _run_forwarding_signals(
            cmd, run, {**os.environ, **env_extra, "PATH": _path_with_this_python()}, stream)
    from grpo_rlvr.records.watch_log import stop_event

    stopped = stop_event(run / "output", started) if returncode == 1 else None
    crash = None
    if returncode != 0 and (busy := in_use(run)):   # another trainer took the run a moment before ours could
        raise RunFolderInUse(busy)
    if returncode != 0 and stopped is None:
        crash, written_here = _how_it_ended(run, returncode, started, interrupted)
        if written_here:   # killed by a signal, or stopped without the trainer's record: its report is written here
            write_quietly(run)
    return TrainResult(run, returncode == 0, returncode, cmd, str(ckpt) if ckpt else None,
                       time.monotonic() - t0, summary_step(run / "output" / "train_summary.json", started),
                       notes=notes, watch_stop=stopped, crash=crash)


def _how_it_ended(run: Path, returncode: int, started: float, interrupted: bool) -> tuple[dict | None, bool]:
    """The record of a launch that did not finish, and whether it was written here: the trainer's own (a death, or
    a Ctrl-C's stop with its checkpoint), else one written here: a stop after a Ctrl-C passed on, a death by signal
    otherwise."""
    out = run / "output"
    own = read_crash(out)
    if own is not None and (own.get("time") or 0) >= started - 1.0:
        return own, False
    here = record_stop(run, by="grpo-rlvr train") if interrupted else record_exit(out, returncode, started)
    return (here, True) if here is not None else (own, False)


def _node_role(plan: LaunchPlan, node: int) -> str:
    if plan.generation_node:
        return "generation" if node == 0 else f"training, machine rank {node - 1}"
    return f"machine rank {node}"


def _node_plans(plan: LaunchPlan, cmd: list[str], run: Path, env_extra: dict) -> list[str]:
    """What launch.sh runs (its dry run), on one node, or on each node with the variables that node sets (node
    n's address shown as ``node<n>``)."""
    if plan.nodes == 1:
        shown = subprocess.run(cmd, cwd=run, capture_output=True, text=True,
                               env={**os.environ, **env_extra, "GRPO_RLVR_DRY_RUN": "1"})
        return shown.stdout.splitlines() + shown.stderr.splitlines() * (shown.returncode != 0)
    lines = []
    for node in range(plan.nodes):
        node_env = plan.node_env(node)
        shown = subprocess.run(cmd, cwd=run, capture_output=True, text=True,
                               env={**os.environ, **env_extra, **node_env, "GRPO_RLVR_DRY_RUN": "1"})
        words = " ".join(f"{k}={v}" for k, v in node_env.items())
        lines.append(f"node {node} ({_node_role(plan, node)}): {words} bash launch.sh")
        lines += [f"  {x}" for x in shown.stdout.splitlines() + shown.stderr.splitlines() * (shown.returncode != 0)]
    return lines


def _path_with_this_python() -> str:
    """PATH where ``python`` is this interpreter: launch.sh runs ``python`` (the vLLM server, train.py, the gate
    check), which must be the environment grpo-rlvr runs in even when it was started by its full path, unactivated.
    A PATH that already finds this interpreter first is left as it is (what comes before it still wins)."""
    path = os.environ.get("PATH", "")
    here = os.path.dirname(sys.executable)
    found = shutil.which("python", path=path)
    if found and os.path.dirname(os.path.abspath(found)) == os.path.abspath(here):
        return path
    return os.pathsep.join([here, path])


def summary_step(summary: Path, since: float) -> int | None:
    """The global step of ``train_summary.json`` when this launch wrote it (modified at or after ``since``)."""
    try:
        if summary.stat().st_mtime < since - 1.0:   # coarse file-system clocks: one second of slack
            return None
        step = json.loads(summary.read_text()).get("global_step")
    except (OSError, json.JSONDecodeError, AttributeError):
        return None
    return step if isinstance(step, int) else None


def _train_in_process(run: Path, plan: LaunchPlan, argv: list[str]) -> int:
    """The demo's launch: the rendered train.py run in this process, with the demo's oracle verdicts accepted."""
    import runpy

    if not plan.one_process:
        raise LaunchError(f"{run}: the demo trains in one process; this run needs several (render a single-process "
                          "brief for the demo)")
    old_cwd = os.getcwd()
    try:
        os.chdir(run)
        with demo_acceptance(functools.partial(check_run_here, demo=True)), report_at_end(run):  # as train.py's own
            module = runpy.run_path(str(run / "train.py"), run_name="grpo_rlvr_demo_train")
            return int(module["main"](argv) or 0)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 1
    finally:
        release(run)   # the trainer's lock of the run (records/one_trainer): this process goes on
        os.chdir(old_cwd)


TEARDOWN_S = 60  # how long a stopped launcher may take to stop its trainer and vLLM server (launch.sh: ≤ 25 s)


def _run_forwarding_signals(cmd: list[str], cwd: Path, env: dict, stream) -> tuple[int, bool]:
    """Run the launcher; a Ctrl-C, SIGTERM or SIGHUP to *this* process is passed on to it, and it gets
    ``TEARDOWN_S`` to stop what it started (launch.sh stops its trainer and vLLM server) before it is killed; after
    a first Ctrl-C it may take as long as its step takes (the trainer saves a checkpoint and stops). Returns its
    exit code and whether a Ctrl-C was passed on; SIGTERM and SIGHUP end this process with 128 + the signal.

    ``subprocess.run`` would SIGKILL the launcher 0.25 s after a Ctrl-C, before its teardown ran, and a
    SIGTERM (``scancel``, ``kill``) to this process alone would leave it running.
    """
    import signal

    # its own session: a terminal's Ctrl-C reaches it once, through forward(), not also directly (two at once would
    # read as the second Ctrl-C, which stops the trainer without its checkpoint)
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=stream, start_new_session=True,
                            stderr=subprocess.STDOUT if stream is not None else None)
    received: list[int] = []

    def forward(signum, _frame):
        received.append(signum)
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signum)

    main = threading.current_thread() is threading.main_thread()  # handlers can only be set there
    old = {sig: signal.signal(sig, forward) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)} if main else {}
    deadline = None
    try:
        while True:
            try:
                code = proc.wait(timeout=0.5)
                break
            except subprocess.TimeoutExpired:
                # a first Ctrl-C lets the trainer finish its step and save (it may take minutes); a second one, or
                # SIGTERM / SIGHUP, gives it TEARDOWN_S
                urgent = received.count(signal.SIGINT) > 1 or any(s != signal.SIGINT for s in received)
                if urgent and deadline is None:
                    deadline = time.monotonic() + TEARDOWN_S
                if deadline is not None and time.monotonic() > deadline:
                    proc.kill()
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
    if received and received[0] != signal.SIGINT:
        raise SystemExit(128 + received[0])
    return code, bool(received)

