"""Nothing overwrites a person's work: `inspect` refuses a folder holding verdicts (exit 2, naming --force;
--force keeps the old folder as inspection.bak-<time>/), and `render` refuses a run folder holding outputs
made under another lock (--force moves them to output.bak-<time>/)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from artifacts import make_artifact
from grpo_rlvr.errors import ConfigError
from grpo_rlvr.gate.check import check_gate
from grpo_rlvr.inspection import load_artifact
from grpo_rlvr.run.render import render

CLI = [sys.executable, "-m", "grpo_rlvr"]


def test_a_reviewed_inspection_survives_inspect(workspace):
    art = make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    before = (art / "samples.jsonl").read_bytes()
    out = subprocess.run([*CLI, "inspect", str(workspace / "brief.yaml")], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 2 and "--force" in out.stderr and "64 verdict(s)" in out.stderr
    assert "Traceback" not in out.stderr and "grpo-rlvr review" in out.stderr
    assert (art / "samples.jsonl").read_bytes() == before and check_gate(art).passed


def test_force_keeps_a_backup_of_the_reviewed_inspection(workspace):
    art = make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    with pytest.raises(ConfigError, match="--force"):
        make_artifact(workspace / "brief.yaml", art, verdict=None)
    before = (art / "samples.jsonl").read_bytes()
    from artifacts import synthetic_trajectory
    from grpo_rlvr.brief import load_brief
    from grpo_rlvr.dataset.rows import load_rows
    from grpo_rlvr.inspection.run import write_artifact

    brief = load_brief(workspace / "brief.yaml")
    rows = load_rows(brief)[:32]
    cands = [{"prompt_index": i, "trajectory": synthetic_trajectory(r["prompt"], f"<answer>{r['answer']}</answer>")}
             for i, r in enumerate(rows) for _ in range(4)]
    write_artifact(brief, cands, [r for r in rows for _ in range(4)], 64, art, sampling=brief.sampling(), force=True)
    (backup,) = art.parent.glob("inspection.bak-*")
    assert (backup / "samples.jsonl").read_bytes() == before and check_gate(backup).passed
    assert all(s["verdict"] is None for s in load_artifact(art).samples)


def test_an_unreviewed_inspection_is_replaced_without_force(workspace):
    art = make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection", verdict=None)
    make_artifact(workspace / "brief.yaml", art, verdict=None)
    assert not list(art.parent.glob("inspection.bak-*"))


def test_render_refuses_outputs_of_another_lock(workspace):
    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    run = render(workspace / "brief.yaml").dir
    (run / "output" / "checkpoint-10").mkdir(parents=True)
    (run / "output" / "metrics.jsonl").write_text(json.dumps({"step": 10, "reward": 0.5}) + "\n")
    render(workspace / "brief.yaml")                        # the same lock: re-rendering is harmless
    brief = workspace / "brief.yaml"
    brief.write_text(brief.read_text().replace("learning_rate: 2.0e-4", "learning_rate: 1.0e-4"))
    out = subprocess.run([*CLI, "render", str(brief)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 2 and "another render" in out.stderr and "--force" in out.stderr
    assert json.loads((run / "brief.lock.json").read_text())["grpo_config"]["learning_rate"] == 2.0e-4
    ok = subprocess.run([*CLI, "render", str(brief), "--force"], capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0, ok.stderr
    (backup,) = run.glob("output.bak-*")
    assert (backup / "checkpoint-10").is_dir() and not (run / "output").exists()
    assert json.loads((run / "brief.lock.json").read_text())["grpo_config"]["learning_rate"] == 1.0e-4
