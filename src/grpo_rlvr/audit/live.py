"""The review audit inside training: the first generation batches, sampled by the real trainer from the real data
and scored by the real rewards, compared with what the person reviewed, before the optimizer steps on them.

A review binds files, and the world a run reads is larger than any list of files (a judge behind a URL, a cache, an
environment's data, a data source, samples re-sealed by a script). Training's own rollouts are that world as it is,
so the audit compares them with the inspection's candidates (``audit.reference``) metric by metric
(``audit.compare``), and stops the run before its first optimizer step when they differ by more than chance allows.

- **When**: each of the first ``batches`` generation batches (default 1: the rollouts of exactly the policy the
  person reviewed; each later batch comes after an optimizer step). The rank-0 process compares every rank's
  rollouts together.
- **How sure**: at each look the tests are held together by Holm's procedure at ``alpha / batches``, so an honest
  run is stopped with probability at most about ``alpha`` (default 1e-3; measured: ``tests/audit`` and
  ``benchmarks/bench_review_audit.py``). A rollout outside the reviewed data is a fact, not a test.
- **Then**: with ``stop_on: diverged`` (the default) the trainer raises ``AuditStop`` on every rank before the
  optimizer step: nothing was trained, no checkpoint is needed. ``stop_on: never`` only records. Both are the
  brief's ``audit`` section, which the review is bound to: loosening it after the review needs a new review, and the
  record says the audit was loosened.

Records: ``output/review_audit.json`` (every check with its tests, rewritten after each), and events in
``output/watch.jsonl`` (``audit`` per check, ``stop``/``would_stop`` on a divergence) that ``watch``, ``diagnose``,
``train`` and the run report read.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from grpo_rlvr.audit.compare import compare, reference_groups
from grpo_rlvr.audit.reference import audited, decode_population
from grpo_rlvr.files import write_json_atomic
from grpo_rlvr.records.watch_log import WATCH_LOG

RECORD = "review_audit.json"
DEFAULT_ALPHA = 1e-3
STOP_ON = ("diverged", "never")
TITLE = "training's own rollouts differ from the reviewed inspection"


@dataclass(frozen=True)
class AuditSettings:
    """The brief's ``audit`` section as resolved: ``origin`` says whether the brief set any of it."""

    alpha: float = DEFAULT_ALPHA
    stop_on: str = "diverged"
    batches: int = 1
    origin: str = "recipe"

    @property
    def loosened(self) -> bool:
        """Whether the brief made the audit less likely to stop a run than the default."""
        return self.stop_on == "never" or self.alpha < DEFAULT_ALPHA

    def to_dict(self) -> dict:
        return {**asdict(self), "loosened": self.loosened}

    @classmethod
    def from_dict(cls, data: dict | None) -> AuditSettings:
        data = dict(data or {})
        data.pop("loosened", None)
        return cls(**data)


def what_to_do(settings: AuditSettings) -> str:
    return ("find what changed between the review and this run (the data or its source, a judge or its cache, a "
            "tool's or environment's files, sampling settings, an edited inspection), then `grpo-rlvr inspect "
            "BRIEF --force` and have the person review what training really samples; if the difference is "
            "expected, `audit: {stop_on: never}` in the brief records it instead of stopping (the brief changes, "
            "so the review is redone)" if settings.stop_on == "diverged" else
            "this run was told to go on (`audit.stop_on: never`): read the differences above before trusting it")


class ReviewAudit:
    """The audit of one run (see the module docstring), on rank 0: ``observe`` decides; the trainer broadcasts the
    verdict to every rank (the others hold an ``AuditFollower``)."""

    def __init__(self, reference: dict, settings: AuditSettings, output: Path, inspection: str | Path,
                 draw: dict | None = None, stream=None, resumed: bool = False):
        self.settings = settings
        self.resumed = resumed   # the policy trained since the review: only what does not depend on it is compared
        self.output = Path(output)
        self.stream = stream or sys.stderr
        self.reference = audited(reference)
        pop = reference.get("population")
        self.population = decode_population(pop["digests"]) if isinstance(pop, dict) else None
        self.weights = dict(reference.get("weights") or {})
        self.kinds = dict(reference.get("kinds") or {})
        self.tools = bool(reference.get("tools"))
        self.prepared = reference_groups(self.reference, self.weights, self.kinds, self.tools)   # before training
        self.training: list[dict] = []
        self.batches = 0
        self.record = {"format": 1, "status": "pending", "settings": settings.to_dict(),
                       "reference": {"rollouts": len(self.reference),
                                     "prompts": len({json.dumps(r["group"]) for r in self.reference}),
                                     "population": None if self.population is None else len(self.population),
                                     "inspection": str(inspection),
                                     "draw": (draw or {}).get("number"), "draws": (draw or {}).get("of")},
                       "checks": [], "stopped": None, "cost_s": 0.0, "resumed": resumed}

    def start(self) -> None:
        """Write the pending record (rank 0). A resumed run keeps the record of the starts before it."""
        if self.resumed:
            try:
                before = json.loads((self.output / RECORD).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                before = None
            if isinstance(before, dict):
                self.record["earlier_starts"] = [*before.pop("earlier_starts", []), before]
        self._write()

    def wants_batch(self) -> bool:
        """Whether the next generation batch is one the audit looks at."""
        return self.batches < self.settings.batches and self.record["stopped"] is None

    def observe(self, step: int, rollouts: list[dict]) -> bool:
        """Compare every training rollout seen so far (``rollouts`` added) with the reference; record it; True when
        the run must stop now (before its next optimizer step)."""
        t0 = time.process_time()
        self.batches += 1
        self.training.extend(rollouts)
        alpha = self.settings.alpha / self.settings.batches
        tests = compare(self.reference, self.training, self.weights, self.kinds, self.tools, alpha, self.population,
                        prompts_only=self.resumed, prepared=self.prepared)
        diverged = [t for t in tests if t["diverged"]]
        check = {"step": step, "batch": self.batches, "rollouts": len(self.training),
                 "prompts": len({json.dumps(r["group"]) for r in self.training}), "time": round(time.time(), 3),
                 "alpha": alpha, "verdict": "diverged" if diverged else "clean", "tests": tests}
        self.record["checks"].append(check)
        stop = False
        if diverged:
            self.record["status"] = "diverged"
            stop = self.settings.stop_on == "diverged"
            self.record["stopped"] = {"step": step, "summary": "; ".join(t["summary"] for t in diverged),
                                      "what_to_do": what_to_do(self.settings)} if stop else None
        elif self.record["status"] != "diverged" and not self.wants_batch():
            self.record["status"] = "clean"
        self.record["cost_s"] = round(self.record["cost_s"] + time.process_time() - t0, 4)
        self._write()
        self._events(step, check, diverged)
        self._say(step, check, diverged)
        return stop

    # --- records ------------------------------------------------------------------------------------------------

    def _write(self) -> None:
        self.output.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.output / RECORD, self.record)

    def _append(self, event: dict) -> None:
        with (self.output / WATCH_LOG).open("a", encoding="utf-8") as fh:   # appended: a crash keeps what was said
            fh.write(json.dumps({**event, "time": round(time.time(), 3)}, default=str) + "\n")

    def _events(self, step: int, check: dict, diverged: list[dict]) -> None:
        self._append({"event": "audit", "step": step, "batch": check["batch"], "verdict": check["verdict"],
                      "rollouts": check["rollouts"], "summary": [t["summary"] for t in diverged]
                      or [f"{len(check['tests'])} comparisons clean at alpha {check['alpha']:.0e}"]})
        if diverged:
            self._append({"event": "stop" if self.settings.stop_on == "diverged" else "would_stop",
                          "id": "review_audit", "severity": "critical", "title": TITLE,
                          "evidence": [t["summary"] for t in diverged], "recommendation": what_to_do(self.settings),
                          "variant": None, "brief_change": {}, "checks": check["batch"], "step": step,
                          "checkpoint": None})

    def _say(self, step: int, check: dict, diverged: list[dict]) -> None:
        ref = self.record["reference"]
        if not diverged:
            if not self.wants_batch():
                self.stream.write(f"  audit: training's first rollouts match the review ({check['rollouts']} rollouts "
                                  f"of {check['prompts']} prompts against {ref['rollouts']} inspected; "
                                  f"{len(check['tests'])} comparisons clean at alpha {check['alpha']:.0e})\n")
                self.stream.flush()
            return
        verb = "STOPPED the run" if self.settings.stop_on == "diverged" else "would stop the run (stop_on: never)"
        lines = [f"audit: {verb} at step {step}, before the optimizer stepped: {TITLE}"]
        lines += [f"    {t['summary']}" for t in diverged]
        lines.append(f"    ({check['rollouts']} training rollouts of {check['prompts']} prompts against the "
                     f"{ref['rollouts']} the inspection sampled from {ref['prompts']} prompts; family-wise "
                     f"alpha {check['alpha']:.0e}, tests of grouped samples with their design effects)")
        lines.append(f"    → {what_to_do(self.settings)}")
        lines.append(f"  the record: {self.output / RECORD}")
        self.stream.write("\n".join(lines) + "\n")
        self.stream.flush()


class AuditFollower:
    """The audit on a rank other than 0: it holds no reference and decides nothing, but asks for the same batches
    as rank 0 (``wants_batch``), so that every rank meets the others in the audit's collectives (a rank that skipped
    them would meet rank 0's gather in a collective of its own, and the run would break)."""

    def __init__(self, settings: AuditSettings):
        self.settings = settings
        self.batches = 0

    def wants_batch(self) -> bool:
        return self.batches < self.settings.batches

    def observed_on_rank_0(self) -> bool:
        """The batch rank 0 observed counts here too; rank 0 decides the stop: False here."""
        self.batches += 1
        return False


def read_audit(output: Path) -> dict | None:
    """``output/review_audit.json``, or None (none written, or unreadable)."""
    try:
        data = json.loads((Path(output) / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def review_audit(check, output: Path, resumed: bool = False, main_process: bool = True,
                 broadcast=None) -> ReviewAudit | AuditFollower | None:
    """The audit a rendered train.py gives its trainer, from the run check (``RunCheck.verified["audit"]``, which
    rank 0 holds): None for a check that verified no review (the smoke test). The reference file is read again here
    and must have the digest the check verified. With several processes, ``broadcast`` sends rank 0's object to
    every rank (accelerate's ``broadcast_object_list``): the other ranks get an ``AuditFollower`` with rank 0's
    settings, or rank 0's refusal.

    Raises:
        GateRefused: the reference changed since the check, or cannot be read (on every rank).
    """
    from grpo_rlvr.errors import GateRefused

    audit, refusal = None, None
    if main_process:
        try:
            audit = _main_audit(check, output, resumed)
        except GateRefused as e:
            refusal = str(e)
    if broadcast is not None:
        shared = broadcast({"refusal": refusal, "settings": audit.settings.to_dict() if audit else None})
        refusal = shared["refusal"]
        if not main_process and shared["settings"] is not None:
            audit = AuditFollower(AuditSettings.from_dict(shared["settings"]))
    if refusal is not None:
        raise GateRefused(refusal)
    return audit


def _main_audit(check, output: Path, resumed: bool) -> ReviewAudit | None:
    from grpo_rlvr.audit.reference import digest
    from grpo_rlvr.errors import GateRefused

    spec = (getattr(check, "verified", None) or {}).get("audit")
    if not spec:
        return None
    try:
        data = Path(spec["reference"]).read_bytes()
    except OSError as e:
        raise GateRefused(f"{spec['reference']}: cannot be read ({e.strerror or e}) since the run check read it; "
                          "train again (the gate checks it again)") from None
    if digest(data) != spec["digest"]:
        raise GateRefused(f"{spec['reference']}: changed since the run check verified it; train again (the gate "
                          "checks it again), and re-inspect if you did not change it")
    import scipy.stats  # noqa: F401  (imported here, before training, not inside the step the audit runs in)

    audit = ReviewAudit(json.loads(data), AuditSettings.from_dict(spec["settings"]), output, spec["inspection"],
                        spec.get("draw"), resumed=resumed)
    audit.start()
    return audit


__all__ = ["DEFAULT_ALPHA", "RECORD", "STOP_ON", "AuditFollower", "AuditSettings", "ReviewAudit", "read_audit", "review_audit",
           "what_to_do"]
