"""``grpo-rlvr score`` as text: the rows that ``grpo_rlvr.score.scoring.score_file`` returns, one line each."""

from __future__ import annotations


def format_scores(rows: list[dict]) -> str:
    lines = []
    for r in rows:
        score = "None" if r["score"] is None else f"{r['score']:.3f}"
        lines.append(f"{r['index']:>4}  {score:>7}  {r['reason']}")
    scored = [r["score"] for r in rows if r["score"] is not None]
    if scored:
        lines.append(f"{len(rows)} scored, mean {sum(scored) / len(scored):.3f}")
    return "\n".join(lines)
