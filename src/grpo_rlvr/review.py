"""``grpo-rlvr review``: a person reads every inspected sample and records agree / disagree.

One sample at a time: prompt, completion, each reward's score and reason. Keys: ``a`` agree, ``d`` disagree
(then a note, and which rewards are wrong), ``b`` back, ``q`` quit. Every verdict is saved at once (atomic
write), so quitting and coming back loses nothing; the review resumes at the first sample without a verdict.
"""

from __future__ import annotations

import getpass
import os
import sys
import time
from pathlib import Path

from grpo_rlvr.inspection.artifact import load_artifact
from grpo_rlvr.inspection.report import render_report
from grpo_rlvr.sampling import prompt_text


def _ask(prompt: str, stdin, stdout) -> str | None:
    stdout.write(prompt)
    stdout.flush()
    line = stdin.readline()
    return None if line == "" else line.strip()


def _show(s: dict, i: int, n: int, out) -> None:
    bar = "─" * 72
    out.write(f"\n{bar}\nSample {i + 1}/{n}  ({s['id']}, {s.get('outcome', '?')})\n{bar}\n")
    out.write(f"PROMPT:\n  {prompt_text(s['prompt'])}\n")
    out.write(f"COMPLETION{' (truncated)' if s.get('truncated') else ''}:\n")
    for line in (s["completion"] or "<empty>").splitlines() or [""]:
        out.write(f"  {line}\n")
    gt = s.get("columns") or {}
    if gt:
        out.write("GROUND TRUTH: " + ", ".join(f"{k}={str(v)[:80]}" for k, v in gt.items()) + "\n")
    out.write("SCORES:\n")
    for name, sc in s["scores"].items():
        out.write(f"  {name:<16} {sc['score']!s:<6} {sc['reason']}\n")
    out.write(f"  {'total':<16} {s['total']:.3f}\n")
    if s.get("verdict"):
        v = s["verdict"]
        out.write(f"(current verdict: {v['verdict']}{': ' + v['note'] if v.get('note') else ''})\n")


def review(directory, reviewer: str | None = None, stdin=None, stdout=None) -> int:
    """Run the review loop. Returns 0 when every sample has a verdict, 1 when quit early."""
    stdin = stdin or sys.stdin
    out = stdout or sys.stdout
    art = load_artifact(directory)
    reviewer = reviewer or os.environ.get("USER") or getpass.getuser()
    samples = art.samples
    n = len(samples)
    i = next((k for k, s in enumerate(samples) if not s.get("verdict")), n)
    if i and i < n:
        out.write(f"Resuming at sample {i + 1} of {n} ({i} already reviewed).\n")
    out.write("Read each completion and its scores. Do the scores say what you would say?\n")
    names = list(samples[0]["scores"]) if samples else []
    while i < n:
        s = samples[i]
        _show(s, i, n, out)
        key = _ask("[a]gree  [d]isagree  [b]ack  [q]uit > ", stdin, out)
        if key is None or key.lower() in ("q", "quit"):
            render_report(art.dir, art.manifest, samples)
            left = sum(1 for x in samples if not x.get("verdict"))
            out.write(f"\nSaved. {n - left} of {n} reviewed; run `grpo-rlvr review {art.dir}` to continue.\n")
            return 1
        key = key.lower()
        if key in ("b", "back"):
            i = max(0, i - 1)
            continue
        if key in ("a", "agree"):
            s["verdict"] = {"verdict": "agree", "note": "", "rewards": [], "reviewer": reviewer,
                            "reviewer_kind": "human", "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        elif key in ("d", "disagree"):
            note = _ask("What is wrong with the scores? > ", stdin, out) or ""
            blamed = _ask(f"Which reward is wrong? ({', '.join(names)}; empty = all) > ", stdin, out) or ""
            wrong = [x.strip() for x in blamed.replace(",", " ").split() if x.strip() in names]
            s["verdict"] = {"verdict": "disagree", "note": note, "rewards": wrong, "reviewer": reviewer,
                            "reviewer_kind": "human", "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        else:
            out.write("Please answer a, d, b or q.\n")
            continue
        art.save_samples()
        i += 1
    render_report(art.dir, art.manifest, samples)
    out.write(summary(samples, art.dir))
    return 0


def summary(samples: list[dict], directory: Path) -> str:
    dis = [s for s in samples if (s.get("verdict") or {}).get("verdict") == "disagree"]
    lines = [f"\nReview complete: {len(samples)} samples, {len(samples) - len(dis)} agree, {len(dis)} disagree."]
    if dis:
        blamed: dict[str, int] = {}
        for s in dis:
            for r in s["verdict"].get("rewards") or ["(unspecified)"]:
                blamed[r] = blamed.get(r, 0) + 1
        lines.append("Disagreements point at: " + ", ".join(f"{k} ×{v}" for k, v in sorted(blamed.items())))
        for s in dis[:10]:
            lines.append(f"  {s['id']}: {s['verdict'].get('note') or '(no note)'}")
        lines.append("Fix the reward, then re-run `grpo-rlvr inspect` and review again; the gate will not pass.")
    else:
        lines.append(f"Next: grpo-rlvr gate {directory}")
    return "\n".join(lines) + "\n"
