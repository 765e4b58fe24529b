"""``grpo-rlvr gate``: the Phase 1 checker. Passes only when every rule of docs/design.md §6 holds.

1. artifact present and well-formed; 50 ≤ samples ≤ 100; ids unique; enough distinct prompts; samples intact;
   the manifest unedited (its seal matches what inspect wrote)
2. every sample has a verdict by a person (kind ``human``, a reviewer, a reading time, bound to this
   manifest's seal and to the sample it judged); none is ``disagree``; the reading is plausible: the median
   time per sample is at least ``MIN_MEDIAN_SECONDS`` (oracle verdicts only in the demo, never from the CLI);
   when the brief or the user asks for it, or did when inspect ran, the review is signed by a key listed in
   every allowed-signers file that applies (``inspection/signature.py``, ``inspection/signing_policy.py``)
3. reward fingerprints, params, kinds and weights match the current code and brief, and re-scoring reproduces
   the stored scores
4. the artifact belongs to this brief: reward specs, every setting that reaches sampling or scoring (the whole
   GRPOConfig but for ``brief/bound_settings.UNBOUND``, key by key), and the model and data by content
   (``identity``: file hashes, an adapter's base, a hub id's commit pinned at inspect), never by how their paths
   are written
5. the reward is composite (format + correctness) and ranks well-formed-wrong above malformed; a judge used as
   the correctness part agrees with the person at Cohen's kappa ≥ ``inspection.judge_min_kappa`` (0.6)
6. there is signal: some correctness > 0, and the totals are not all equal

The gate only reads: it never writes into the artifact it verifies. Imports no torch: rewards that need no
model are re-scored in well under a second.

Demo acceptance (oracle verdicts) is the ``demo`` argument of :func:`check_gate`, a Python value that only
``grpo-rlvr demo`` passes in its own process. No file, environment variable or command-line flag turns it on,
so editing files cannot make an oracle's verdicts count.

Each rule is a function of one :class:`GateContext` (artifact, brief, current rewards, calibration, built once)
that returns its problems and its fix; ``RULES`` lists them in order, as ``diagnosis.DETECTORS`` does.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from grpo_rlvr import work_trace
from grpo_rlvr.errors import GateError, GateRefused, GrpoRlvrError
from grpo_rlvr.inspection.artifact import (
    FORMAT_VERSION,
    VERDICTS,
    Artifact,
    candidate_digest,
    judged_digest,
    load_artifact,
    manifest_seal,
    sample_digest,
)
from grpo_rlvr.rollout.trajectory import STOPS

if TYPE_CHECKING:
    from grpo_rlvr.brief import Brief
    from grpo_rlvr.rewards import Reward

MIN_SAMPLES, MAX_SAMPLES = 50, 100
MIN_MEDIAN_SECONDS = 1.0  # a median under a second per sample is not reading (prompt, completion, every score)
MIN_PROMPT_SHARE = 0.25   # distinct prompts ≥ a quarter of the samples (16 of 64)
SCORE_TOLERANCE = 1e-6
JUDGE_RECHECKS = 8        # reviewed samples a judge is asked again at each gate check, drawn at random


@dataclass
class Rule:
    id: int
    name: str
    passed: bool
    problems: list[str] = field(default_factory=list)
    fix: str = ""


@dataclass
class GateResult:
    dir: Path
    rules: list[Rule]
    calibration: dict
    weak_samples: dict = field(default_factory=dict)  # reward -> samples with tests run inside the sandbox
    degraded_isolation: dict = field(default_factory=dict)  # reward -> isolation it was allowed to lack

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.rules)

    def to_dict(self) -> dict:
        return {"dir": str(self.dir), "passed": self.passed,
                "rules": [{"id": r.id, "name": r.name, "passed": r.passed, "problems": r.problems, "fix": r.fix}
                          for r in self.rules],
                "calibration": self.calibration, "weak_samples": self.weak_samples,
                "degraded_isolation": self.degraded_isolation}

    def format(self) -> str:
        lines = [f"Gate {'PASSED' if self.passed else 'FAILED'} for {self.dir}"]
        for r in self.rules:
            lines.append(f"  [{'ok' if r.passed else 'FAIL'}] {r.id}. {r.name}")
            for p in r.problems:
                lines.append(f"         - {p}")
            if not r.passed and r.fix:
                lines.append(f"         fix: {r.fix}")
        if self.calibration.get("rewards"):
            lines.append("  Calibration (reward vs reviewer):")
            for name, c in self.calibration["rewards"].items():
                kappa = "n/a" if c["kappa"] is None else f"{c['kappa']:.2f}"
                need = f"  (judge: needs kappa ≥ {c['min_kappa']:.2f})" if "min_kappa" in c else ""
                lines.append(f"    {name:<16} agreement {c['agreement']:.2f}  kappa {kappa}  (n={c['n']}){need}")
        for name, count in self.weak_samples.items():
            lines.append(f"  Scored weakly by {name} (test code ran in the sandbox): {count} samples")
        for name, what in self.degraded_isolation.items():
            lines.append(f"  Scored by {name} with degraded sandbox isolation, {what}")
        return "\n".join(lines)


def check_gate(directory: str | Path, brief: str | Path | Brief | None = None,
               demo: bool = False) -> GateResult:
    """Check an inspection folder against the brief and the current reward code.

    Args:
        directory: the inspection folder.
        brief: the brief: a loaded ``Brief``, or its path (default: the path recorded in the manifest).
        demo: accept oracle verdicts (only ``grpo-rlvr demo`` passes True; never the CLI).
    Returns:
        GateResult; ``.passed`` tells.
    Raises:
        GateError: the folder is unusable, or the manifest names no brief and none was given.
        GateRefused: a file of a user reward's code changed since the inspection (``reward_files_changed``): the
            brief, whose loading imports its rewards, is not loaded.
        ConfigError: the brief is invalid.
    """
    ctx = gate_context(directory, brief, demo)
    art, samples, cal = ctx.artifact, ctx.samples, ctx.calibration
    rules: list[Rule] = []
    for rule_id, name, check in RULES:
        problems, fix = check(ctx)
        rules.append(Rule(rule_id, name, not problems, problems, fix))
        if problems:
            ctx.failing.add(rule_id)

    from grpo_rlvr.sandbox import degraded_isolation_notes, weak_sample_counts

    return GateResult(art.dir, rules, cal, weak_sample_counts(samples),
                      degraded_isolation_notes(ctx.manifest.get("rewards")))


# --- the context every rule reads ---------------------------------------------------------------------------

@dataclass
class GateContext:
    """What the rules read, built once: the artifact, the brief, the rewards built from it now, their kinds and
    the calibration against the person's verdicts. ``samples`` holds only the well-shaped samples; the others are
    in ``shapeless`` (rule 1 names them), so an edited file is a failing rule, never a crash."""

    artifact: Artifact
    samples: list[dict]
    shapeless: list[tuple[int, str]]   # (line index, what is wrong)
    brief: Brief
    rewards: list[Reward]              # built from the brief now; empty when they cannot be built
    reward_error: str | None           # why they cannot be built, or None
    kinds: dict[str, str]              # reward name -> kind (from the rewards, else from the manifest)
    calibration: dict
    demo: bool
    failing: set[int] = field(default_factory=set)  # ids of the rules that failed so far (the table's order)

    @property
    def manifest(self) -> dict:
        return self.artifact.manifest

    def of_kind(self, *kinds: str) -> list[str]:
        return [k for k, v in self.kinds.items() if v in kinds]


def gate_context(directory: str | Path, brief: str | Path | Brief | None = None,
                 demo: bool = False) -> GateContext:
    """Load the artifact and the brief and build the current rewards (see :func:`check_gate` for the arguments)."""
    from grpo_rlvr.brief import Brief, load_brief

    art = load_artifact(directory)
    m = art.manifest
    _check_manifest_shape(art.dir, m)
    shapeless = [(i, why) for i, smp in enumerate(art.samples) if (why := _shape_problem(smp))]
    drop = {i for i, _ in shapeless}
    samples = [smp for i, smp in enumerate(art.samples) if i not in drop]
    if not isinstance(brief, Brief):
        brief_path = brief or (m.get("brief") or {}).get("path")
        if not brief_path:
            raise GateError(f"{art.dir}: the manifest records no brief; pass --brief BRIEF")
        # loading the brief imports its rewards: reward code edited since the inspection never runs here
        changed = reward_files_changed(m, Path(brief_path).resolve().parent)
        if changed:
            raise GateRefused(changed)
        brief = load_brief(brief_path)
        reward_error = None
    else:   # a brief the caller loaded: its reward files were not compared yet
        reward_error = reward_files_changed(m, brief.base_dir)
    rewards = []
    try:
        from grpo_rlvr.rewards import from_brief

        if reward_error is None:   # never import (run) reward code that is not the inspected code
            rewards = from_brief(brief)
    except GrpoRlvrError as e:
        reward_error = str(e)
    kinds = {r.name: r.kind for r in rewards} or {r.get("name"): r.get("kind") for r in m.get("rewards", [])}
    return GateContext(art, samples, shapeless, brief, rewards, reward_error, kinds, calibration(samples, kinds),
                       demo)


def reward_files_changed(manifest: dict, base_dir: Path) -> str | None:
    """Why the user rewards of an inspection may not even be imported: a file of their code (``notes["sources"]``,
    recorded at inspect, relative to the brief's folder ``base_dir``) changed since. Importing a reward (which
    loading its brief does) runs its module code in this process, before its fingerprint is compared, so edited
    code could forge the comparison; the files are compared by their bytes first, with nothing imported."""
    from grpo_rlvr.rewards.user import changed_sources

    for r in manifest.get("rewards") or []:
        notes = r.get("notes") if isinstance(r, dict) else None
        changed = changed_sources(notes.get("sources"), base_dir) if isinstance(notes, dict) else []
        if changed:
            return (f"reward {r.get('name')!r}: source code changed since the inspection (fingerprint mismatch) in "
                    f"{', '.join(changed)}; it was not imported (importing runs its code); re-inspect and review")
    tools = manifest.get("tools")
    changed = changed_sources(tools.get("sources"), base_dir) if isinstance(tools, dict) else []
    if changed:   # the brief's tools are imported when it loads, as its rewards are
        return (f"tools: their code or their folder's files changed since the inspection in {', '.join(changed)}; "
                "nothing of them was imported "
                "(importing runs its code); re-inspect and review")
    return None


# --- the rules: each returns its problems (none: it passes) and the fix ------------------------------------

def artifact_well_formed(ctx: GateContext) -> tuple[list[str], str]:
    """Rule 1: the artifact is complete and unedited."""
    m, samples, n = ctx.manifest, ctx.samples, len(ctx.samples)
    problems = []
    if m.get("format_version") != FORMAT_VERSION:
        problems.append(f"manifest format_version is {m.get('format_version')!r}, expected {FORMAT_VERSION}")
    if not MIN_SAMPLES <= n <= MAX_SAMPLES:
        problems.append(f"{n} samples; a person must read between {MIN_SAMPLES} and {MAX_SAMPLES}")
    if m.get("sample_count") != n:
        problems.append(f"samples.jsonl has {n} samples but the manifest recorded {m.get('sample_count')} "
                        "(samples were removed or added)")
    problems += [f"samples.jsonl line {i + 1}: {why}" for i, why in ctx.shapeless[:5]]
    if len(ctx.shapeless) > 5:
        problems.append(f"… and {len(ctx.shapeless) - 5} more malformed samples")
    ids = [s.get("id") for s in samples]
    dup = sorted({i for i in ids if ids.count(i) > 1}, key=str)
    if dup:
        problems.append(f"duplicate sample ids: {', '.join(map(str, dup))}")
    prompts = {repr(s.get("prompt")) for s in samples}
    need = math.ceil(MIN_PROMPT_SHARE * n)
    if n and len(prompts) < need:
        problems.append(f"only {len(prompts)} distinct prompts among {n} samples; need at least {need}")
    if not dup and m.get("samples_digest") != sample_digest(samples):
        problems.append("the samples' prompts/completions/ground truth differ from what inspect wrote "
                        "(samples edited, removed, added or reordered)")
    if m.get("seal") != manifest_seal(m):
        problems.append("manifest.json differs from what inspect wrote (its seal does not match): the recorded "
                        "rewards, params, fingerprints, sampling or digests were edited")
    if not problems:
        problems += _draw_problems(ctx)
    return problems, "re-run `grpo-rlvr inspect BRIEF` (50–100 samples), then review again"


def _draw_problems(ctx: GateContext) -> list[str]:
    """The samples are the pick ``inspect`` makes from the candidates it sampled (the audit reference), with the
    draw the manifest records; the folder's log of draws is the one inspect wrote."""
    from grpo_rlvr.audit.reference import digest, load_reference
    from grpo_rlvr.inspection.draws import DRAWS
    from grpo_rlvr.inspection.selection import outcome, select

    m, folder = ctx.manifest, ctx.artifact.dir
    try:
        ref = load_reference(folder, m)
    except GateError as e:
        return [str(e)]
    try:
        log = (folder / DRAWS).read_bytes()
    except OSError:
        log = None
    if log is None or digest(log) != m.get("draws_digest"):
        return [f"{folder / DRAWS}: missing or not the log of draws inspect wrote (earlier draws hidden or edited)"]
    seed = (m.get("draw") or {}).get("seed") if isinstance(m.get("draw"), dict) else None
    if not isinstance(seed, int):
        return ["manifest.json records no draw seed, so the pick of samples cannot be checked"]
    kinds = {r.get("name"): r.get("kind") for r in m.get("rewards", [])}
    try:
        pool = [{"prompt_index": r["group"], "digest": r["digest"], "outcome": outcome(r["scores"], kinds)}
                for r in ref["rollouts"]]
    except (KeyError, TypeError, AttributeError):
        return [f"{folder / 'audit.json'}: a candidate lacks its group, digest or scores; re-run `grpo-rlvr inspect`"]
    expected = [c["digest"] for c in select(pool, len(ctx.samples), seed)]
    shown = [candidate_digest(s) for s in ctx.samples]
    if expected != shown:
        differ = sum(1 for a, b in zip(expected, shown, strict=False) if a != b) + abs(len(expected) - len(shown))
        return [f"{differ} of {len(shown)} samples are not the ones inspect picked from its {len(pool)} candidates "
                "with the recorded draw: the samples a person reads must be a fair pick of what was sampled"]
    return []


def reviewed_by_a_person(ctx: GateContext) -> tuple[list[str], str]:
    """Rule 2: every sample has a person's verdict, none disagrees, and the review is signed where required."""
    from grpo_rlvr.inspection.signature import signing_problems

    samples, problems = ctx.samples, []
    unreviewed = [s.get("id") for s in samples if not isinstance(s.get("verdict"), dict)
                  or s["verdict"].get("verdict") not in VERDICTS]
    if unreviewed:
        problems.append(f"{len(unreviewed)} sample(s) without a verdict: {', '.join(map(str, unreviewed[:8]))}"
                        + (" …" if len(unreviewed) > 8 else ""))
    disagreed = [s for s in samples if (s.get("verdict") or {}).get("verdict") == "disagree"]
    problems += [f"{s.get('id')} marked disagree: {s['verdict'].get('note') or 'no note'}" for s in disagreed[:8]]
    problems += _reviewer_problems(samples, ctx.manifest, ctx.demo)
    # the person's signature too, when the brief or the user asks for one, or did when inspect ran
    signed = signing_problems(ctx.artifact.dir, ctx.manifest, samples, ctx.brief)
    if signed:
        return problems + signed, signed[0].split("; ")[-1]
    if disagreed:
        return problems, ("a disagreement means the reward is wrong: fix it, re-run `grpo-rlvr inspect --force`, "
                          "then `grpo-rlvr review DIR`")
    return problems, ("the person runs `grpo-rlvr review DIR` in their own terminal and reads every sample (it "
                      "resumes where it stopped; do not re-inspect)")


def rewards_reproduce(ctx: GateContext) -> tuple[list[str], str]:
    """Rule 3: the rewards' code, params, kinds and weights are the inspected ones, and the scores reproduce."""
    problems = [] if ctx.reward_error is None else [f"the brief's rewards cannot be built now: {ctx.reward_error}"]
    stored = {r.get("name"): r for r in ctx.manifest.get("rewards", []) if isinstance(r, dict)}
    for r in ctx.rewards:
        old = stored.get(r.name)
        if old is None:
            problems.append(f"reward {r.name!r} was not part of the inspection")
        elif old.get("fingerprint") != r.fingerprint:
            what = "params changed" if old.get("params") != r.params else "source code changed"
            problems.append(f"reward {r.name!r}: {what} since the inspection (fingerprint mismatch)")
        elif old.get("params") != r.params or old.get("kind") != r.kind:
            problems.append(f"reward {r.name!r}: the manifest records params {old.get('params')!r} / kind "
                            f"{old.get('kind')!r} but the brief gives {r.params!r} / {r.kind!r}")
    weights = dict(zip([r.name for r in ctx.rewards], ctx.brief.reward_weights, strict=True)) if ctx.rewards else {}
    for name, w in weights.items():
        if name in stored and not _same(stored[name].get("weight"), w):
            problems.append(f"reward {name!r}: the manifest records weight {stored[name].get('weight')!r}, the "
                            f"brief {w!r}")
    problems += [f"reward {name!r} was inspected but is no longer in the brief"
                 for name in set(stored) - {r.name for r in ctx.rewards}]
    problems += _tools_changed(ctx)
    if ctx.rewards and not problems and 1 not in ctx.failing:  # re-score only an intact artifact
        problems += _rescore(ctx.rewards, ctx.brief.reward_weights, ctx.samples)
    return problems, ("the reward code or params changed, or stored scores were edited: re-run `grpo-rlvr inspect` "
                      "and review the new samples")


def _tools_changed(ctx: GateContext) -> list[str]:
    """The tools' code is the inspected code: the fingerprint the manifest recorded is the one the brief's tools
    give now (their spec is compared with the other bound settings, rule 4)."""
    recorded = ctx.manifest.get("tools")
    spec = ctx.brief.tools
    if spec is None or not isinstance(recorded, dict):
        return []    # tools added or removed: rule 4 names it
    from grpo_rlvr.tools.loading import bound_elsewhere, load_tools

    try:
        now = load_tools(spec.to_dict(), ctx.brief.base_dir, bound_elsewhere(ctx.brief)).record
    except GrpoRlvrError as e:
        return [f"tools: {e}"]
    if now["fingerprint"] != recorded.get("fingerprint"):
        return ["tools: their code changed since the inspection (fingerprint mismatch)"]
    return []


def artifact_belongs_to_brief(ctx: GateContext) -> tuple[list[str], str]:
    """Rule 4: the artifact was made for this brief; what changed is said by part (model, data, rewards,
    sampling)."""
    from grpo_rlvr.brief.loader import sampling_identity
    from grpo_rlvr.identity import (
        dataset_changes,
        dataset_identity,
        model_changes,
        model_identity,
        setting_changes,
    )

    m, b, problems = ctx.manifest, ctx.brief, []
    rec = m.get("brief") or {}
    if rec.get("fingerprint") != b.fingerprint:
        # what changed, by part: the weights, an adapter, a data file or a pinned commit, a setting, said as such
        problems += model_changes(m.get("model"), model_identity(b.model))
        problems += dataset_changes(m.get("dataset"), dataset_identity(b.dataset), b.dataset.path)
        problems += setting_changes(m.get("bound_settings"), sampling_identity(b.grpo, b.model, b.method, b.tools, b.audit))
        parts = []
        if [(r.name, r.weight) for r in b.rewards] != [(r.get("name"), r.get("weight")) for r in m.get("rewards", [])]:
            parts.append("reward specs")
        if parts or not problems:
            problems.append(f"the artifact was made for another brief ({', '.join(parts) or 'fingerprint'} differ): "
                            f"{rec.get('path')}")
    return problems, ("the review holds only for what was read: re-run `grpo-rlvr inspect BRIEF --force` (the old "
                      "review is kept as a backup) and review the new samples")


def reward_is_composite(ctx: GateContext) -> tuple[list[str], str]:
    """Rule 5: a format and a correctness part, well-formed-wrong ranked above malformed, and a judge used as the
    correctness part calibrated against the person."""
    fmt, cor, problems = ctx.of_kind("format"), ctx.of_kind("correctness", "judge"), []
    if not fmt:
        problems.append("no format reward (a reward of kind 'format', e.g. `format`)")
    if not cor:
        problems.append("no correctness reward (kind 'correctness' or 'judge', e.g. `exact_match`, `math`, "
                        "`unit_tests`)")
    if fmt and cor:
        problems += _ranking_problems(ctx.samples, fmt, cor)
    judged = _judge_problems(ctx)
    if judged:
        fix = ("calibrate the judge first (rubric, scale, examples) until it agrees with your verdicts, or use a "
               "programmatic correctness reward")
    elif not fmt:
        fix = "add a `format` reward with a weight > 0 next to the correctness reward"
    elif not cor:
        fix = "add a correctness reward (e.g. `exact_match`, `math`, `unit_tests`)"
    else:
        fix = ("make correctness read inside the format's tag (drop `require_format: false`; a user reward opts in "
               "with `require_format: true`), check the format's `tag`/`allow_text_before` against the prompt, and "
               "re-inspect; `prompt.examples` lets `validate` check the ranking first")
    return problems + judged, fix


def learning_signal(ctx: GateContext) -> tuple[list[str], str]:
    """Rule 6: some sample earns correctness, and the totals differ."""
    cor, problems = ctx.of_kind("correctness", "judge"), []
    if cor and not any((_max(s, cor) or 0) > 0 for s in ctx.samples):
        problems.append("no sample earns any correctness: the model never succeeds, GRPO has nothing to amplify "
                        "(route to SFT first)")
    totals = {round(float(s.get("total", 0)), 9) for s in ctx.samples}
    if len(totals) <= 1:
        problems.append(f"every sample has the same total ({next(iter(totals), 'none')}): zero advantage, no "
                        "learning")
    return problems, "SFT first until the model succeeds sometimes (see `grpo-rlvr preflight`)"


RULES: tuple[tuple[int, str, Callable[[GateContext], tuple[list[str], str]]], ...] = (
    (1, "artifact present and well-formed", artifact_well_formed),
    (2, "every sample reviewed by a person, no disagreement", reviewed_by_a_person),
    (3, "rewards unchanged and scores reproduce", rewards_reproduce),
    (4, "artifact belongs to this brief", artifact_belongs_to_brief),
    (5, "reward is composite and ranks well-formed-wrong above malformed", reward_is_composite),
    (6, "there is learning signal", learning_signal),
)


# --- rule helpers -------------------------------------------------------------------------------------------

def _ranking_problems(samples: list[dict], fmt: list[str], cor: list[str]) -> list[str]:
    """Rule 5's ranking: every well-formed wrong answer outscores every malformed one."""
    malformed = [s["total"] for s in samples if _min(s, fmt) is not None and _min(s, fmt) <= 0]
    wf_wrong = [s["total"] for s in samples if _min(s, fmt) is not None and _min(s, fmt) > 0
                and _max(s, cor) is not None and _max(s, cor) <= 0]
    if malformed and wf_wrong and min(wf_wrong) <= max(malformed):
        return [f"a well-formed wrong answer (total {min(wf_wrong):.3f}) does not outscore every malformed one "
                f"(best malformed total {max(malformed):.3f})"]
    return []


def _judge_problems(ctx: GateContext) -> list[str]:
    """Rule 5's judge check: a judge used as the correctness part agrees with the person at the brief's kappa.
    Records the required kappa beside each judge's calibration (the report shows it)."""
    min_kappa = ctx.brief.inspection.judge_min_kappa
    problems = []
    for name in ctx.of_kind("judge"):
        c = ctx.calibration["rewards"].get(name)
        kappa = None if c is None else c["kappa"]
        if c is not None:
            c["min_kappa"] = min_kappa
        if kappa is None or kappa < min_kappa:
            shown = "undefined (its pass/fail never varies among the reviewed samples)" if kappa is None \
                else f"{kappa:.2f}"
            agree = "n/a" if c is None else f"{c['agreement']:.2f} over {c['n']} samples"
            problems.append(f"judge {name!r} is the correctness part but its kappa against the person is {shown}, "
                            f"below the required {min_kappa:.2f} (agreement {agree}); calibrate the judge first")
    return problems


def _listed(what: str, ids: list) -> list[str]:
    if not ids:
        return []
    return [f"{len(ids)} verdict(s) {what}: {', '.join(map(str, ids[:8]))}" + (" …" if len(ids) > 8 else "")]


def _reading_seconds(v: dict) -> float | None:
    """The reading time a verdict records, or None when it records none usable."""
    s = v.get("seconds")
    return s if isinstance(s, (int, float)) and not isinstance(s, bool) and s >= 0 else None


def _reviewer_problems(samples: list[dict], m: dict, demo: bool) -> list[str]:
    """Rule 2's checks that the verdicts are a person's, given for these samples, and plausible as reading."""
    verdicts = [(s.get("id"), s, s["verdict"]) for s in samples if isinstance(s.get("verdict"), dict)
                and s["verdict"].get("verdict") in VERDICTS]
    probs = []
    kinds = {"human", "oracle"}
    oracle = [i for i, _, v in verdicts if v.get("reviewer_kind") == "oracle"]
    if oracle and not demo:
        probs.append(f"{len(oracle)} verdict(s) were given by an oracle, not a person; only the demo may use one")
    probs += _listed("have no reviewer kind, or one other than 'human'",
                     [i for i, _, v in verdicts if v.get("reviewer_kind") not in kinds])
    probs += _listed("name no reviewer", [i for i, _, v in verdicts if not str(v.get("reviewer") or "").strip()])
    probs += _listed("were given for another manifest (their seal is not this inspection's)",
                     [i for i, _, v in verdicts if v.get("seal") != m.get("seal")])
    probs += _listed("were given for a different text or different scores than the sample holds now",
                     [i for i, s, v in verdicts if v.get("sample_digest") != judged_digest(s)])
    human = [(i, v) for i, _, v in verdicts if v.get("reviewer_kind") == "human"]
    probs += _listed("record no reading time (not written by `grpo-rlvr review`)",
                     [i for i, v in human if _reading_seconds(v) is None])
    return probs + _reading_speed_problems([t for _, v in human if (t := _reading_seconds(v)) is not None])


def _reading_speed_problems(timed: list[float]) -> list[str]:
    """The person's reading times (seconds per sample) are plausible as reading."""
    if not timed:
        return []
    med = statistics.median(timed)
    if med >= MIN_MEDIAN_SECONDS:
        return []
    return [f"the review is too fast to be reading: median {med:.2f} s per sample (fastest {min(timed):.2f} s, "
            f"{len(timed)} samples in {sum(timed):.0f} s); the rule is a median of at least "
            f"{MIN_MEDIAN_SECONDS:.1f} s per sample"]


def _scores(s: dict, names: list[str]) -> list[float]:
    vals = [(s.get("scores") or {}).get(n, {}).get("score") for n in names]
    return [v for v in vals if v is not None]


_MANIFEST_SHAPE = {"brief": dict, "rewards": list, "sampling": dict, "sample_count": int, "signing": dict,
                   "bound_settings": dict}


def _check_manifest_shape(d: Path, m: dict) -> None:
    """The manifest's fields have the types inspect writes; otherwise the artifact is unusable (GateError)."""
    wrong = [k for k, t in _MANIFEST_SHAPE.items() if k in m and (not isinstance(m[k], t) or isinstance(m[k], bool))]
    if not wrong and not all(isinstance(r, dict) and isinstance(r.get("name"), str)
                             and isinstance(r.get("params", {}), dict) for r in m.get("rewards", [])):
        wrong = ["rewards"]
    if not wrong and not isinstance((m.get("brief") or {}).get("path", ""), str):
        wrong = ["brief.path"]
    if wrong:
        raise GateError(f"{d / 'manifest.json'}: field {wrong[0]!r} is not what `grpo-rlvr inspect` writes (the "
                        "manifest was edited); re-run `grpo-rlvr inspect BRIEF`")


def _finite(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _messages(v) -> bool:
    """Text, or chat messages: each a mapping with a role, and content that is text, absent (a tool call) or
    content blocks."""
    return isinstance(v, str) or (isinstance(v, list) and all(
        isinstance(m, dict) and isinstance(m.get("role", ""), str)
        and (m.get("content") is None or isinstance(m.get("content"), (str, list))) for m in v))


def _ids(v) -> bool:
    return isinstance(v, list) and all(isinstance(i, int) and not isinstance(i, bool) for i in v)


def _trajectory_problem(s: dict) -> str | None:
    """What is wrong with a sample's token ids, loss mask and stop (the trajectory beside its messages)."""
    if not _ids(s.get("prompt_ids")) or not _ids(s.get("completion_ids")):
        return "prompt_ids or completion_ids is not a list of token ids"
    mask = s.get("loss_mask")
    if mask is not None and (not isinstance(mask, list) or len(mask) != len(s["completion_ids"])
                             or any(x not in (0, 1) for x in mask)):
        return "loss_mask is not one 0 or 1 per completion token"
    if s.get("stop") not in STOPS:
        return f"stop is {s.get('stop')!r}, not one of {', '.join(STOPS)}"
    return None


def _shape_problem(s: dict) -> str | None:
    """What is wrong with the shape of a stored sample, or None (the fields inspect and review write)."""
    missing = [k for k in ("id", "prompt", "completion", "prompt_ids", "completion_ids", "stop", "scores", "total")
               if k not in s]
    if missing:
        return f"missing field(s) {', '.join(missing)}"
    if not isinstance(s.get("id"), str):
        return "id is not text"
    for key in ("prompt", "completion"):
        if not _messages(s[key]):
            return f"{key} is neither text nor a list of messages"
    trajectory = _trajectory_problem(s)
    if trajectory:
        return trajectory
    if not _score_map(s.get("scores", {})):
        return "scores is not a map of reward → {score: number or null, reason: text}"
    if not _finite(s["total"]):
        return "total is not a finite number"
    if not isinstance(s.get("columns", {}), dict):
        return "columns is not a map"
    return None if s.get("verdict") is None else _verdict_shape_problem(s["verdict"])


def _score_map(scores) -> bool:
    return isinstance(scores, dict) and all(
        isinstance(v, dict) and (v.get("score") is None or _finite(v.get("score")))
        and isinstance(v.get("reason", ""), str) for v in scores.values())


_VERDICT_FIELDS = {"verdict": str, "note": str, "reviewer": str, "reviewer_kind": str, "time": str, "seal": str,
                   "sample_digest": str, "rewards": list, "history": list}


def _verdict_shape_problem(v) -> str | None:
    """What is wrong with the shape of a sample's verdict record, or None (the fields review writes)."""
    if not isinstance(v, dict):
        return "verdict is neither null nor a record"
    wrong = [k for k, t in _VERDICT_FIELDS.items() if v.get(k) is not None and not isinstance(v[k], t)]
    if wrong or (v.get("seconds") is not None and not _finite(v["seconds"])):
        return f"verdict field {(wrong or ['seconds'])[0]!r} has the wrong type"
    if not all(isinstance(r, str) for r in v.get("rewards") or []):
        return "verdict.rewards is not a list of reward names"
    return None


def _min(s: dict, names: list[str]):
    return min(_scores(s, names), default=None)


def _max(s: dict, names: list[str]):
    return max(_scores(s, names), default=None)


def _rescore(rewards, weights, samples) -> list[str]:
    """Each stored trajectory scored again, as training scores it (``rollout.scoring``): the scores must be the
    stored ones. A reward that asks something outside this process (a judge) is asked afresh, never from a cache,
    on ``JUDGE_RECHECKS`` samples drawn at random (its answers for the others stand as the person reviewed them):
    a judge swapped behind the same URL since the review answers differently."""
    import random

    from grpo_rlvr.inspection.artifact import trajectory_of
    from grpo_rlvr.rollout.scoring import score_trajectories

    work_trace.event("gate_rescore", samples=len(samples))
    asked = {r.name: 1.0 / float(r.params.get("scale") or 1.0) for r in rewards if r.ask_live()}
    local = [(r, w) for r, w in zip(rewards, weights, strict=True) if r.name not in asked]
    rechecked = random.SystemRandom().sample(range(len(samples)), min(JUDGE_RECHECKS, len(samples))) if asked else []
    problems = []
    for subset, pairs in ((range(len(samples)), local), (rechecked, list(zip(rewards, weights, strict=True)))):
        chosen = [samples[i] for i in subset]
        if not chosen or not pairs:
            continue
        rows = [{"prompt": s.get("prompt"), **(s.get("columns") or {})} for s in chosen]
        now = score_trajectories([r for r, _ in pairs], [w for _, w in pairs], [trajectory_of(s) for s in chosen],
                                 rows)
        problems += _differences(chosen, now, asked, whole=len(pairs) == len(rewards))
    return problems[:10] + ([f"… and {len(problems) - 10} more"] if len(problems) > 10 else [])


def _differences(samples: list[dict], now: list[dict], asked: dict[str, float], whole: bool) -> list[str]:
    """What the rewards give now that the stored samples do not hold (``whole``: every reward scored, so the total
    is compared too). A judge's answer (``asked``: name → one step of its scale) may differ by up to a step."""
    out = []
    for s, res in zip(samples, now, strict=True):
        for name, sc in res["scores"].items():
            old = (s.get("scores") or {}).get(name, {}).get("score")
            if name in asked and old is not None and sc.score is not None \
                    and abs(old - sc.score) <= asked[name] + SCORE_TOLERANCE:
                continue
            if not _same(old, sc.score):
                who = f"the judge answers {sc.score} now (asked afresh)" if name in asked else \
                    f"the reward gives {sc.score} now"
                out.append(f"{s['id']}: stored {name} score {old} but {who}")
        if whole and not asked and not _same(s.get("total"), res["total"]):
            out.append(f"{s['id']}: stored total {s.get('total')} but the rewards give {res['total']} now")
    return out


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is b
    try:
        return abs(float(a) - float(b)) <= SCORE_TOLERANCE
    except (TypeError, ValueError):
        return False


def calibration(samples: list[dict], kinds: dict) -> dict:
    """Each reward's agreement with the reviewer, and Cohen's kappa between its pass/fail and the reviewer's.

    A reviewer's ``disagree`` names the rewards it blames (``verdict.rewards``; all rewards when it names
    none). The reviewer's label for a reward is the reward's own pass/fail (score ≥ 0.5), flipped when blamed.
    """
    out = {}
    reviewed = [s for s in samples if (s.get("verdict") or {}).get("verdict") in VERDICTS]
    for name in kinds:
        pairs = []
        for s in reviewed:
            sc = (s.get("scores") or {}).get(name, {}).get("score")
            if sc is None:
                continue
            v = s["verdict"]
            blamed = v["verdict"] == "disagree" and (not v.get("rewards") or name in v.get("rewards"))
            model_label = sc >= 0.5
            pairs.append((model_label, model_label != blamed))
        if not pairs:
            continue
        agree = sum(a == b for a, b in pairs) / len(pairs)
        out[name] = {"n": len(pairs), "agreement": agree, "kappa": _kappa(pairs)}
    return {"rewards": out, "reviewed": len(reviewed)}


def _kappa(pairs: list[tuple[bool, bool]]) -> float | None:
    n = len(pairs)
    po = sum(a == b for a, b in pairs) / n
    pa, pb = sum(a for a, _ in pairs) / n, sum(b for _, b in pairs) / n
    pe = pa * pb + (1 - pa) * (1 - pb)
    if pe >= 1:
        return None  # one class only: kappa is undefined
    return (po - pe) / (1 - pe)
