"""``grpo-rlvr gate``: the Phase 1 checker. Passes only when every rule of DESIGN.md §6 holds.

1. artifact present and well-formed; 50 ≤ samples ≤ 100; ids unique; enough distinct prompts; samples intact
2. every sample has a human verdict; none is ``disagree`` (oracle verdicts only in the demo)
3. reward fingerprints match the current code and params, and re-scoring reproduces the stored scores
4. the artifact belongs to this brief (model, dataset, reward specs, sampling)
5. the reward is composite (format + correctness) and ranks well-formed-wrong above malformed
6. there is signal: some correctness > 0, and the totals are not all equal

Imports no torch: rewards that need no model are re-scored in well under a second.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from grpo_rlvr.errors import GateError, GrpoRlvrError
from grpo_rlvr.inspection.artifact import FORMAT_VERSION, VERDICTS, load_artifact, sample_digest

MIN_SAMPLES, MAX_SAMPLES = 50, 100
MIN_PROMPT_SHARE = 0.25   # distinct prompts ≥ a quarter of the samples (16 of 64)
SCORE_TOLERANCE = 1e-6


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

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.rules)

    def to_dict(self) -> dict:
        return {"dir": str(self.dir), "passed": self.passed,
                "rules": [{"id": r.id, "name": r.name, "passed": r.passed, "problems": r.problems, "fix": r.fix}
                          for r in self.rules],
                "calibration": self.calibration, "weak_samples": self.weak_samples}

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
                lines.append(f"    {name:<16} agreement {c['agreement']:.2f}  kappa {kappa}  (n={c['n']})")
        for name, count in self.weak_samples.items():
            lines.append(f"  Scored weakly by {name} (test code ran in the sandbox): {count} samples")
        return "\n".join(lines)


def check_gate(directory, brief=None, demo: bool = False) -> GateResult:
    """Check an inspection folder against the brief and the current reward code.

    Args:
        directory: the inspection folder.
        brief: the brief path (default: the one recorded in the manifest).
        demo: accept oracle verdicts (only ``grpo-rlvr demo`` passes True; never the CLI).
    Returns:
        GateResult; ``.passed`` tells. Raises GateError only when the folder is unusable.
    """
    art = load_artifact(directory)
    m, samples = art.manifest, art.samples
    rules: list[Rule] = []

    # 1. shape -----------------------------------------------------------------------------------------
    p1 = []
    if m.get("format_version") != FORMAT_VERSION:
        p1.append(f"manifest format_version is {m.get('format_version')!r}, expected {FORMAT_VERSION}")
    n = len(samples)
    if not MIN_SAMPLES <= n <= MAX_SAMPLES:
        p1.append(f"{n} samples; a person must read between {MIN_SAMPLES} and {MAX_SAMPLES}")
    if m.get("sample_count") != n:
        p1.append(f"samples.jsonl has {n} samples but the manifest recorded {m.get('sample_count')} "
                  "(samples were removed or added)")
    ids = [s.get("id") for s in samples]
    dup = sorted({i for i in ids if ids.count(i) > 1}, key=str)
    if dup:
        p1.append(f"duplicate sample ids: {', '.join(map(str, dup))}")
    missing = [str(s.get("id", f"line {i + 1}")) for i, s in enumerate(samples)
               if not all(k in s for k in ("id", "prompt", "completion", "scores", "total"))]
    if missing:
        p1.append(f"samples missing fields (id, prompt, completion, scores, total): {', '.join(missing[:5])}")
    prompts = {repr(s.get("prompt")) for s in samples}
    need = math.ceil(MIN_PROMPT_SHARE * n)
    if n and len(prompts) < need:
        p1.append(f"only {len(prompts)} distinct prompts among {n} samples; need at least {need}")
    if not dup and m.get("samples_digest") != sample_digest(samples):
        p1.append("the samples' prompts/completions/ground truth differ from what inspect wrote "
                  "(samples edited, removed, added or reordered)")
    rules.append(Rule(1, "artifact present and well-formed", not p1, p1,
                      "re-run `grpo-rlvr inspect BRIEF` (50–100 samples), then review again"))

    # 2. verdicts ---------------------------------------------------------------------------------------
    p2 = []
    unreviewed = [s.get("id") for s in samples if not isinstance(s.get("verdict"), dict)
                  or s["verdict"].get("verdict") not in VERDICTS]
    if unreviewed:
        p2.append(f"{len(unreviewed)} sample(s) without a verdict: {', '.join(map(str, unreviewed[:8]))}"
                  + (" …" if len(unreviewed) > 8 else ""))
    disagreed = [s for s in samples if (s.get("verdict") or {}).get("verdict") == "disagree"]
    for s in disagreed[:8]:
        note = s["verdict"].get("note") or "no note"
        p2.append(f"{s.get('id')} marked disagree: {note}")
    oracle = [s.get("id") for s in samples if (s.get("verdict") or {}).get("reviewer_kind") == "oracle"]
    if oracle and not demo:
        p2.append(f"{len(oracle)} verdict(s) were given by an oracle, not a person; only the demo may use one")
    rules.append(Rule(2, "every sample reviewed by a person, no disagreement", not p2, p2,
                      "a disagreement means the reward is wrong: fix it, re-run `grpo-rlvr inspect`, then "
                      "`grpo-rlvr review DIR`" if disagreed else "run `grpo-rlvr review DIR` and judge every sample"))

    # 3 + 4 need the brief and the current rewards ---------------------------------------------------------
    from grpo_rlvr.brief import load_brief
    from grpo_rlvr.brief.loader import dataset_identity, model_identity

    brief_path = brief or (m.get("brief") or {}).get("path")
    if not brief_path:
        raise GateError(f"{art.dir}: the manifest records no brief; pass --brief BRIEF")
    b = load_brief(brief_path)
    p3, rewards = [], []
    try:
        from grpo_rlvr.inspection.run import build_rewards

        rewards = build_rewards(b)
    except GrpoRlvrError as e:
        p3.append(f"the brief's rewards cannot be built now: {e}")
    stored = {r.get("name"): r for r in m.get("rewards", []) if isinstance(r, dict)}
    for r in rewards:
        old = stored.get(r.name)
        if old is None:
            p3.append(f"reward {r.name!r} was not part of the inspection")
        elif old.get("fingerprint") != r.fingerprint:
            what = "params changed" if old.get("params") != r.params else "source code changed"
            p3.append(f"reward {r.name!r}: {what} since the inspection (fingerprint mismatch)")
    for name in set(stored) - {r.name for r in rewards}:
        p3.append(f"reward {name!r} was inspected but is no longer in the brief")
    if rewards and not p3 and not p1:
        p3.extend(_rescore(rewards, b.reward_weights, samples))
    rules.append(Rule(3, "rewards unchanged and scores reproduce", not p3, p3,
                      "the reward code or params changed, or stored scores were edited: re-run `grpo-rlvr inspect` "
                      "and review the new samples"))

    p4 = []
    rec = m.get("brief") or {}
    if rec.get("fingerprint") != b.fingerprint:
        parts = []
        if m.get("model") != model_identity(b.model):
            parts.append("model")
        if m.get("dataset") != dataset_identity(b.dataset):
            parts.append("dataset")
        specs = [{"name": r.name, "weight": r.weight, "params": dict(r.params)} for r in b.rewards]
        old_specs = [{"name": r.get("name"), "weight": r.get("weight"), "params": r.get("params")}
                     for r in m.get("rewards", [])]
        if [s["name"] for s in specs] != [s["name"] for s in old_specs] or \
                [s["weight"] for s in specs] != [s["weight"] for s in old_specs]:
            parts.append("reward specs")
        if {k: m.get("sampling", {}).get(k) for k in b.sampling()} != b.sampling():
            parts.append("sampling parameters")
        p4.append(f"the artifact was made for another brief ({', '.join(parts) or 'fingerprint'} differ): "
                  f"{rec.get('path')}")
    rules.append(Rule(4, "artifact belongs to this brief", not p4, p4,
                      "inspect with this brief: `grpo-rlvr inspect BRIEF`"))

    # 5. composite ----------------------------------------------------------------------------------------
    p5 = []
    kinds = {r.name: r.kind for r in rewards} or {r.get("name"): r.get("kind") for r in m.get("rewards", [])}
    fmt = [k for k, v in kinds.items() if v == "format"]
    cor = [k for k, v in kinds.items() if v in ("correctness", "judge")]
    if not fmt:
        p5.append("no format reward (a reward of kind 'format', e.g. `format`)")
    if not cor:
        p5.append("no correctness reward (kind 'correctness' or 'judge', e.g. `exact_match`, `math`, `unit_tests`)")
    if fmt and cor:
        malformed = [s["total"] for s in samples if _min(s, fmt) is not None and _min(s, fmt) <= 0]
        wf_wrong = [s["total"] for s in samples if _min(s, fmt) is not None and _min(s, fmt) > 0
                    and _max(s, cor) is not None and _max(s, cor) <= 0]
        if malformed and wf_wrong and min(wf_wrong) <= max(malformed):
            p5.append(f"a well-formed wrong answer (total {min(wf_wrong):.3f}) does not outscore every malformed "
                      f"one (best malformed total {max(malformed):.3f})")
    rules.append(Rule(5, "reward is composite and ranks well-formed-wrong above malformed", not p5, p5,
                      "add a `format` reward with a weight > 0 next to the correctness reward"))

    # 6. signal -------------------------------------------------------------------------------------------
    p6 = []
    if cor and not any((_max(s, cor) or 0) > 0 for s in samples):
        p6.append("no sample earns any correctness: the model never succeeds, GRPO has nothing to amplify "
                  "(route to SFT first)")
    totals = {round(float(s.get("total", 0)), 9) for s in samples}
    if len(totals) <= 1:
        p6.append(f"every sample has the same total ({next(iter(totals), 'none')}): zero advantage, no learning")
    rules.append(Rule(6, "there is learning signal", not p6, p6,
                      "SFT first until the model succeeds sometimes (see `grpo-rlvr preflight`)"))

    from grpo_rlvr.sandbox import weak_sample_counts

    result = GateResult(art.dir, rules, calibration(samples, kinds), weak_sample_counts(samples))
    if not p1:
        art.manifest["calibration"] = result.calibration
        art.save_manifest()
    return result


def _scores(s: dict, names: list[str]) -> list[float]:
    vals = [(s.get("scores") or {}).get(n, {}).get("score") for n in names]
    return [v for v in vals if v is not None]


def _min(s: dict, names: list[str]):
    return min(_scores(s, names), default=None)


def _max(s: dict, names: list[str]):
    return max(_scores(s, names), default=None)


def _rescore(rewards, weights, samples) -> list[str]:
    from grpo_rlvr.rewards import combine

    cols: dict = {}
    keys = {k for s in samples for k in (s.get("columns") or {})}
    for k in keys:
        cols[k] = [(s.get("columns") or {}).get(k) for s in samples]
    now = combine(rewards, weights, [s["completion"] for s in samples], prompts=[s["prompt"] for s in samples],
                  **cols)
    problems = []
    for s, res in zip(samples, now, strict=True):
        for name, sc in res["scores"].items():
            old = (s.get("scores") or {}).get(name, {}).get("score")
            if not _same(old, sc.score):
                problems.append(f"{s['id']}: stored {name} score {old} but the reward gives {sc.score} now")
        if not _same(s.get("total"), res["total"]):
            problems.append(f"{s['id']}: stored total {s.get('total')} but the rewards give {res['total']} now")
    return problems[:10] + ([f"… and {len(problems) - 10} more"] if len(problems) > 10 else [])


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
