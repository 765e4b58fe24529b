"""``grpo-rlvr inspect``: sample outputs with the training sampler, score them with every reward, write the
artifact a person then reviews (``grpo-rlvr review``) and the gate checks."""

from __future__ import annotations

import json
import logging
import math
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

from grpo_rlvr import __version__
from grpo_rlvr.audit.reference import AUDIT_FILE, build_reference, digest, reference_bytes
from grpo_rlvr.brief import load_brief
from grpo_rlvr.brief.loader import reward_identity, sampling_identity
from grpo_rlvr.cpu_time import check_sampling_time
from grpo_rlvr.dataset.rows import load_rows
from grpo_rlvr.errors import ConfigError, InputFileError
from grpo_rlvr.files import atomic_directory, move_aside, write_json_atomic, write_jsonl_atomic
from grpo_rlvr.identity import dataset_identity, fingerprint, model_identity
from grpo_rlvr.inspection.artifact import (
    FORMAT_VERSION,
    MANIFEST,
    REPORT,
    SAMPLES,
    candidate_digest,
    manifest_seal,
    sample_digest,
    sample_fields,
)
from grpo_rlvr.inspection.draws import DRAWS, earlier_in_folder, kept_as, new_draw, record_draw
from grpo_rlvr.inspection.report import render_report
from grpo_rlvr.inspection.review_lock import holder
from grpo_rlvr.inspection.selection import OUTCOMES, outcome, select
from grpo_rlvr.inspection.signing_policy import policy_record
from grpo_rlvr.protected_targets import refuse_target
from grpo_rlvr.records.audit_rollouts import prompt_digest, rollout_record
from grpo_rlvr.rewards import from_brief
from grpo_rlvr.rollout.road import roll_out
from grpo_rlvr.rollout.scoring import score_trajectories
from grpo_rlvr.tools.loading import bound_elsewhere, load_tools

log = logging.getLogger(__name__)
MIN_SAMPLES, MAX_SAMPLES = 50, 100
SEED_RANGE = 2**31 - 1   # the sampling seed: the draw's, within what torch and numpy take


@dataclass
class InspectResult:
    dir: Path
    samples: int
    prompts: int
    outcomes: dict
    seconds: float
    weak_samples: dict = field(default_factory=dict)  # reward -> samples with tests run inside the sandbox
    engine: dict = field(default_factory=dict)        # the engine that sampled (also in the manifest)

    def to_dict(self) -> dict:
        return {"dir": str(self.dir), "samples": self.samples, "prompts": self.prompts, "outcomes": self.outcomes,
                "seconds": round(self.seconds, 2), "weak_samples": self.weak_samples, "engine": self.engine,
                "next": f"grpo-rlvr review {self.dir}"}

    def format(self) -> str:
        mix = ", ".join(f"{k} {v}" for k, v in self.outcomes.items())
        weak = "".join(f"Scored weakly by {name} (test code ran in the sandbox): {count} of {self.samples} "
                       "samples.\n" for name, count in self.weak_samples.items())
        engine = f", sampled with {self.engine['name']}" if self.engine else ""
        return (f"Wrote {self.samples} scored samples from {self.prompts} prompts to {self.dir} ({mix}{engine}).\n"
                f"{weak}Read every one before training: grpo-rlvr review {self.dir}\n"
                f"Or open {self.dir / REPORT} in a browser.")


def reviewed_work(out: Path, count_oracle: bool = True) -> int:
    """How many samples in the inspection folder ``out`` carry a verdict or a note (0 when there is none).
    ``count_oracle=False``: only a person's (the demo's oracle verdicts left out; an unreadable line counts)."""
    try:
        lines = (Path(out) / SAMPLES).read_text(encoding="utf-8").splitlines()
    except (FileNotFoundError, NotADirectoryError):
        return 0
    except OSError as e:
        raise InputFileError(f"{Path(out) / SAMPLES}: unreadable ({e}); move the folder aside or pass --out") from None
    n = 0
    for line in filter(str.strip, lines):
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            n += 1            # unreadable: it may be someone's work, so it counts
            continue
        verdict = row.get("verdict") if isinstance(row, dict) else None
        n += bool(verdict) and (count_oracle or not isinstance(verdict, dict)
                                or verdict.get("reviewer_kind") != "oracle")
    return n


def protect_review(out: Path, force: bool) -> Path | None:
    """Refuse to replace an inspection that holds a person's verdicts, unless ``force``: then move it aside.

    Returns the backup folder (``inspection.bak-<UTC time>``) or None. Raises ConfigError (exit 2) naming
    ``--force``; a review in progress is refused even with ``force``.
    """
    out = Path(out)
    running = holder(out) if out.is_dir() else None
    if running is not None:
        raise ConfigError(f"{out}: a review is running on this inspection (pid {running.get('pid', '?')}, "
                          f"{running.get('reviewer', '?')}); let it finish or quit it before inspecting again")
    n = reviewed_work(out)
    if not n:
        return None
    if not force:
        raise ConfigError(f"{out}: holds {n} verdict(s) from a review; inspecting again would replace them. "
                          "If the review is unfinished, resume it with `grpo-rlvr review "
                          f"{out}`; to start over (e.g. after fixing a reward), re-run with --force, which keeps the "
                          f"old folder as {out.name}.bak-<time>/")
    return move_aside(out)


def inspect_rewards(brief_path, out_dir=None, samples: int | None = None, progress=None, batch_size: int = 64,
                    force: bool = False, allow_cpu: bool = False) -> InspectResult:
    """Sample, score and write the inspection artifact.

    Args:
        brief_path: the brief YAML.
        out_dir: the artifact folder (default ``<output_dir>/inspection``); replaced atomically.
        samples: how many samples to keep, 50–100 (default: the brief's, 64).
        force: replace a folder that holds verdicts, keeping it as ``<name>.bak-<time>/``.
        allow_cpu: sample on a CPU even when the estimated time is above ``cpu_time.CPU_LIMIT_S``.
    Raises:
        ConfigError: ``samples`` out of range, or the folder holds verdicts and ``force`` is not set.
        CpuTimeRefused: sampling the brief's model on this CPU would take too long, and ``allow_cpu`` is not set.
    """
    t0 = time.monotonic()
    brief = load_brief(brief_path)
    n = samples or brief.inspection.samples
    if not MIN_SAMPLES <= n <= MAX_SAMPLES:
        raise ConfigError(f"--samples: {n} is outside {MIN_SAMPLES}–{MAX_SAMPLES}; a person reads 50 to 100 samples")
    out = refuse_target(Path(out_dir) if out_dir else brief.output_dir / "inspection", "--out", own="inspection",
                        replaces=True)
    if not force:
        protect_review(out, force=False)  # fail before sampling; with force the folder moves aside at write time
    from grpo_rlvr.rollout.engine_fit import unapplied
    from grpo_rlvr.rollout.road import choose_engine

    dropped = unapplied(brief.grpo, choose_engine(brief))   # never review what training cannot sample
    if dropped:
        raise ConfigError(dropped, source=str(brief.path))
    rows = load_rows(brief)
    draw = new_draw()   # fresh randomness: the rows a person will read cannot be known in advance
    rng = random.Random(draw["seed"])
    chosen_rows = rng.sample(range(len(rows)), min(brief.inspection.prompts, len(rows)))
    # 3× candidates, so outcomes can be balanced; in whole groups of num_generations, as training samples them, so
    # that the review audit compares like with like (audit/two_sample.py)
    group = int(brief.grpo["num_generations"])
    per_prompt = group * math.ceil(max(2, math.ceil(3 * n / len(chosen_rows))) / group)
    check_sampling_time(brief, per_prompt * len(chosen_rows), allow_cpu, "inspect")
    rewards = from_brief(brief)
    seed = draw["seed"] % SEED_RANGE
    drawn = roll_out(brief, [rows[i] for i in chosen_rows], per_prompt, seed, progress=progress,
                     batch_size=batch_size, rewards=rewards)
    candidates = [{"prompt_index": chosen_rows[i], "trajectory": t, "rendered": rendered_text(drawn.tokenizer, t)}
                  for i, t in zip(drawn.prompt_index, drawn.trajectories, strict=True)]
    samples_out = write_artifact(brief, candidates, drawn.rows, n, out,
                                 sampling={**brief.sampling(), "seed": seed,
                                           "candidates_per_prompt": per_prompt, "engine": drawn.engine.name,
                                           "engine_settings": drawn.engine.settings},
                                 force=force, rewards=rewards, draw=draw, population=[r["prompt"] for r in rows])
    mix = {o: sum(1 for x in samples_out if x["outcome"] == o) for o in ("malformed", "wrong", "partial", "correct")}
    prompts_used = len({x["prompt_index"] for x in samples_out})
    from grpo_rlvr.sandbox import weak_sample_counts

    return InspectResult(out, len(samples_out), prompts_used, mix, time.monotonic() - t0,
                         weak_sample_counts(samples_out), drawn.engine.to_dict())


def write_artifact(brief, candidates: list[dict], rows: list[dict], n: int, out: Path, sampling: dict,
                   force: bool = False, rewards: list | None = None, draw: dict | None = None,
                   population: list | None = None) -> list[dict]:
    """Score candidate trajectories, pick ``n`` spread across prompts and outcomes, write the artifact atomically.

    Args:
        brief: the validated Brief.
        candidates: ``{"prompt_index", "trajectory"}`` per candidate (a ``rollout.trajectory.Trajectory``).
        rows: the mapped dataset row of each candidate (``prompt`` + ground-truth columns).
        n: samples to keep. out: the artifact folder (replaced atomically). sampling: recorded in the manifest.
        force: replace a folder holding verdicts (moved aside first); refused otherwise (ConfigError).
        rewards: the brief's reward objects, when built already.
        draw: the draw the candidates come from (``draws.new_draw``; default: a new one), whose seed picks the
            samples.
        population: the prompt of every row the draw was made from (the review audit's "reviewed data"; None:
            not recorded, and training does not check that its prompts are among them).
    Returns:
        The written samples.
    """
    rewards = rewards if rewards is not None else from_brief(brief)
    draw = draw if draw is not None else new_draw()
    kinds = {r.name: r.kind for r in rewards}
    trajectories = [c["trajectory"] for c in candidates]
    scored = score_trajectories(rewards, brief.reward_weights, trajectories, rows)
    pool = []
    for c, t, row, sc in zip(candidates, trajectories, rows, scored, strict=True):
        scores = {name: {"score": v.score, "reason": v.reason} for name, v in sc["scores"].items()}
        pool.append({"prompt_index": c["prompt_index"], **sample_fields(t),
                     "columns": {k: v for k, v in row.items() if k != "prompt"},
                     **({"rendered": c["rendered"]} if c.get("rendered") else {}),
                     "scores": scores, "total": sc["total"],
                     "outcome": outcome({k: v["score"] for k, v in scores.items()}, kinds)})
    picked = select(pool, n, draw["seed"])
    samples_out = [{"id": f"s{i:03d}", **c, "verdict": None} for i, c in enumerate(picked)]
    reference = audit_reference(brief, rewards, pool, trajectories, rows, population)
    reference_data = reference_bytes(reference)   # written as audit.json; its digest goes under the seal
    # Identities taken now, after sampling: a hub id without a revision is pinned to the commit just loaded.
    model_id, data_id = model_identity(brief.model), dataset_identity(brief.dataset)
    settings = sampling_identity(brief.grpo, brief.model, brief.method, brief.tools, brief.audit)
    bound = fingerprint(model_id, data_id, reward_identity(brief.rewards), settings)
    manifest = {
        "format_version": FORMAT_VERSION,
        "tool": f"grpo-rlvr {__version__}",
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "brief": {"path": str(brief.path), "name": brief.name, "fingerprint": bound,
                  "model": brief.model.name_or_path, "dataset": brief.dataset.path},  # as written: shown, not compared
        "model": model_id,
        "dataset": data_id,
        "sampling": sampling,
        "bound_settings": settings,   # what the gate compares, key by key (brief/bound_settings.py)
        "signing": policy_record(brief),   # the signing policy now, which the gate keeps (signing_policy.py)
        "rewards": [{"name": r.name, "kind": r.kind, "weight": w, "params": r.params, "fingerprint": r.fingerprint,
                     "notes": dict(r.notes)}  # e.g. the sandbox's isolation layers for unit_tests
                    for r, w in zip(rewards, brief.reward_weights, strict=True)],
        # the tools' code by its bytes (the gate compares it before the brief, which imports it, loads)
        "tools": None if brief.tools is None else load_tools(brief.tools.to_dict(), brief.base_dir,
                                                             bound_elsewhere(brief)).record,
        "sample_count": len(samples_out),
        "prompt_count": len({x["prompt_index"] for x in samples_out}),
        "samples_digest": sample_digest(samples_out),
        "audit": {"file": AUDIT_FILE, "digest": digest(reference_data),
                  "candidates": len(pool), "population": None if reference["population"] is None
                  else reference["population"]["rows"]},
    }
    earlier = earlier_in_folder(out, reviewed_work(out)) if out.is_dir() else []
    backup = protect_review(out, force)
    this, folder_log = record_draw(draw, kept_as(earlier, backup), out, bound, {
        "candidates": len(pool), "samples": len(samples_out), "samples_digest": manifest["samples_digest"],
        "outcomes": {o: sum(1 for x in samples_out if x["outcome"] == o) for o in OUTCOMES}})
    manifest["draw"] = this
    manifest["draws_digest"] = digest(jsonl_bytes(folder_log))
    manifest["seal"] = manifest_seal(manifest)
    with atomic_directory(out) as tmp:
        write_json_atomic(tmp / MANIFEST, manifest)
        write_jsonl_atomic(tmp / SAMPLES, samples_out)
        (tmp / AUDIT_FILE).write_bytes(reference_data)
        (tmp / DRAWS).write_bytes(jsonl_bytes(folder_log))
        render_report(tmp, manifest, samples_out, final_dir=out)
    return samples_out


def rendered_text(tokenizer, trajectory) -> dict | None:
    """The prompt and completion as the model read and wrote them: the tokenizer's text of their token ids, special
    tokens and the chat template's markup included (None when the tokenizer cannot decode)."""
    decode = getattr(tokenizer, "decode", None) or getattr(getattr(tokenizer, "tokenizer", None), "decode", None)
    if decode is None:
        return None
    return {"prompt": decode(list(trajectory.prompt_ids), skip_special_tokens=False),
            "completion": decode(list(trajectory.completion_ids), skip_special_tokens=False)}


def jsonl_bytes(rows: list[dict]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows).encode()


def audit_reference(brief, rewards: list, pool: list[dict], trajectories: list, rows: list[dict],
                    population: list | None) -> dict:
    """What the review audit compares training with (``audit.reference``): every candidate as the audit reads a
    rollout, with its outcome and the digest of its trajectory (the gate checks the pick from these); the audit
    compares each prompt's first ``num_generations``, a group as training draws one."""
    tools = brief.tools is not None
    records = []
    for c, t, row in zip(pool, trajectories, rows, strict=True):
        rec = rollout_record(c["prompt_index"], row["prompt"], len(t.prompt_ids), t.completion, t.completion_ids,
                             t.loss_mask, t.truncated, {k: v["score"] for k, v in c["scores"].items()}, tools)
        records.append({**rec, "outcome": c["outcome"], "digest": candidate_digest(c)})
    digests = None if population is None else [prompt_digest(p) for p in population]
    return build_reference(records, digests, dict(zip([r.name for r in rewards], brief.reward_weights, strict=True)),
                           {r.name: r.kind for r in rewards}, tools, int(brief.grpo["num_generations"]))
