"""Benchmark: the review audit's false alarms and power, ours beside the naive tests, and what it costs a run.

Run: ``python benchmarks/bench_review_audit.py [--seeds 0,1,2] [--tasks arithmetic,code,tool] [--splits 400]``

1. **Honest demo runs.** ``grpo-rlvr demo --steps N`` for each task and seed: the trainer's audit compares its own
   first generation batch with the inspection the oracle reviewed. Printed per run: the verdict, the comparisons,
   the smallest p-value, the audit's CPU seconds (it looks once, at the first batch) beside the mean seconds of a
   training step and of the whole training (TRL's ``train_runtime`` in ``metrics.jsonl``), and their ratios. An honest run must come out clean.
2. **Replications on a warm model's real rollouts.** The inspection's own candidates (``inspection/audit.json``:
   the warmed model's rollouts, in prompt groups) are split at random, again and again, into a "reviewed" part
   and a "training batch" of the run's size. Both parts are the same policy on the same data, so every alarm is
   a false one. Side by side at the same level:
   - ours: ``audit.compare`` (permutation tests over whole prompt groups, Holm over the metrics);
   - naive: every rollout counted as an independent draw (Fisher's exact test for a share, Mann-Whitney for a
     score or a length), each metric at the level (uncorrected) and at level/metrics (Bonferroni).
   Then the same splits with the training batch forged (``FORGERIES``: a share of its rollouts made malformed, or
   paid by every reward), for the detection rate (power) of each.
3. **A forged review, per seed** (``--forge``): in a copy of each arithmetic run's folder (its brief at 1 step),
   a script writes a tidy inspection (the warmed model's real prompts, completions of its choosing, every digest
   and seal recomputed) and a person's verdicts on it; the gate passes, and training must stop at step 0.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from grpo_rlvr.audit.compare import compare, metrics
from grpo_rlvr.audit.live import read_audit
from grpo_rlvr.audit.reference import audited


def demo_run(work: Path, task: str, seed: int, steps: int) -> dict:
    """One honest demo run; its audit record and step time."""
    cmd = [sys.executable, "-m", "grpo_rlvr", "demo", "--workdir", str(work), "--task", task, "--seed", str(seed),
           "--steps", str(steps), "--json"]
    if (work / "demo_summary.json").exists():   # a finished run of an earlier invocation (--workdir): reused
        out = subprocess.CompletedProcess(cmd, 0, "", "")
    else:
        out = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    if out.returncode != 0:
        raise SystemExit(f"demo {task} seed {seed} failed (exit {out.returncode}):\n{out.stderr[-3000:]}")
    record = json.loads(next(work.glob("**/output/review_audit.json")).read_text())
    steps_log = [json.loads(x) for x in next(work.glob("**/output/metrics.jsonl")).read_text().splitlines() if x]
    end = [r for r in steps_log if isinstance(r.get("train_runtime"), (int, float)) and r.get("step")]
    return {"record": record, "step_s": end[-1]["train_runtime"] / end[-1]["step"] if end else None,
            "run_s": end[-1]["train_runtime"] if end else None,
            "reference": next(work.glob("**/inspection/audit.json"))}


def honest_runs(args, root: Path) -> list[Path]:
    print(f"== 1. honest demo runs ({args.steps} GRPO steps each; the audit looks at the first generation batch)")
    print(f"{'task':<11}{'seed':>5}  {'verdict':<9}{'tests':>6}{'min p':>9}{'audit CPU s':>13}{'step s':>9}"
          f"{'audit/step':>12}{'audit/run':>11}")
    refs = []
    for task in args.tasks:
        for seed in args.seeds:
            got = demo_run(root / f"{task}-{seed}", task, seed, args.steps)
            rec, step = got["record"], got["step_s"]
            tests = [t for c in rec["checks"] for t in c["tests"] if t.get("p") is not None]
            ratio = f"{rec['cost_s'] / step:.2%}" if step else "n/a"
            whole = f"{rec['cost_s'] / got['run_s']:.2%}" if got["run_s"] else "n/a"
            print(f"{task:<11}{seed:>5}  {rec['status']:<9}{len(tests):>6}{min(t['p'] for t in tests):>9.3g}"
                  f"{rec['cost_s']:>13.3f}{(step or float('nan')):>9.2f}{ratio:>12}{whole:>11}")
            refs.append(got["reference"])
    return refs


# --- the naive tests --------------------------------------------------------------------------------------------

def naive(reference: list[dict], training: list[dict], weights, kinds, tools, alpha: float, bonferroni: bool) -> bool:
    """Whether any metric differs with every rollout an independent draw (per prompt: each prompt once)."""
    from scipy.stats import fisher_exact, mannwhitneyu

    chosen = metrics(weights, kinds, tools)
    level = alpha / len(chosen) if bonferroni else alpha
    for m in chosen:
        def values(rollouts, m=m):
            if m.per_prompt:
                return list({json.dumps(r["group"]): float(m.value(r)) for r in rollouts
                             if m.value(r) is not None}.values())
            return [float(m.value(r)) for r in rollouts if m.value(r) is not None]
        a, b = values(reference), values(training)
        if len(a) < 2 or len(b) < 2:
            continue
        if m.kind == "share":
            p = fisher_exact([[sum(a), len(a) - sum(a)], [sum(b), len(b) - sum(b)]])[1]
        elif len(set(a + b)) < 2:
            continue
        else:
            p = mannwhitneyu(a, b, alternative="two-sided").pvalue
        if p <= level:
            return True
    return False


FORGERIES = {
    "malformed": "every format reward at 0 (a reviewed sample tidier than training's)",
    "paid": "every reward at 1 (a reward, judge or cache paying what the reviewed one did not)",
}


def forge(training: list[dict], kinds: dict, how: str, share: float, rng: random.Random) -> list[dict]:
    """The training batch with ``share`` of its rollouts forged ``how`` (``FORGERIES``)."""
    out = []
    for r in training:
        if rng.random() < share:
            names = [n for n, k in kinds.items() if k == "format"] if how == "malformed" else list(r["scores"])
            r = {**r, "scores": {**r["scores"], **{n: 0.0 if how == "malformed" else 1.0 for n in names}}}
        out.append(r)
    return out


def alarm(name: str, reference: list[dict], training: list[dict], w, k, tools, alpha: float) -> bool:
    """Whether the named comparison calls the two samples different."""
    if name == "ours":
        return any(x["diverged"] for x in compare(reference, training, w, k, tools, alpha))
    return naive(reference, training, w, k, tools, alpha, bonferroni=name != "naive")


def replications(path: Path, splits: int, alpha: float, batch_groups: int, share: float, seed: int) -> dict:
    ref = json.loads(path.read_text())
    rollouts = audited(ref)
    by: dict = {}
    for r in rollouts:
        by.setdefault(json.dumps(r["group"]), []).append(r)
    groups = list(by.values())
    w, k, tools = ref["weights"], ref["kinds"], bool(ref.get("tools"))
    rng = random.Random(seed)
    alarms = {"ours": 0, "naive": 0, "naive+Bonferroni": 0}
    caught = {how: dict.fromkeys(alarms, 0) for how in FORGERIES}
    for _ in range(splits):
        rng.shuffle(groups)
        train = [r for g in groups[:batch_groups] for r in g]
        rest = [r for g in groups[batch_groups:] for r in g]
        forged = {how: forge(train, k, how, share, rng) for how in FORGERIES}
        for name in alarms:
            alarms[name] += alarm(name, rest, train, w, k, tools, alpha)
            for how, bad in forged.items():
                caught[how][name] += alarm(name, rest, bad, w, k, tools, alpha)
    return {"groups": len(groups), "group_size": ref.get("group_size"), "alarms": alarms, "caught": caught}


# --- 3. a forged review per seed ----------------------------------------------------------------------------------

def tidy_forgery(ws: Path) -> None:
    """A script's inspection with no malformed completion (two of eight right), sealed and reviewed."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from artifacts import review_all, synthetic_trajectory
    from grpo_rlvr.brief import load_brief
    from grpo_rlvr.dataset.rows import load_rows
    from grpo_rlvr.inspection.run import write_artifact

    brief = load_brief(ws / "brief.yaml")
    rows = load_rows(brief)
    cands, cand_rows = [], []
    for p, row in enumerate(rows[:48]):
        for j in range(8):
            text = f"<answer>{row['answer'] if j < 2 else int(row['answer']) + 1}</answer>"
            cands.append({"prompt_index": p, "trajectory": synthetic_trajectory(row["prompt"], text)})
            cand_rows.append(row)
    write_artifact(brief, cands, cand_rows, 64, ws / "out" / "inspection", sampling=brief.sampling(),
                   population=[r["prompt"] for r in rows])
    review_all(ws / "out" / "inspection")


def forged_runs(root: Path, seeds: list[int]) -> None:
    import shutil

    from grpo_rlvr.gate.check import check_gate
    from grpo_rlvr.run.launch import train
    from grpo_rlvr.run.render import render

    print("\n== 3. a forged (tidy, resealed) review of each arithmetic run: gate, then training's audit")
    print(f"{'seed':>5}  {'gate':<7}{'training':<12}{'stopped at':>11}  what differs")
    for seed in seeds:
        src, ws = root / f"arithmetic-{seed}", root / f"forged-{seed}"
        shutil.rmtree(ws, ignore_errors=True)
        ws.mkdir()
        shutil.copy(src / "brief.yaml", ws / "brief.yaml")
        shutil.copytree(src / "data", ws / "data")
        (ws / "model").symlink_to((src / "model").resolve(), target_is_directory=True)
        brief = yaml.safe_load((ws / "brief.yaml").read_text())
        brief["grpo"].update({"max_steps": 1, "logging_steps": 1})
        (ws / "brief.yaml").write_text(yaml.safe_dump(brief))
        tidy_forgery(ws)
        gate = check_gate(ws / "out" / "inspection").passed
        run = render(ws / "brief.yaml").dir
        with (ws / "train.log").open("w") as fh:
            result = train(run, stream=fh)
        rec = read_audit(run / "output") or {}
        stop = rec.get("stopped") or {}
        print(f"{seed:>5}  {'passed' if gate else 'FAILED':<7}{'stopped' if result.returncode == 1 and stop else 'RAN':<12}"
              f"{stop.get('step', '-')!s:>11}  {stop.get('summary', '')[:160]}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0,1,2", help="demo seeds, comma-separated")
    ap.add_argument("--tasks", default="arithmetic", help="demo tasks: arithmetic, code, tool, spell_backward")
    ap.add_argument("--steps", type=int, default=3, help="GRPO steps per demo run")
    ap.add_argument("--splits", type=int, default=400, help="random splits per reference and level")
    ap.add_argument("--levels", default="0.05,0.001", help="family-wise levels compared")
    ap.add_argument("--forged", type=float, default=0.25, help="share of a forged batch's rollouts forged")
    ap.add_argument("--forge", action="store_true", help="also part 3: a forged review per arithmetic seed")
    ap.add_argument("--skip-replications", action="store_true", help="leave part 2 out")
    ap.add_argument("--workdir", default=None,
                    help="where the demo runs go (default: a temporary folder); finished runs there are reused")
    args = ap.parse_args()
    args.seeds = [int(s) for s in args.seeds.split(",")]
    args.tasks = args.tasks.split(",")
    root = Path(args.workdir or tempfile.mkdtemp(prefix="bench-audit-"))
    refs = honest_runs(args, root)
    if args.forge and "arithmetic" in args.tasks:
        forged_runs(root, args.seeds)
    if args.skip_replications:
        refs = []
    print(f"\n== 2. replications: {args.splits} random splits of each warm model's inspection candidates into a "
          "reviewed part and a training batch of 8 prompt groups (both honest: every alarm is false), and the same "
          f"batch with {args.forged:.0%} of its rollouts forged:")
    for how, what in FORGERIES.items():
        print(f"   {how}: {what}")
    cols = ("ours", "naive", "naive+Bonferroni")
    print(f"{'reference':<24}{'level':>7}  {'false alarms':<24}" + "".join(f"{'caught, ' + h:<24}" for h in FORGERIES)
          + f"   (each: {' / '.join(cols)})")
    for path in refs:
        for level in (float(x) for x in args.levels.split(",")):
            r = replications(path, args.splits, level, 8, args.forged, seed=0)
            rate = lambda counts: " / ".join(f"{counts[n] / args.splits:.3f}" for n in cols)  # noqa: E731
            name = f"{path.parent.parent.parent.name} ({r['groups']}x{r['group_size']})"
            print(f"{name:<24}{level:>7g}  {rate(r['alarms']):<24}"
                  + "".join(f"{rate(r['caught'][h]):<24}" for h in FORGERIES))
    print(f"\nruns in {root}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
