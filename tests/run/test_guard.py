"""The gate where training starts: the rendered train.py refuses an unreviewed run or an edited rendered file
by itself (so `python train.py`, `bash launch.sh` and `accelerate launch` inherit it) before any model loads;
`grpo-rlvr train` refuses the same; the one escape hatch is a capped, marked, unsaved smoke test."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
import yaml

from artifacts import make_artifact
from briefs import example_brief_text
from grpo_rlvr.run.guard import SMOKE_MARKER, _prepare_output
from grpo_rlvr.run.launch import summary_step
from grpo_rlvr.run.lock import changed_files, read_lock, sha256_file
from grpo_rlvr.run.render import RUN_FILES, render

CLI = [sys.executable, "-m", "grpo_rlvr"]
VENV_ON_PATH = {**os.environ, "PATH": f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}"}  # an activated venv
# Runs the rendered train.py as `python train.py` would, then reports whether the model code (modeling_qwen2,
# imported only to build or load the model) was imported, and whether torch was.
PROBE = ("import runpy, sys, atexit; sys.argv = [sys.argv[1]]; "
         "atexit.register(lambda: print('MODEL-CODE-LOADED' if any(m.startswith('transformers.models.qwen2') "
         "and '.modeling_' in m for m in sys.modules) else 'NO-MODEL-CODE', file=sys.stderr)); "
         "atexit.register(lambda: print('TORCH-LOADED' if 'torch' in sys.modules else 'NO-TORCH', file=sys.stderr)); "
         "runpy.run_path(sys.argv[0], run_name='__main__')")


def run_py(run, *args, probe=False):
    # the probe starts as `python -I`, as train.py would restart itself, so its exit hook survives
    cmd = [sys.executable, "-I", "-c", PROBE, str(run / "train.py")] if probe else [sys.executable, "train.py", *args]
    return subprocess.run(cmd, cwd=run, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "TOKENIZERS_PARALLELISM": "false"})


def test_lock_records_a_hash_of_every_rendered_file(workspace):
    run = render(workspace / "brief.yaml").dir
    lock = read_lock(run)
    assert set(lock["files"]) == set(RUN_FILES) - {"brief.lock.json"}
    assert all(lock["files"][f] == sha256_file(run / f) for f in lock["files"])
    assert changed_files(run, lock) == []


def test_unreviewed_run_refused_by_train_py_and_launch_sh_before_loading_the_model(workspace):
    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection", verdict=None)
    run = render(workspace / "brief.yaml").dir
    for out in (run_py(run, probe=True), subprocess.run(["bash", "launch.sh"], cwd=run, capture_output=True,
                                                        text=True, timeout=300, env=VENV_ON_PATH)):
        assert out.returncode == 1, out.stderr[-2000:]
        assert "training refused (nothing was loaded)" in out.stderr and "without a verdict" in out.stderr
        assert "Traceback" not in out.stderr
    probed = run_py(run, probe=True).stderr
    # one process checks before torch loads: a refusal costs the check, not torch's and TRL's import
    assert "NO-MODEL-CODE" in probed and "NO-TORCH" in probed
    assert not (run / "output" / "metrics.jsonl").exists()
    # the header no longer offers a way around the gate
    head = (run / "train.py").read_text().split('"""')[1]
    assert "grpo-rlvr train RUN" in head and "makes the same check itself" in head


def test_missing_inspection_refused_by_train_py(workspace):
    run = render(workspace / "brief.yaml").dir
    out = run_py(run)
    assert out.returncode == 1 and "run `grpo-rlvr inspect BRIEF` first" in out.stderr


@pytest.mark.parametrize("name", ["train.py", "grpo_config.yaml"])
def test_an_edited_rendered_file_is_refused_by_grpo_rlvr_train_and_by_train_py(workspace, name):
    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    run = render(workspace / "brief.yaml").dir
    assert subprocess.run([*CLI, "train", str(run), "--dry-run"], capture_output=True).returncode == 0
    with (run / name).open("a") as fh:
        fh.write("\n# edited after render\n")
    cli = subprocess.run([*CLI, "train", str(run)], capture_output=True, text=True, timeout=300)
    assert cli.returncode == 1 and f"{name} was changed after render" in cli.stderr, cli.stderr
    itself = run_py(run, probe=True)
    assert itself.returncode == 1 and f"{name} was changed after render" in itself.stderr
    assert "NO-MODEL-CODE" in itself.stderr and "NO-TORCH" in itself.stderr


def test_a_stale_summary_is_never_reported(tmp_path):
    summary = tmp_path / "train_summary.json"
    summary.write_text(json.dumps({"global_step": 999}))
    old = time.time() - 3600
    os.utime(summary, (old, old))
    assert summary_step(summary, since=time.time()) is None
    summary.write_text(json.dumps({"global_step": 7}))
    assert summary_step(summary, since=time.time() - 5) == 7


def test_a_gated_run_moves_an_earlier_smoke_test_aside(tmp_path):
    out = tmp_path / "output"
    out.mkdir()
    (out / SMOKE_MARKER).write_text("{}")
    (out / "metrics.jsonl").write_text('{"step": 1}\n')
    _prepare_output(out, smoke=False)
    moved = list(tmp_path.glob("output.unreviewed-smoke-*"))
    assert len(moved) == 1 and (moved[0] / "metrics.jsonl").is_file() and not out.exists()


@pytest.mark.e2e
def test_unreviewed_smoke_test_is_capped_unsaved_marked_and_flagged(workspace):
    """Real GRPOTrainer on CPU: the smoke test runs without a review, 3 steps at most, saves nothing usable,
    and says so in its outputs and in diagnose; a stale summary from before is not reported as its result."""
    data = yaml.safe_load(example_brief_text())
    data["grpo"].update({"per_device_train_batch_size": 16, "logging_steps": 1})
    (workspace / "brief.yaml").write_text(yaml.safe_dump(data))
    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection", verdict=None)
    run = render(workspace / "brief.yaml").dir
    (run / "output").mkdir()
    (run / "output" / SMOKE_MARKER).write_text("{}")           # an earlier smoke test's folder ...
    (run / "output" / "train_summary.json").write_text(json.dumps({"global_step": 999}))
    old = time.time() - 3600
    os.utime(run / "output" / "train_summary.json", (old, old))  # ... with its old summary
    out = subprocess.run([*CLI, "train", str(run), "--unreviewed-smoke-test", "--max-steps", "50", "--json"],
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    res = json.loads(out.stdout)
    assert res["ok"] and res["global_step"] == 3 and "--unreviewed-smoke-test" in res["command"]
    assert "UNREVIEWED SMOKE TEST" in out.stderr
    summary = json.loads((run / "output" / "train_summary.json").read_text())
    assert summary["unreviewed_smoke_test"] is True and summary["global_step"] == 3
    assert json.loads((run / "output" / SMOKE_MARKER).read_text())["unreviewed_smoke_test"] is True
    assert not (run / "output" / "final").exists() and not list((run / "output").glob("checkpoint-*"))
    diag = subprocess.run([*CLI, "diagnose", str(run), "--json"], capture_output=True, text=True, timeout=300)
    d = json.loads(diag.stdout)
    assert d["findings"][0]["id"] == "unreviewed_smoke_test" and d["recommended_variant"] is None
    assert diag.returncode == 1 and d["exit_code"] == 1


@pytest.mark.e2e
def test_every_rank_refuses_under_a_multi_process_launch(workspace):
    """Two CPU processes through launch.sh → torch.distributed.run: rank 0 checks, both exit, nothing trains."""
    data = yaml.safe_load(example_brief_text())
    data["grpo"].update({"per_device_train_batch_size": 8})
    data["hardware"] = {"accelerator": "cpu", "cpu_processes": 2}
    (workspace / "brief.yaml").write_text(yaml.safe_dump(data))
    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection", verdict=None)
    run = render(workspace / "brief.yaml").dir
    assert "torch.distributed.run --standalone --nproc_per_node 2 train.py" in (run / "launch.sh").read_text()
    out = subprocess.run(["bash", "launch.sh"], cwd=run, capture_output=True, text=True, timeout=600,
                         env=VENV_ON_PATH)
    assert out.returncode != 0, out.stderr[-3000:]
    assert out.stderr.count("training refused (nothing was loaded)") == 1, out.stderr[-3000:]
    assert not (run / "output" / "metrics.jsonl").exists()
