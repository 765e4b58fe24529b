"""The watchdog inside training: the detectors ``grpo-rlvr diagnose`` runs after a run ends, run on the log as it
grows, so that a run that collapses at step 300 of 5,000 stops there instead of burning the rest of its hours.
The rendered train.py adds it to the Trainer's callbacks; it lives here, with the detectors it runs, because the
trainer (``grpo_rlvr.trainer``) imports nothing above it (tests/test_layers.py).

Every ``every`` training logs it runs the failure-mode detectors (``diagnosis.detectors.DETECTORS`` and the
non-finite check; not the "too few records" or "missing metric" checks, which every young run would trip) on
the records logged so far, and on the completions TRL logged (the first ``COMPLETION_FILES[0]`` and the last
``COMPLETION_FILES[1]`` files, each read once). Cheap: a record is appended to flat arrays as it is logged and a
completions file is read once; nothing is re-read.

A finding is written to ``output/watch.jsonl`` and the console when it first appears (or its severity changes).
A *stopping* finding (critical, or one of ``STOPPING_WARNINGS``: completions growing or repeating while
correctness is flat; the skill's "start plain, watch for the symptom, then switch the variant") that is present at ``window`` consecutive checks, once the run has logged
enough records to judge trends (``MIN_RECORDS_FOR_TREND``), stops the run when ``watch.stop_on`` is
``critical``: the Trainer saves a checkpoint and stops, ``train.py`` exits 1, and the console says what was
found, the variant with its brief change, and what to run next. With ``stop_on: never`` the same moment is only
recorded (``would_stop``).
"""

from __future__ import annotations

import json
import sys
import time
from collections import deque
from dataclasses import asdict
from pathlib import Path

from transformers import TrainerCallback

from grpo_rlvr.records.unscorable import DEFAULT_MAX_UNSCORABLE, read_tally
from grpo_rlvr.records.watch_log import WATCH_LOG

COMPLETION_FILES = (20, 60)   # completions files kept: the run's first ones (its start) and its latest ones


# Warnings that waste the rest of a run as surely as a critical finding: completions growing or repeating while
# correctness is flat (the policy is paid for length). Reported, never stopped for: truncation and clipping
# (settings to tune; a healthy run's start often truncates) and reward_hacking. A healthy run learns the format
# first: the real demo (seed 0, lr 2e-4) had its format part rise 0.37 → 0.63 by step 55 of 200 while
# correctness went 0.06 → 0.05, which is what format hacking looks like, and ended healthy (correctness 0.29 at
# step 150). Mid-run, the two cannot be told apart from the log; diagnose judges the whole run.
STOPPING_WARNINGS = ("length_reward_coupling", "degenerate_length")
# Findings that state a fact of the run so far, not a trend, so they may stop it before it has the records a trend
# needs (MIN_RECORDS_FOR_TREND): too many samples no reward could score; a correctness that fell to zero (a destroyed
# policy is a fact at any length of run).
AT_ANY_LENGTH = ("unscorable_samples", "correctness_collapsed")
# A run whose correctness gained this much since its start is still learning: a warning does not stop it.
STILL_LEARNING = 0.02
# The share of training's wall time the checks may take. A check costs a few ms on a young run and grows with
# the log (benchmarks/bench_watchdog.py); when the checks so far took more than this share of the time since
# training began (beyond a first ``FREE_CHECK_S`` seconds: a short run is checked at every due log), a due check
# is put off to a later log, so the watchdog's cost stays under it on any hardware and at any length of run.
TIME_BUDGET = 0.01
FREE_CHECK_S = 1.0


def stops(finding, logs=None) -> bool:
    """A finding the watchdog stops a run for: a critical one, or length hacking while correctness is flat
    (gained less than ``STILL_LEARNING`` since the start)."""
    if finding.severity == "critical":
        return True
    return finding.id in STOPPING_WARNINGS and (logs is None or not _still_learning(logs))


def _still_learning(logs) -> bool:
    from grpo_rlvr.diagnosis.detectors import _quality, _windows

    w = _windows(_quality(logs)[1])
    return w is not None and w[3] - w[2] >= STILL_LEARNING


class Watch:
    """The detectors over a growing log, independent of the Trainer (the callback and the tests feed it)."""

    def __init__(self, output_dir: Path, lock: dict | None = None, stop_on: str = "critical", every: int = 1,
                 window: int = 3, stream=None, max_unscorable: float = DEFAULT_MAX_UNSCORABLE):
        from grpo_rlvr.diagnosis.metrics import GrowingTables

        self.output = Path(output_dir)
        self.lock = lock
        self.stop_on, self.every, self.window = stop_on, max(1, int(every)), max(1, int(window))
        self.max_unscorable = float(max_unscorable)
        self.stream = stream or sys.stderr
        self.records = GrowingTables()
        self.first_rows: list[dict] = []
        self.first_files = 0
        self.last_rows: deque[list[dict]] = deque(maxlen=COMPLETION_FILES[1])
        self.seen_files: set[str] = set()
        self._rows: list[dict] | None = None   # first_rows and last_rows as one list, made when they change
        self.train_logs = 0
        self.streak: dict[str, int] = {}
        self.reported: dict[str, tuple[str, str]] = {}   # id → (severity, title) of the findings present
        self.stopped: dict | None = None      # the stop event, once the watchdog stopped (or would stop) the run
        self.checks = 0
        self.put_off = 0                      # due checks put off to keep within TIME_BUDGET
        self.spent = 0.0                      # seconds the checks took
        self.began: float | None = None       # when the first record came (training's start, near enough)

    # --- input ----------------------------------------------------------------------------------------------

    def add(self, record: dict) -> bool:
        """Take one log record; True when it is time to check (every ``every`` training logs)."""
        if self.began is None:
            self.began = time.monotonic()
        self.records.add(record)
        if not isinstance(record, dict) or not any(k in record for k in ("reward", "loss")):
            return False   # the end-of-training summary counts when it carries the steps since the last log
        self.train_logs += 1
        return self.train_logs % self.every == 0

    def _read_new_completions(self) -> None:
        folder = self.output / "completions"
        if not folder.is_dir():
            return
        new = sorted((f for f in folder.glob("completions_*.parquet") if f.name not in self.seen_files),
                     key=lambda f: f.name)
        if not new:
            return
        import pyarrow as pa
        import pyarrow.parquet as pq

        from grpo_rlvr.diagnosis.completions import prompt_key, text_of

        self._rows = None
        for f in new:
            self.seen_files.add(f.name)
            try:
                rows = [r for r in pq.read_table(f).to_pylist() if isinstance(r.get("step"), int) and "completion" in r]
            except (OSError, pa.ArrowException):
                continue
            for r in rows:   # the group key and the text, computed once here, not at every check
                r["prompt"] = prompt_key(r.get("prompt"))
                r["completion"] = text_of(r["completion"])
            if self.first_files < COMPLETION_FILES[0]:
                self.first_files += 1
                self.first_rows.extend(rows)
            else:
                self.last_rows.append(rows)

    # --- the check ------------------------------------------------------------------------------------------

    def logs(self):
        from grpo_rlvr.diagnosis.metrics import RunLogs

        self._read_new_completions()
        history, held = self.records.tables()
        if self._rows is None:   # one list until new completions arrive: the detectors' groupings of it are kept
            self._rows = self.first_rows + [r for f in self.last_rows for r in f]
        return RunLogs(self.output / "metrics.jsonl", history, self._rows, self.lock, held, [],
                       unscorable=read_tally(self.output), max_unscorable=self.max_unscorable)

    def within_budget(self) -> bool:
        """Whether a due check fits ``TIME_BUDGET``; counts the ones put off."""
        elapsed = time.monotonic() - (self.began or time.monotonic())
        if self.spent <= FREE_CHECK_S + TIME_BUDGET * elapsed:
            return True
        self.put_off += 1
        return False

    def cost(self) -> dict:
        """What the checks cost so far: how many ran and were put off, their seconds, training's seconds."""
        elapsed = time.monotonic() - self.began if self.began is not None else 0.0
        return {"checks": self.checks, "put_off": self.put_off, "check_s": round(self.spent, 4),
                "elapsed_s": round(elapsed, 3), "share": round(self.spent / elapsed, 5) if elapsed > 0 else None}

    def check(self, step: int, last_step: bool = False) -> list:
        """Run the detectors; write new findings; return the findings. Sets ``stopped`` when a stopping finding
        has persisted over the window, unless this is the run's last step (stopping would save nothing)."""
        t0 = time.monotonic()
        try:
            return self._check(step, last_step)
        finally:
            self.spent += time.monotonic() - t0

    def _check(self, step: int, last_step: bool) -> list:
        from grpo_rlvr.diagnosis.detectors import DETECTORS, MIN_RECORDS_FOR_TREND
        from grpo_rlvr.diagnosis.log_checks import non_finite_metrics
        from grpo_rlvr.diagnosis.roles import infer_roles

        self.checks += 1
        logs = self.logs()
        logs.roles = infer_roles(logs, {})
        findings = [f for f in (d(logs) for d in (non_finite_metrics, *DETECTORS)) if f is not None]
        present = {f.id for f in findings if stops(f, logs)}
        self.streak = {i: self.streak.get(i, 0) + 1 for i in present}
        for f in findings:
            if self.reported.get(f.id, ("",))[0] != f.severity:
                self.reported[f.id] = (f.severity, f.title)
                self._event({"event": "finding", "step": step, **asdict(f)})
                self.stream.write(f"  watch: [{f.severity}] {f.title} (step {step})\n"
                                  + "".join(f"      {e}\n" for e in f.evidence) + f"      → {f.recommendation}\n")
                self.stream.flush()
        for gone in [i for i in self.reported if i not in {f.id for f in findings}]:
            # a finding that went away is said to have gone (the demo learns the format first: its suspicion of
            # format hacking comes at step 40 and goes at 110, once correctness rises)
            severity, title = self.reported.pop(gone)
            self._event({"event": "cleared", "step": step, "id": gone, "severity": severity, "title": title})
            self.stream.write(f"  watch: cleared: {title} (step {step})\n")
            self.stream.flush()
        if self.stopped is None and not last_step:
            judged = len(logs.history) >= MIN_RECORDS_FOR_TREND   # trends need the records; facts do not
            due = next((f for f in findings if f.id in present and self.streak[f.id] >= self.window
                        and (judged or f.id in AT_ANY_LENGTH)), None)
            if due is not None:
                self.stopped = self._stop_event(due, step)
                self._event(self.stopped)
        return findings

    def _stop_event(self, f, step: int) -> dict:
        from grpo_rlvr.diagnosis import recommended_variant

        return {"event": "stop" if self.stop_on == "critical" else "would_stop", "step": step, "id": f.id,
                "severity": f.severity, "title": f.title, "evidence": f.evidence, "recommendation": f.recommendation,
                "variant": recommended_variant([f]), "brief_change": f.brief_change, "checks": self.streak[f.id],
                "checkpoint": str(self.output / f"checkpoint-{step}") if self.stop_on == "critical" else None}

    def _event(self, event: dict) -> None:
        self.output.mkdir(parents=True, exist_ok=True)
        with (self.output / WATCH_LOG).open("a", encoding="utf-8") as fh:   # appended and flushed: a crash keeps it
            fh.write(json.dumps({**event, "time": round(time.time(), 3)}, default=str) + "\n")


def stop_message(event: dict, run_dir: Path) -> str:
    """What the console says when the watchdog stopped a run: the finding, the variant or brief change, the saved
    checkpoint and the next command."""
    from grpo_rlvr.diagnosis.zero_signal import snippet

    run = str(run_dir)
    lines = [f"watch: stopped the run at step {event['step']}: [{event['severity']}] {event['title']} "
             f"(present at {event['checks']} checks in a row)"]
    lines += [f"    {e}" for e in event["evidence"]]
    lines.append(f"    → {event['recommendation']}")
    ckpt = event.get("checkpoint")
    if ckpt:
        lines.append(f"  checkpoint saved: {ckpt}" if Path(ckpt).is_dir() else f"  checkpoint: {ckpt} (not found)")
    change = event.get("brief_change") or {}
    new_brief = f"{Path(run).name}-{event['variant'] or 'fix'}.yaml"
    if event.get("variant"):
        lines.append(f"  variant: {event['variant']}; brief change: "
                     f"{snippet({'variant': {'name': event['variant'], 'diagnosis': run + '/output/diagnosis.json'}})}")
        lines.append(f"  next: grpo-rlvr diagnose {run} --apply {new_brief}   (writes the brief with the variant and "
                     "its own output folder; then render it and train. The new run starts from the reviewed model: "
                     "a run resumes only checkpoints it saved itself)")
    else:
        if change:
            lines.append(f"  brief change: {snippet(change)}")
        lines.append(f"  next: {'make that change in the brief' if change else 'fix what the finding names'}, then "
                     f"`grpo-rlvr render BRIEF` and train (`grpo-rlvr diagnose {run}` writes the full diagnosis)")
    lines.append(f"  a false alarm? `grpo-rlvr train {run} --resume` continues from the checkpoint (the watchdog "
                 "judges the resumed logs afresh and stops again if the finding persists); `watch: {stop_on: never}` "
                 "in the brief only records findings")
    return "\n".join(lines)


def warm_imports() -> None:
    """Import what a check uses (pyarrow among it: about half a second)."""
    import pyarrow.dataset  # noqa: F401  (pyarrow.parquet.read_table imports it at its first call)
    import pyarrow.parquet  # noqa: F401

    import grpo_rlvr.diagnosis  # noqa: F401  (recommended_variant, for a stop)
    import grpo_rlvr.diagnosis.detectors  # noqa: F401
    import grpo_rlvr.diagnosis.log_checks  # noqa: F401
    import grpo_rlvr.diagnosis.roles  # noqa: F401


class Watchdog(TrainerCallback):
    """``Watch`` on the Trainer's logs (rank 0): stops training on a persistent stopping finding."""

    def __init__(self, run_dir: Path, output_dir: Path, stop_on: str = "critical", every: int = 1, window: int = 3,
                 stream=None, max_unscorable: float = DEFAULT_MAX_UNSCORABLE):
        self.run_dir = Path(run_dir)
        lock = None
        try:
            lock = json.loads((self.run_dir / "brief.lock.json").read_text())
        except (OSError, ValueError):
            pass
        self.stream = stream or sys.stderr
        self.watch = Watch(output_dir, lock, stop_on, every, window, self.stream, max_unscorable)
        self.trainer_callbacks: list = []   # the Trainer's own (report_through): its dashboards are among them
        self.dashboards_failed: set[str] = set()   # each failing dashboard is said once
        self._stopped_everywhere = False   # rank 0's stop, once every rank has it (stopped_run)

    def report_through(self, trainer) -> None:
        """Send the watchdog's dashboard metrics to the dashboards ``trainer`` reports to (``report_to``): the
        integration callbacks transformers built for it, whichever they are. The list is the Trainer's own, so a
        callback removed later is not called."""
        self.trainer_callbacks = trainer.callback_handler.callbacks

    def on_train_begin(self, args, state, control, **kwargs):
        warm_imports()   # paid here, once, not inside the step of the first check

    @property
    def stopped_run(self) -> bool:
        """Whether the watchdog stopped this run, the same on every rank: only rank 0 checks, and the ranks that
        save the final model must agree (under FSDP or ZeRO-3 that save is a collective: a rank that went on to it
        alone would wait for the others until the timeout)."""
        return self._stopped_everywhere

    def _stopped_here(self) -> bool:
        return self.watch.stopped is not None and self.watch.stopped["event"] == "stop"

    def on_log(self, args, state, control, logs=None, **kwargs):
        # Every rank counts the logs (the Trainer logs the same records on each) and checks at the same log; rank 0
        # decides and, in a distributed run, tells the others, so that all of them stop at the same step.
        if not logs or not self.watch.add({"step": state.global_step, **logs}):
            return
        before = self.watch.stopped
        last = bool(state.max_steps) and state.global_step >= state.max_steps   # it ends now anyway: nothing to save
        if state.is_world_process_zero and self.watch.within_budget():
            findings = self.watch.check(state.global_step, last_step=last)
            t0 = time.monotonic()   # the dashboards' share counts in the watchdog's cost too
            _to_dashboards(self.trainer_callbacks, args, state, control, self._dashboard_metrics(findings, logs),
                           self.dashboards_failed)
            self.watch.spent += time.monotonic() - t0
        stop = _on_every_rank(before is None and self._stopped_here())
        if stop:
            self._stopped_everywhere = True
            control.should_save = True
            control.should_training_stop = True
            if state.is_world_process_zero:
                self.stream.write(f"  watch: stopping at step {state.global_step} ({self.watch.stopped['title']}); "
                                  "saving a checkpoint\n")
                self.stream.flush()

    def _dashboard_metrics(self, findings, logs: dict) -> dict:
        """What the dashboard gets at a check: each reward's mean under its role, each finding's severity (2
        critical, 1 warning, 0 info) and whether the watchdog stopped (or would stop) the run."""
        from grpo_rlvr.diagnosis.roles import _lock_roles, role_from_name

        out = {}
        names = [k[len("rewards/"):-len("/mean")] for k in logs if k.startswith("rewards/") and k.endswith("/mean")]
        roles = _lock_roles(self.watch.lock, names)
        for n in names:
            out[f"role/{roles.get(n) or role_from_name(n) or 'other'}/{n}"] = logs[f"rewards/{n}/mean"]
        out.update({f"watch/{f.id}": {"critical": 2, "warning": 1}.get(f.severity, 0) for f in findings})
        out["watch/stopped"] = int(self.watch.stopped is not None)
        return out

    def on_train_end(self, args, state, control, **kwargs):
        if state.is_world_process_zero and self.watch.began is not None:
            self.watch._event({"event": "cost", "step": state.global_step, **self.watch.cost()})
        if state.is_world_process_zero and self.stopped_run:
            self.stream.write(stop_message(self.watch.stopped, self.run_dir) + "\n")
            self.stream.flush()


def _on_every_rank(flag: bool) -> bool:
    """Rank 0's decision, on every rank of a distributed run (itself otherwise)."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return flag
    box = [flag]
    dist.broadcast_object_list(box, src=0)
    return bool(box[0])


def _to_dashboards(callbacks: list, args, state, control, metrics: dict, failed: set[str] | None = None) -> None:
    """Log ``metrics`` to every dashboard the run reports to, through the Trainer's own integration callbacks
    (transformers' ``INTEGRATION_TO_CALLBACK``: trackio, wandb, TensorBoard, MLflow, ...), as a Trainer log of this
    step: each names the values as it names the Trainer's (``train/watch/...`` in trackio, wandb and TensorBoard;
    those three are tested; DVCLive counts the second log as a step of its own). A dashboard that fails is never a
    reason to stop training: the console says so once (``failed`` keeps the names said), and training goes on."""
    from transformers.integrations.integration_utils import INTEGRATION_TO_CALLBACK

    kinds = tuple(INTEGRATION_TO_CALLBACK.values())
    for cb in callbacks:
        if not isinstance(cb, kinds):
            continue
        try:
            cb.on_log(args, state, control, logs=dict(metrics))
        except Exception as e:  # noqa: BLE001 - any dashboard error: say so, keep training
            if failed is None or type(cb).__name__ not in failed:
                print(f"  watch: could not log to {type(cb).__name__}: {e} (training goes on)", file=sys.stderr)
            if failed is not None:
                failed.add(type(cb).__name__)
