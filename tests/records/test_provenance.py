"""The run key, the signed start records (provenance.json) and the ledger's proofs, on real files.

The attacks on a run's records: a ledger written by hand, a ledger and checkpoint copied from another run, a
start record edited or copied, checkpoint bytes changed after the save, an entry saved by a process that passed no
run check. The trainings that make these records for real are in tests/test_red_team.py (e2e)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grpo_rlvr.errors import RunKeyError
from grpo_rlvr.records import checkpoint_ledger, output_audit, provenance, run_key
from grpo_rlvr.records.checked_run import RunCheck


def _run_folder(root: Path) -> Path:
    run = root / "run"
    (run / "output").mkdir(parents=True)
    (run / "brief.lock.json").write_text(json.dumps({"fingerprint": "f" * 64}))
    return run


def _checkpoint(output: Path, name: str = "checkpoint-1") -> Path:
    ckpt = output / name
    ckpt.mkdir()
    (ckpt / "model.safetensors").write_bytes(os.urandom(256))
    (ckpt / "config.json").write_text("{}")
    for name in ("optimizer.pt", "scheduler.pt", "rng_state.pth"):   # what a resume loads beside the weights
        (ckpt / name).write_bytes(os.urandom(16))
    (ckpt / "trainer_state.json").write_text('{"global_step": 1}')
    return ckpt


@pytest.fixture
def started(tmp_path):
    """A run folder whose check passed for this process: its start recorded as train.py records it."""
    run = _run_folder(tmp_path)
    start = provenance.new_start(run, {"fingerprint": "f" * 64}, "grpo-rlvr train", os.getpid(), None)
    provenance.append_start(run / "output", start)
    return run


def passed(run: Path) -> RunCheck:
    """The check train.py holds after it passed for this process (``refuse_unless_gated`` returns it): the
    start it signed is the one recorded in the run's outputs."""
    [start] = provenance.read_starts(run / "output")
    return RunCheck({"fingerprint": "f" * 64}, [], {"checked": {}, "rewards": {}}, start)


# ---------------------------------------------------------------------------- the key


def test_the_key_is_made_once_private_and_refused_when_others_may_read_it(tmp_path):
    path = tmp_path / "share" / "grpo-rlvr" / "run-key"
    key = run_key.load_key(path)
    assert len(key) == 64 and (path.stat().st_mode & 0o777) == 0o600
    assert run_key.load_key(path) == key    # created on first use only
    path.chmod(0o644)
    with pytest.raises(RunKeyError, match=rf"{path}.*chmod 600"):
        run_key.load_key(path)
    path.chmod(0o600)
    link = tmp_path / "link-key"
    link.symlink_to(path)
    with pytest.raises(RunKeyError, match="not a regular file"):
        run_key.load_key(link)


def test_the_key_lives_under_the_passwd_home_whatever_HOME_says(monkeypatch, tmp_path):
    import pwd

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    home = pwd.getpwuid(os.getuid()).pw_dir
    assert run_key.key_path() == Path(home) / ".local" / "share" / "grpo-rlvr" / "run-key"


def test_a_proof_is_bound_to_the_key_and_to_every_field(tmp_path):
    key, other = run_key.load_key(tmp_path / "a"), run_key.load_key(tmp_path / "b")
    record = {"name": "checkpoint-1", "files": {"model.safetensors": "ab"}}
    proof = run_key.sign(record, key)
    assert run_key.valid(record, proof, key)
    assert not run_key.valid(record, proof, other)
    assert not run_key.valid({**record, "name": "checkpoint-2"}, proof, key)
    assert not run_key.valid(record, None, key)


# ---------------------------------------------------------------------------- the start record


def test_a_start_is_valid_for_its_output_folder_and_process_only(started, tmp_path):
    output = started / "output"
    [start] = provenance.valid_starts(output).values()
    assert start["door"] == "grpo-rlvr train" and start["trainer_pid"] == os.getpid()
    assert provenance.proven_run_id(start) == start["run_id"]
    assert provenance.proven_run_id({**start, "trainer_pid": os.getppid()}) is None   # another process
    data = json.loads((output / provenance.PROVENANCE).read_text())
    data["starts"][0]["door"] = "python train.py"                                     # edited by hand
    (output / provenance.PROVENANCE).write_text(json.dumps(data))
    assert provenance.valid_starts(output) == {}
    assert provenance.proven_run_id(data["starts"][0]) is None


def test_a_start_copied_into_another_run_is_not_valid_there(started, tmp_path):
    other = _run_folder(tmp_path / "other")
    shutil.copy(started / "output" / provenance.PROVENANCE, other / "output" / provenance.PROVENANCE)
    assert provenance.valid_starts(started / "output") and provenance.valid_starts(other / "output") == {}


def test_the_door_is_what_the_starter_reports(monkeypatch):
    for k in ("GRPO_RLVR_STARTED_BY", "TORCHELASTIC_RUN_ID", "LOCAL_RANK", "ACCELERATE_PROCESS_ID"):
        monkeypatch.delenv(k, raising=False)
    assert provenance.door() == "python train.py"
    monkeypatch.setenv("LOCAL_RANK", "0")
    assert provenance.door() == "accelerate launch / torchrun train.py"
    monkeypatch.setenv("GRPO_RLVR_STARTED_BY", "launch.sh")
    assert provenance.door() == "launch.sh"


# ---------------------------------------------------------------------------- the ledger and --resume


def test_a_checkpoint_saved_by_the_started_process_resumes(started):
    output = started / "output"
    ckpt = _checkpoint(output)
    checkpoint_ledger.record(output, ckpt, passed(started))
    entry = checkpoint_ledger.read_ledger(output)["checkpoint-1"]
    assert entry["proof"] and set(entry["files"]) == {p.name for p in ckpt.iterdir()}   # every file, bound
    assert checkpoint_ledger.resume_problems(output, str(ckpt)) == []
    assert output_audit.audit(output) == []


def test_a_hand_written_ledger_is_refused(started):
    output = started / "output"
    ckpt = _checkpoint(output)
    files = checkpoint_ledger.checkpoint_digests(ckpt)      # the right digests, but no key to sign them with
    [run_id] = provenance.valid_starts(output)
    for entry in (files, {"files": files, "run_id": run_id, "proof": "0" * 64}):
        (output / "checkpoints.json").write_text(json.dumps({"checkpoint-1": entry}))
        [problem] = checkpoint_ledger.resume_problems(output, str(ckpt))
        assert problem.startswith(f"--resume {ckpt}: its entry in checkpoints.json carries no valid proof"), problem
        assert "start fresh" in problem


def test_a_ledger_and_checkpoint_copied_from_another_run_are_refused(started, tmp_path):
    output = started / "output"
    checkpoint_ledger.record(output, _checkpoint(output), passed(started))
    other = _run_folder(tmp_path / "other")
    for name in ("checkpoint-1", "checkpoints.json", provenance.PROVENANCE):
        (shutil.copytree if name.startswith("checkpoint-") else shutil.copy)(output / name, other / "output" / name)
    [problem] = checkpoint_ledger.resume_problems(other / "output", str(other / "output" / "checkpoint-1"))
    assert "carries no valid proof that this run saved it" in problem


def test_an_entry_of_a_start_this_run_does_not_hold_is_refused(started):
    output = started / "output"
    ckpt = _checkpoint(output)
    checkpoint_ledger.record(output, ckpt, passed(started))
    (output / provenance.PROVENANCE).unlink()          # the start record removed (or never written)
    [problem] = checkpoint_ledger.resume_problems(output, str(ckpt))
    assert "does not hold a valid record of" in problem


def test_checkpoint_bytes_changed_after_the_save_are_refused(started):
    output = started / "output"
    ckpt = _checkpoint(output)
    checkpoint_ledger.record(output, ckpt, passed(started))
    (ckpt / "model.safetensors").write_bytes(os.urandom(256))
    [problem] = checkpoint_ledger.resume_problems(output, str(ckpt))
    assert "its files changed since this run saved them (model.safetensors)" in problem


@pytest.mark.parametrize("name", ["optimizer.pt", "scheduler.pt", "rng_state.pth", "trainer_state.json"])
def test_state_a_resume_loads_beside_the_weights_is_bound_too(started, name):
    """The Trainer loads these on resume, and each steers what trains next (a scheduler's state carries its base
    learning rates; the optimizer's moments the next updates): changed, the resume is refused."""
    output = started / "output"
    ckpt = _checkpoint(output)
    checkpoint_ledger.record(output, ckpt, passed(started))
    (ckpt / name).write_bytes(os.urandom(16))
    [problem] = checkpoint_ledger.resume_problems(output, str(ckpt))
    assert f"its files changed since this run saved them ({name})" in problem


def test_a_file_added_to_a_checkpoint_after_the_save_is_refused(started):
    output = started / "output"
    ckpt = _checkpoint(output)
    checkpoint_ledger.record(output, ckpt, passed(started))
    (ckpt / "global_step1").mkdir()
    (ckpt / "global_step1" / "mp_rank_00_model_states.pt").write_bytes(b"other weights")   # in a sub-folder too
    [problem] = checkpoint_ledger.resume_problems(output, str(ckpt))
    assert "its files changed since this run saved them (global_step1/mp_rank_00_model_states.pt)" in problem


def test_a_process_that_passed_no_check_saves_unproven_entries(started):
    output = started / "output"
    ckpt = _checkpoint(output)
    checkpoint_ledger.record(output, ckpt, None)       # a wrapper that replaced the check: no check passed
    entry = checkpoint_ledger.read_ledger(output)["checkpoint-1"]
    assert entry["proof"] is None and "did not pass the run check" in entry["unproven"]
    assert "carries no valid proof" in checkpoint_ledger.resume_problems(output, str(ckpt))[0]
    [finding] = output_audit.audit(output)
    assert finding.startswith(f"{ckpt}: its entry in checkpoints.json carries no valid proof")


def test_outputs_with_no_valid_start_are_flagged(tmp_path):
    output = _run_folder(tmp_path) / "output"
    assert output_audit.audit(output) == []              # nothing trained yet: nothing to say
    (output / "metrics.jsonl").write_text('{"step": 1, "reward": 0.5}\n')
    [finding] = output_audit.audit(output)
    assert "holds no valid start" in finding and "grpo-rlvr train RUN" in finding


def test_the_run_check_signs_a_start_for_the_process_that_asked(started, tmp_path):
    """In the clean interpreter the start names its parent: the train.py process that asked for the check."""
    code = ("import json, os, sys;"
            "from grpo_rlvr.records.provenance import new_start;"
            "print(json.dumps(new_start(sys.argv[1], {}, 'x', os.getppid(), None)))")
    out = subprocess.run([sys.executable, "-I", "-c", code, str(started)], capture_output=True, text=True, check=True)
    start = json.loads(out.stdout)
    assert provenance.proven_run_id(start) == start["run_id"]


def test_the_limit_code_that_reads_the_key_can_sign_a_start_the_check_never_made(tmp_path):
    """docs/threat-model.md's row: a program running as this user reads the key and signs; nothing on the machine tells
    that record from one the run check made. The hook keeps the agent's commands off the key; another user is
    the answer."""
    output = _run_folder(tmp_path) / "output"
    record = {"kind": "start", "run_id": "forged", "output": str(output.resolve())}
    forged = {**record, "proof": run_key.sign(record, run_key.load_key())}   # what such a program can do
    provenance.append_start(output, forged)
    assert "forged" in provenance.valid_starts(output)


@pytest.mark.e2e
def test_the_demos_in_process_door_records_its_start_and_proves_what_it_saved(workspace):
    """`grpo-rlvr demo` trains in its own process (run.guard.demo_acceptance): its start names that process."""
    from artifacts import make_artifact
    from grpo_rlvr.run.launch import train
    from grpo_rlvr.run.render import render

    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    run = render(workspace / "brief.yaml").dir
    assert train(run, max_steps=1, demo=True).ok
    [start] = provenance.valid_starts(run / "output").values()
    assert start["door"] == "grpo-rlvr demo" and start["trainer_pid"] == os.getpid()
    assert checkpoint_ledger.read_ledger(run / "output")["final"]["run_id"] == start["run_id"]
    assert output_audit.audit(run / "output") == []


@pytest.mark.parametrize("rank", [0, 1])
def test_every_rank_waits_for_the_others_before_rank_0_records_a_checkpoint(started, monkeypatch, rank):
    """In a distributed run each rank writes its own random state: the ledger callback waits at a barrier on every
    rank, and rank 0 records the checkpoint only after it (torch.distributed stands in for a two-process group)."""
    import torch.distributed as dist
    from transformers import TrainerControl, TrainerState

    from grpo_rlvr.trainer.training_callbacks import CheckpointLedger

    order = []
    monkeypatch.setattr(dist, "is_available", lambda: True)
    monkeypatch.setattr(dist, "is_initialized", lambda: True)
    monkeypatch.setattr(dist, "get_world_size", lambda *a: 2)
    monkeypatch.setattr(dist, "barrier", lambda *a, **k: order.append("barrier"))
    monkeypatch.setattr(checkpoint_ledger, "record", lambda *a, **k: order.append("record"))
    output = started / "output"
    _checkpoint(output)
    state = TrainerState()
    state.global_step, state.is_world_process_zero = 1, rank == 0
    args = type("Args", (), {"output_dir": str(output)})()
    CheckpointLedger(output, passed(started)).on_save(args, state, TrainerControl())
    assert order == (["barrier", "record"] if rank == 0 else ["barrier"])


# ---------------------------------------------------------------------------- a resume belongs to its run


def test_a_checkpoint_saved_under_another_lock_does_not_resume_and_diagnose_flags_it(tmp_path):
    """The red team's shape: a checkpoint saved under brief A and its review; the folder rendered again for brief
    B (other rows, its own review) and the outputs moved back. The ledger's proof holds (the same run id, the same
    bytes), but the start names lock A: --resume is refused, saying what changed, and the audit flags it."""
    run = tmp_path / "run"
    (run / "output").mkdir(parents=True)
    lock_a = {"fingerprint": "a" * 64, "brief": "/p/brief_a.yaml", "inspection": "/p/a/inspection"}
    (run / "brief.lock.json").write_text(json.dumps(lock_a))
    start = provenance.new_start(run, lock_a, "grpo-rlvr train", os.getpid(), None)
    provenance.append_start(run / "output", start)
    ckpt = _checkpoint(run / "output")
    checkpoint_ledger.record(run / "output", ckpt, RunCheck(lock_a, [], {"checked": {}, "rewards": {}}, start))
    assert checkpoint_ledger.resume_problems(run / "output", str(ckpt)) == []      # under its own lock: resumes
    assert output_audit.audit(run / "output") == []
    lock_b = {"fingerprint": "b" * 64, "brief": "/p/brief_b.yaml", "inspection": "/p/b/inspection"}
    (run / "brief.lock.json").write_text(json.dumps(lock_b))                        # rendered again for brief B
    [problem] = checkpoint_ledger.resume_problems(run / "output", str(ckpt))
    assert "saved under another lock than this run folder's now" in problem
    assert "brief /p/brief_a.yaml → /p/brief_b.yaml" in problem and "inspection /p/a/inspection → /p/b/inspection" \
        in problem and f"fingerprint {'a' * 64} → {'b' * 64}" in problem
    assert "a re-rendered folder starts a new run" in problem and "grpo-rlvr render BRIEF --out NEW_RUN" in problem
    [finding] = output_audit.audit(run / "output")
    assert finding.startswith(f"{ckpt}: saved by a training under another lock") and "brief_b.yaml" in finding
    (run / "brief.lock.json").write_text(json.dumps(lock_a))                        # rendered for A again
    assert checkpoint_ledger.resume_problems(run / "output", str(ckpt)) == []


def test_a_lock_that_differs_only_in_its_rendered_files_is_another_lock(started):
    output = started / "output"
    ckpt = _checkpoint(output)
    checkpoint_ledger.record(output, ckpt, passed(started))
    (started / "brief.lock.json").write_text(json.dumps({"fingerprint": "f" * 64, "files": {"train.py": "0" * 64}}))
    [problem] = checkpoint_ledger.resume_problems(output, str(ckpt))
    assert "the rendered files or settings" in problem
