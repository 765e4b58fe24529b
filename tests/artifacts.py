"""Building real inspection artifacts for tests without sampling a model: synthetic completions of every
outcome are scored by the real rewards and written by the real ``write_artifact``.

``review_all`` writes what ``grpo-rlvr review`` records for a person who read each sample for a few seconds
(kind ``human``, reviewer, reading time, bound to the manifest's seal and the sample's digest), through the same
``make_verdict``. The review itself is tested in a real pty (tests/review/test_session.py)."""

from __future__ import annotations

from pathlib import Path

from grpo_rlvr.brief import load_brief
from grpo_rlvr.dataset.rows import load_rows
from grpo_rlvr.inspection import load_artifact
from grpo_rlvr.inspection.artifact import make_verdict
from grpo_rlvr.inspection.run import write_artifact


def completions_for(answer: str, i: int) -> str:
    kind = i % 4
    if kind == 0:
        return f"<answer>{answer}</answer>"                 # correct
    if kind == 1:
        return f"<answer>{int(answer) + 1}</answer>"        # well-formed, wrong
    if kind == 2:
        return f"{answer}"                                  # malformed
    return f"<answer>{answer}"                              # malformed (unclosed)


def synthetic_trajectory(prompt, text: str, truncated: bool = False):
    """A trajectory shaped as the trainer records one for ``prompt``: a chat prompt's completion is one assistant
    message. Token ids stand in as character codes (no tokenizer: the gate reads ids, it does not decode them)."""
    from grpo_rlvr.messages import is_chat
    from grpo_rlvr.rollout.trajectory import Trajectory

    shown = "".join(str(m.get("content", "")) for m in prompt) if is_chat(prompt) else str(prompt)
    completion = [{"role": "assistant", "content": text}] if is_chat(prompt) else text
    ids = tuple(map(ord, text)) + (() if truncated else (0,))
    return Trajectory(prompt, completion, tuple(map(ord, shown)), ids, None, "length" if truncated else "eos")


def make_artifact(brief_path: Path, out: Path, n: int = 64, prompts: int = 32, verdict: str | None = "agree",
                  reviewer_kind: str = "human", complete=completions_for) -> Path:
    brief = load_brief(brief_path)
    rows = load_rows(brief)[:prompts]
    per = -(-n * 2 // prompts)
    cands, cand_rows = [], []
    for p, row in enumerate(rows):
        for j in range(per):
            cands.append({"prompt_index": p,
                          "trajectory": synthetic_trajectory(row["prompt"], complete(row["answer"], p + j))})
            cand_rows.append(row)
    write_artifact(brief, cands, cand_rows, n, out, sampling={**brief.sampling(), "seed": 0})
    if verdict:
        review_all(out, verdict, reviewer_kind)
    return out


def review_all(out: Path, verdict: str = "agree", reviewer_kind: str = "human", seconds: float = 4.0) -> None:
    art = load_artifact(out)
    for s in art.samples:
        s["verdict"] = make_verdict(art.manifest, s, verdict, "tester", reviewer_kind, seconds,
                                    note="" if verdict == "agree" else "wrong score")
    art.save_samples()


def proven_start(run: Path, door: str = "grpo-rlvr train") -> dict:
    """What the rendered train.py leaves in ``run/output`` once its run check passed: a start record signed with
    this user's run key (``records/provenance.py``), for tests that write a run's logs by hand."""
    import json
    import os

    from grpo_rlvr.records.provenance import append_start, new_start

    lock_file = Path(run) / "brief.lock.json"
    lock = json.loads(lock_file.read_text()) if lock_file.is_file() else {}
    start = new_start(Path(run), lock, door, os.getpid(), None)
    append_start(Path(run) / "output", start)
    return start
