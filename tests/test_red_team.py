"""Red team: getting a GRPO run past the gate with a review that no person gave, or that was given for another
model, other data or other rewards, the way RL or a too-helpful agent would, without faking a terminal, editing
the installed package or using root (docs/threat-model.md's "cannot stop" table).

Each test performs the attack on real files with the real CLI, train.py, datasets or transformers, shows what
the attack reaches where that is part of the point, and checks that the run is refused with a message that says
what changed. The shell-command doors are in tests/plugin/test_hook.py (``red_team``), the startup doors in
tests/run/test_clean_interpreter.py and tests/run/test_launch_server.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from artifacts import make_artifact
from briefs import SUM_REWARD, write_brief
from grpo_rlvr.identity import hash_cache
from grpo_rlvr.records import output_audit, provenance
from grpo_rlvr.run.render import render
from hub_cache_layout import add_snapshot
from paths import CLI

C1, C2 = "c1" * 20, "c2" * 20


def cli(*args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, timeout=600, **kw)


def rule4(gate_result) -> list[str]:
    return next(r for r in gate_result.rules if r.id == 4).problems


def flip_byte(path: Path) -> None:
    """Rewrite one byte in the middle of ``path`` in place: same inode, same size (a new SFT checkpoint)."""
    size = path.stat().st_size
    with path.open("r+b") as fh:
        fh.seek(size // 2)
        b = fh.read(1)
        fh.seek(size // 2)
        fh.write(bytes([b[0] ^ 0xFF]))


# ---------------------------------------------------------------------------- links


def test_weights_rewritten_through_a_hardlink_fail_rule_4(own_model, tmp_path):
    """A hard link elsewhere is the same file: writing through it (mtime put back) moves the inode's ctime."""
    from grpo_rlvr.gate.check import check_gate

    brief = own_model / "brief.yaml"
    art = make_artifact(brief, own_model / "out" / "inspection")
    weights = own_model / "model" / "model.safetensors"
    other_name = tmp_path / "innocent.bin"
    os.link(weights, other_name)
    st = weights.stat()
    flip_byte(other_name)
    os.utime(other_name, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert rule4(check_gate(art, brief=brief)) == [
        "model weights changed since the review (model.safetensors): re-inspect and review"]


def test_a_model_folder_link_repointed_after_render_is_refused(workspace, tmp_path):
    """train.py loads the folder the link pointed to at render; pointing the link at new weights is caught by
    the check (the brief's model is now other content), not silently trained."""
    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    run = render(workspace / "brief.yaml").dir
    sft = tmp_path / "sft-output"
    shutil.copytree(workspace / "model", sft)
    flip_byte(sft / "model.safetensors")
    (workspace / "model").unlink()
    (workspace / "model").symlink_to(sft, target_is_directory=True)
    out = cli("train", run)
    assert out.returncode == 1 and "model weights changed since the review (model.safetensors)" in out.stderr


# ---------------------------------------------------------------------------- caches that stand in for bytes


def test_a_forged_hash_cache_entry_does_not_let_new_weights_train(own_model):
    """The hash cache keys a hash by the file's stamp; anyone who writes the cache folder can file the reviewed
    hash under the stamp of new weights. `gate` trusts the cache (that is its speed); the run check reads bytes."""
    brief = own_model / "brief.yaml"
    art = make_artifact(brief, own_model / "out" / "inspection")
    run = render(brief).dir
    weights = own_model / "model" / "model.safetensors"
    reviewed = hash_cache.sha256_file(weights)
    flip_byte(weights)
    st = weights.stat()
    forged = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns, "sha256": reviewed}
    (hash_cache.cache_dir() / f"{st.st_dev}-{st.st_ino}.json").write_text(json.dumps(forged))
    assert cli("gate", art).returncode == 0          # the forgery is real: a fresh process that trusts the cache
    out = cli("train", run)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "model weights changed since the review (model.safetensors)" in out.stderr
    assert not (run / "output" / "final").exists()


POISON = """
import os, sys
from datasets import load_dataset
from grpo_rlvr.dataset.rows import load_split
f = sys.argv[1]
st = os.stat(f)
reviewed = open(f).read()
open(f, "w").write(reviewed.replace("REVIEWED", "UNSEEN__"))   # same size
os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
load_dataset("json", data_files=f, split="train")             # datasets caches the unseen rows under f's stamp
open(f, "w").write(reviewed)                                   # the reviewed bytes back, mtime put back
os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
print("plain:", load_dataset("json", data_files=f, split="train")["prompt"][0])
spec = {"path": f, "local": True, "split": "train", "subset": None, "field": "dataset.path"}
print("run:", load_split(spec, "prompt", {})["prompt"][0])
"""


def test_a_poisoned_datasets_cache_does_not_reach_training(tmp_path):
    data = tmp_path / "train.jsonl"
    data.write_text(json.dumps({"prompt": "REVIEWED 2+2=", "answer": "4"}) + "\n")
    out = subprocess.run([sys.executable, "-c", POISON, str(data)], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "HF_DATASETS_CACHE": str(tmp_path / "datasets-cache")})
    assert out.returncode == 0, out.stderr[-3000:]
    assert "plain: UNSEEN__ 2+2=" in out.stdout          # the attack is real against datasets' own cache
    assert "run: REVIEWED 2+2=" in out.stdout            # what the rendered train.py loads: the reviewed bytes


# ---------------------------------------------------------------------------- files that load but were not bound


def _folder_brief(workspace: Path) -> Path:
    (workspace / "data" / "folder").mkdir()
    shutil.copyfile(workspace / "data" / "train.jsonl", workspace / "data" / "folder" / "train.jsonl")
    return write_brief(workspace, "folder.yaml", dataset={"path": "./data/folder", "prompt_column": "prompt"})


def test_a_dataset_card_added_after_the_review_fails_rule_4(workspace):
    """datasets reads a folder's README.md (and .huggingface.yaml) `configs` to choose its files."""
    from grpo_rlvr.brief import load_brief
    from grpo_rlvr.dataset.rows import load_rows
    from grpo_rlvr.gate.check import check_gate

    brief = _folder_brief(workspace)
    folder = workspace / "data" / "folder"
    rows = [json.loads(x) for x in (folder / "train.jsonl").read_text().splitlines()]
    # a file that datasets does not load by default (train.jsonl names the split), there from the start
    (folder / "extra").mkdir()
    (folder / "extra" / "other.jsonl").write_text("".join(json.dumps({**r, "answer": "0"}) + "\n" for r in rows))
    assert {r["answer"] for r in load_rows(load_brief(brief))} != {"0"}
    art = make_artifact(brief, workspace / "out" / "inspection")
    assert check_gate(art, brief=brief).passed
    for card, text in (("README.md", "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: train\n"
                                     "    path: extra/other.jsonl\n---\n# notes\n"),
                       (".huggingface.yaml", "configs:\n- config_name: default\n  data_files: extra/other.jsonl\n")):
        (folder / card).write_text(text)       # the card makes the unread file the train split
        assert {r["answer"] for r in load_rows(load_brief(brief))} == {"0"}
        assert rule4(check_gate(art, brief=brief)) == [
            f"dataset folder ./data/folder: files added since the review ({card}): re-inspect and review"]
        (folder / card).unlink()


@pytest.mark.parametrize("where", ["../../outside.jsonl", "/tmp/outside.jsonl", ".hidden/rows.jsonl",
                                   "hf://datasets/org/other/train.jsonl"])
def test_a_dataset_card_naming_files_outside_the_folder_is_refused(workspace, where):
    from datasets import load_dataset

    brief = _folder_brief(workspace)
    folder = workspace / "data" / "folder"
    make_artifact(brief, workspace / "out" / "inspection")
    (workspace / "outside.jsonl").write_text(json.dumps({"prompt": "UNSEEN", "answer": "1"}) + "\n")
    (folder / "README.md").write_text(f"---\nconfigs:\n- config_name: default\n  data_files:\n  - split: train\n"
                                      f"    path: {where}\n---\n")
    if where.startswith("../"):   # the attack is real: datasets loads a file outside the folder
        loaded = load_dataset(str(folder), split="train", cache_dir=str(workspace / "dcache"))
        assert loaded["prompt"] == ["UNSEEN"]
    out = cli("gate", workspace / "out" / "inspection", "--brief", brief)
    assert out.returncode == 2, out.stdout + out.stderr
    assert f"configs` name data files at {where!r}, outside the folder's visible files" in out.stderr
    assert "Traceback" not in out.stderr


def test_a_shard_the_index_names_in_a_subfolder_is_part_of_the_model(workspace, monkeypatch):
    """transformers joins an index's shard names to the folder, so `shards/x.safetensors` loads as weights."""
    from transformers import AutoModelForCausalLM

    from grpo_rlvr.gate.check import check_gate

    monkeypatch.setattr(hash_cache, "RACY_NS", 0)
    sharded = workspace / "sharded"
    AutoModelForCausalLM.from_pretrained(workspace / "model").save_pretrained(sharded, max_shard_size="2MB")
    for name in ("chat_template.jinja", "tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(workspace / "model" / name, sharded / name)
    index_path = sharded / "model.safetensors.index.json"
    index = json.loads(index_path.read_text())
    (sharded / "shards").mkdir()
    for shard in sorted(set(index["weight_map"].values())):
        (sharded / shard).rename(sharded / "shards" / shard)
    index["weight_map"] = {k: f"shards/{v}" for k, v in index["weight_map"].items()}
    index_path.write_text(json.dumps(index))
    AutoModelForCausalLM.from_pretrained(sharded)      # the layout is real: it loads
    brief = write_brief(workspace, "sharded.yaml", model={"name_or_path": "./sharded"})
    art = make_artifact(brief, workspace / "out" / "inspection")
    assert check_gate(art, brief=brief).passed
    last = sorted((sharded / "shards").iterdir())[-1]
    flip_byte(last)
    assert rule4(check_gate(art, brief=brief)) == [
        f"model weights changed since the review (shards/{last.name}): re-inspect and review"]


@pytest.mark.parametrize("kwargs", [{"subfolder": "sft-checkpoint"}, {"revision": "main"},
                                    {"cache_dir": "/tmp/other-hub"}, {"gguf_file": "sub/model.gguf"},
                                    '{"subfolder": "sft-checkpoint"}'])
def test_model_init_kwargs_that_choose_other_files_are_refused(workspace, kwargs):
    """grpo.model_init_kwargs reach TRL's from_pretrained; subfolder= would train model/sft-checkpoint/, which
    the model folder's identity (its own files) does not hold."""
    data = yaml.safe_load((workspace / "brief.yaml").read_text())
    data["grpo"]["model_init_kwargs"] = kwargs
    (workspace / "kw.yaml").write_text(yaml.safe_dump(data))
    out = cli("validate", workspace / "kw.yaml")
    key = next(iter(kwargs if isinstance(kwargs, dict) else json.loads(kwargs)))
    assert out.returncode == 2 and f"grpo.model_init_kwargs.{key}: chooses which files or code load" in out.stderr


# ---------------------------------------------------------------------------- the hub


def _hub_brief(workspace: Path, tmp_path: Path, monkeypatch, **model) -> tuple[Path, Path]:
    hub = tmp_path / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    add_snapshot(hub, "org/tiny", Path(workspace / "model").resolve(), C1)
    return hub, write_brief(workspace, "hub.yaml", model={"name_or_path": "org/tiny", **model})


def test_a_hub_blob_rewritten_in_place_fails_rule_4(workspace, tmp_path, monkeypatch):
    """A cached blob is named by its content hash, but the name does not change when the bytes do."""
    from grpo_rlvr.gate.check import check_gate

    hub, brief = _hub_brief(workspace, tmp_path, monkeypatch)
    art = make_artifact(brief, workspace / "out" / "inspection")
    assert check_gate(art, brief=brief).passed
    blob = (hub / "models--org--tiny" / "snapshots" / C1 / "model.safetensors").resolve()
    flip_byte(blob)
    (problem,) = rule4(check_gate(art, brief=brief))
    assert problem.startswith("model org/tiny: the cached model.safetensors no longer match the hashes they were "
                              "downloaded under") and f"hf download org/tiny --revision {C1} --force-download" in problem


def test_identity_reads_the_hub_cache_huggingface_hub_loads_from(workspace, tmp_path, monkeypatch):
    """HF_HUB_CACHE wins over HF_HOME in huggingface_hub; the reviewed snapshot under HF_HOME is not what loads."""
    from grpo_rlvr.identity import model_identity
    from grpo_rlvr.identity.hub_cache import hub_dir

    add_snapshot(tmp_path / "home" / "hub", "org/tiny", Path(workspace / "model").resolve(), C1)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty"))
    assert hub_dir() == tmp_path / "empty"
    spec = type("Spec", (), {"is_local": False, "resolved": "org/tiny", "revision": None})
    assert model_identity(spec)["commit"] is None
    monkeypatch.delenv("HF_HUB_CACHE")
    assert model_identity(spec)["commit"] == C1


def _marked(src: Path, dest: Path, marker: str) -> Path:
    shutil.copytree(src, dest)
    cfg = json.loads((dest / "config.json").read_text())
    (dest / "config.json").write_text(json.dumps({**cfg, "red_team_marker": marker}))
    return dest


def _load_policy(run: Path):
    from rendered import load_policy_of

    return lambda config: load_policy_of(run, config)


def test_render_pins_the_reviewed_commit_and_the_run_loads_it_when_main_moves(workspace, tmp_path, monkeypatch):
    """A hub id without a revision is pinned at inspect; render writes that commit into train.py (and into
    launch.sh's `vllm serve`), and the run loads that commit's snapshot even if main moves after the gate."""
    hub = tmp_path / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    model = Path(workspace / "model").resolve()
    add_snapshot(hub, "org/tiny", _marked(model, tmp_path / "m1", "C1"), C1)
    brief = write_brief(workspace, "hub.yaml", model={"name_or_path": "org/tiny"})
    make_artifact(brief, workspace / "out" / "inspection")
    run = render(brief).dir
    assert f"'model_revision': '{C1}'" in (run / "train.py").read_text()
    add_snapshot(hub, "org/tiny", _marked(model, tmp_path / "m2", "C2"), C2)   # main moves after the gate
    source = _load_policy(run)(type("Config", (), {"gradient_checkpointing": False}))
    assert Path(source) == hub / "models--org--tiny" / "snapshots" / C1
    assert json.loads((Path(source) / "config.json").read_text())["red_team_marker"] == "C1"
    grpo = {**yaml.safe_load((workspace / "brief.yaml").read_text())["grpo"], "per_device_train_batch_size": 8}
    grpo.pop("disable_tqdm")
    gpu = write_brief(workspace, "hub-server.yaml", model={"name_or_path": "org/tiny", "revision": C1},
                      hardware={"accelerator": "gpu", "num_gpus": 8, "vllm_gpus": 2}, grpo=grpo)
    launch_sh = (render(gpu, out=workspace / "server-run").dir / "launch.sh").read_text()
    assert f"vllm.entrypoints.openai.api_server --model org/tiny --revision {C1} --tokenizer-revision {C1}" in launch_sh


def test_render_pins_a_hub_dataset_and_the_run_loads_that_commit(workspace, tmp_path, monkeypatch):
    hub = tmp_path / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    rows = (workspace / "data" / "train.jsonl").read_text()
    (tmp_path / "d1" / "data").mkdir(parents=True)
    (tmp_path / "d1" / "data" / "train.jsonl").write_text(rows)
    (tmp_path / "d2" / "data").mkdir(parents=True)
    (tmp_path / "d2" / "data" / "train.jsonl").write_text(rows.replace('"answer": "', '"answer": "9'))
    add_snapshot(hub, "org/sums", tmp_path / "d1", C1, repo_type="dataset")
    brief = write_brief(workspace, "hubdata.yaml", dataset={"path": "org/sums", "revision": C1,
                                                            "prompt_column": "prompt"})
    run = render(brief).dir
    text = (run / "train.py").read_text()
    assert f"'revision': '{C1}'" in text
    add_snapshot(hub, "org/sums", tmp_path / "d2", C2, repo_type="dataset")   # main moves
    import runpy

    loaded = runpy.run_path(str(run / "train.py"), run_name="red_team")
    ds = loaded["load_split"](loaded["DATASET"])
    assert ds["answer"][:5] == [json.loads(x)["answer"] for x in rows.splitlines()[:5]]


@pytest.mark.e2e
def test_a_pinned_hub_model_trains_the_reviewed_commit(workspace, tmp_path, monkeypatch):
    """End to end: the brief pins org/tiny to C1 and the review read C1; main then moves to C2, which the gate
    does not look at. `grpo-rlvr train` trains C1 (a load by name, as before, trained main: C2)."""
    from grpo_rlvr.run.launch import train

    hub = tmp_path / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    model = Path(workspace / "model").resolve()
    add_snapshot(hub, "org/tiny", _marked(model, tmp_path / "m1", "C1"), C1)
    brief = write_brief(workspace, "hub.yaml", model={"name_or_path": "org/tiny", "revision": C1})
    make_artifact(brief, workspace / "out" / "inspection")
    run = render(brief).dir
    add_snapshot(hub, "org/tiny", _marked(model, tmp_path / "m2", "C2"), C2)
    res = train(run, max_steps=1)
    assert res.ok and res.global_step == 1
    assert json.loads((run / "output" / "final" / "config.json").read_text())["red_team_marker"] == "C1"


# ---------------------------------------------------------------------------- the run folder


def test_a_lock_pointed_at_another_reviewed_brief_is_refused(workspace):
    """Brief B (other data) is reviewed; brief A's run gets B's brief, fingerprint and inspection in its lock.
    Every rendered file still has its recorded hash, B's gate passes, and train.py would train A's data."""
    rows = (workspace / "data" / "train.jsonl").read_text()
    (workspace / "data" / "other.jsonl").write_text(rows.replace('"answer": "', '"answer": "1'))
    brief_b = write_brief(workspace, "b.yaml", dataset={"path": "./data/other.jsonl", "prompt_column": "prompt"},
                          output_dir="./out-b")
    insp_b = make_artifact(brief_b, workspace / "out-b" / "inspection")
    from grpo_rlvr.brief import load_brief

    run = render(workspace / "brief.yaml").dir
    lock = json.loads((run / "brief.lock.json").read_text())
    lock.update(brief=str(brief_b.resolve()), fingerprint=load_brief(brief_b).fingerprint,
                inspection=str(insp_b.resolve()))
    (run / "brief.lock.json").write_text(json.dumps(lock))
    out = cli("train", run)
    assert out.returncode == 1 and "train.py is not what `grpo-rlvr render` makes from" in out.stderr, out.stderr
    assert "brief.lock.json is not what `grpo-rlvr render` writes" in out.stderr


def test_train_py_rewritten_together_with_its_hash_is_refused(workspace):
    import hashlib

    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    run = render(workspace / "brief.yaml").dir
    text = (run / "train.py").read_text().replace('MODEL = SETUP["model"]',
                                                  'SETUP["model"] = "/elsewhere/sft-output"\nMODEL = SETUP["model"]', 1)
    (run / "train.py").write_text(text)
    lock = json.loads((run / "brief.lock.json").read_text())
    lock["files"]["train.py"] = hashlib.sha256(text.encode()).hexdigest()
    (run / "brief.lock.json").write_text(json.dumps(lock))
    out = subprocess.run([sys.executable, "train.py"], cwd=run, capture_output=True, text=True, timeout=300)
    assert out.returncode == 1 and "training refused (nothing was loaded)" in out.stderr
    assert "train.py is not what `grpo-rlvr render` makes from" in out.stderr


def test_packages_placed_in_the_run_folder_are_not_imported(workspace):
    """`python train.py` puts the script's folder first on sys.path; train.py starts again as `python -I`, which
    leaves it (and the working directory) out, so a grpo_rlvr/, trl/ or yaml.py there is never imported."""
    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection", verdict=None)
    run = render(workspace / "brief.yaml").dir
    for pkg in ("grpo_rlvr", "trl", "accelerate"):
        (run / pkg).mkdir()
        (run / pkg / "__init__.py").write_text("raise SystemExit(0)  # planted: 'training finished'\n")
    (run / "yaml.py").write_text("raise SystemExit(0)\n")
    out = subprocess.run([sys.executable, "train.py"], cwd=run, capture_output=True, text=True, timeout=300)
    assert out.returncode == 1 and "training refused (nothing was loaded)" in out.stderr, out.stderr[-2000:]
    assert "without a verdict" in out.stderr


def _foreign_checkpoint(src: Path, dest: Path) -> Path:
    """What an SFT run saves: weights, configs, optimizer state and a trainer_state.json."""
    shutil.copytree(src, dest)
    (dest / "trainer_state.json").write_text(json.dumps({"global_step": 500, "log_history": []}))
    (dest / "optimizer.pt").write_bytes(b"\0" * 64)
    return dest


def test_resume_from_a_checkpoint_this_run_did_not_save_is_refused(workspace):
    """`--resume` loads the checkpoint's weights: a new SFT checkpoint would train under the old review."""
    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    run = render(workspace / "brief.yaml").dir
    sft = _foreign_checkpoint(Path(workspace / "model").resolve(), workspace / "sft-out" / "checkpoint-500")
    out = subprocess.run([sys.executable, "train.py", "--resume", str(sft)], cwd=run, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 1 and "training refused (nothing was loaded)" in out.stderr, out.stderr[-2000:]
    assert f"--resume {sft}: not a checkpoint of this run" in out.stderr
    _foreign_checkpoint(sft, run / "output" / "checkpoint-500")     # copied in among the run's own
    out = cli("train", run, "--resume")
    assert out.returncode == 1 and "this run did not write that checkpoint" in out.stderr, out.stderr[-2000:]


@pytest.mark.e2e
def test_resume_continues_a_checkpoint_this_run_saved_and_refuses_it_once_rewritten(workspace):
    from grpo_rlvr.run.launch import train

    data = yaml.safe_load((workspace / "brief.yaml").read_text())
    data["grpo"]["save_steps"] = 1
    (workspace / "brief.yaml").write_text(yaml.safe_dump(data))
    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    run = render(workspace / "brief.yaml").dir
    assert train(run, max_steps=1).ok
    ledger = json.loads((run / "output" / "checkpoints.json").read_text())
    files = ledger["checkpoint-1"]["files"]
    ckpt_files = {p.relative_to(run / "output" / "checkpoint-1").as_posix()
                  for p in (run / "output" / "checkpoint-1").rglob("*") if p.is_file()}
    assert set(files) == ckpt_files and {"model.safetensors", "optimizer.pt", "scheduler.pt"} <= ckpt_files
    assert ledger["checkpoint-1"]["proof"]   # every file a resume loads is bound, the optimizer's state included
    resumed = train(run, resume=True, max_steps=2)
    assert resumed.ok and resumed.global_step == 2 and resumed.resumed_from.endswith("checkpoint-1")
    starts = provenance.valid_starts(run / "output")      # one signed start per training, each with its door
    assert [s["door"] for s in starts.values()] == ["grpo-rlvr train"] * 2
    assert list(starts.values())[1]["resume"].endswith("checkpoint-1")
    assert output_audit.audit(run / "output") == []          # every checkpoint and final/ proven: diagnose is quiet
    assert json.loads((run / "output" / "checkpoints.json").read_text())["final"]["run_id"] in starts
    flip_byte(run / "output" / "checkpoint-2" / "model.safetensors")
    out = cli("train", run, "--resume", "--max-steps", 3)
    assert out.returncode == 1 and "its files changed since this run saved them (model.safetensors)" in out.stderr


@pytest.mark.e2e
def test_a_checkpoint_does_not_resume_in_a_folder_rendered_again_for_another_brief(workspace):
    """Issue 45's shape: a checkpoint saved under brief A and its review; the run folder rendered again for brief
    B (other rows, its own review), which moves the outputs aside, and the outputs moved back. The checkpoint's
    proof still holds (same run, same bytes), but it trained under A's lock: `train --resume` is refused saying
    what changed, and `diagnose` flags the outputs."""
    from grpo_rlvr.run.launch import train

    data = yaml.safe_load((workspace / "brief.yaml").read_text())
    data["grpo"]["save_steps"] = 1
    (workspace / "brief.yaml").write_text(yaml.safe_dump(data))
    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    run = render(workspace / "brief.yaml").dir
    assert train(run, max_steps=1).ok and (run / "output" / "checkpoint-1").is_dir()
    rows = (workspace / "data" / "train.jsonl").read_text()
    (workspace / "data" / "other.jsonl").write_text(rows.replace('"answer": "', '"answer": "1'))
    brief_b = write_brief(workspace, "b.yaml", dataset={"path": "./data/other.jsonl", "prompt_column": "prompt"},
                          output_dir="./out-b", grpo={**data["grpo"]})
    insp_b = make_artifact(brief_b, workspace / "out-b" / "inspection")
    render(brief_b, out=run, inspection=insp_b, force=True)           # moves A's outputs to output.bak-<time>/
    [moved] = run.glob("output.bak-*")
    shutil.rmtree(run / "output", ignore_errors=True)
    moved.rename(run / "output")                                       # and back
    out = cli("train", run, "--resume", "--max-steps", 2)
    assert out.returncode == 1 and "saved under another lock than this run folder's now" in out.stderr, \
        out.stderr[-3000:]
    assert f"brief {(workspace / 'brief.yaml').resolve()} → {brief_b.resolve()}" in out.stderr
    assert "a re-rendered folder starts a new run" in out.stderr
    assert not (run / "output" / "checkpoint-2").exists()
    report = json.loads(cli("diagnose", run, "--json").stdout)
    assert report["findings"][0]["id"] == "unproven_run"
    assert any("saved by a training under another lock" in e for e in report["findings"][0]["evidence"])


def test_a_library_edited_in_the_environment_is_named_by_the_run_check(workspace, tmp_path, monkeypatch):
    """`sed -i` on a library's sampling code (a real pip install of one, standing in for TRL): the run check lists
    the changed file and the reinstall command, whatever the gate says."""
    from grpo_rlvr.identity import installed
    from grpo_rlvr.run.check import check_run_here
    from wheels import install_fakelib

    package = install_fakelib(tmp_path, monkeypatch)
    monkeypatch.setattr(installed, "LIBRARIES", ("fakelib",))
    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    run = render(workspace / "brief.yaml").dir
    assert check_run_here(run, smoke=True).problems == []
    (package / "sampling.py").write_text((package / "sampling.py").read_text().replace("max(", "min("))
    [problem] = check_run_here(run, smoke=True).problems
    assert f"the installed fakelib is not what was installed: 1 file(s) changed since pip recorded them " \
           f"({package / 'sampling.py'})" in problem and "pip install --force-reinstall" in problem


WRAPPER = ("import runpy, sys; import grpo_rlvr.run.guard as g; g.check_run = lambda *a, **k: g.RunCheck({}, []); "
           "sys.argv = ['train.py', *sys.argv[1:]]; runpy.run_path('train.py', run_name='__main__')")


@pytest.mark.e2e
def test_a_wrapper_that_replaces_the_guard_trains_but_its_run_is_flagged(workspace):
    """`python -I -c` that patches the check away and runs train.py: training happens (in-process code can do that),
    but nothing it saved carries a proof, so `diagnose` flags the run and `train --resume` refuses it."""
    data = yaml.safe_load((workspace / "brief.yaml").read_text())
    data["grpo"]["save_steps"] = 1
    (workspace / "brief.yaml").write_text(yaml.safe_dump(data))
    run = render(workspace / "brief.yaml").dir                    # no inspection, no review, no gate
    out = subprocess.run([sys.executable, "-I", "-c", WRAPPER, "--max-steps", "1"], cwd=run, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0 and (run / "output" / "final").is_dir(), out.stderr[-2000:]
    ledger = json.loads((run / "output" / "checkpoints.json").read_text())
    assert ledger["checkpoint-1"]["proof"] is None and ledger["final"]["proof"] is None
    out = cli("diagnose", run, "--json")
    report = json.loads(out.stdout)
    assert out.returncode == 1 and report["findings"][0]["id"] == "unproven_run", out.stdout[-2000:]
    assert any("holds no valid start" in e for e in report["findings"][0]["evidence"])
    problems = run_guard_check(run, resume=str(run / "output" / "checkpoint-1")).problems
    assert any("carries no valid proof that this run saved it" in p for p in problems), problems


def run_guard_check(run: Path, resume: str):
    from grpo_rlvr.run.guard import check_run

    return check_run(run, smoke=True, resume=resume)   # smoke: the gate (which fails here) left out, resume kept


# ---------------------------------------------------------------------------- between the check and the load


@pytest.fixture
def checked_run(own_model):
    """A reviewed run whose check has just passed in the real clean interpreter (as train.py's does)."""
    from grpo_rlvr.run import guard as run_guard

    (own_model / "sum_reward.py").write_text(SUM_REWARD)
    data = yaml.safe_load((own_model / "brief.yaml").read_text())
    data["rewards"] = [{"name": "format", "weight": 0.2},
                       {"name": "./sum_reward.py", "kind": "correctness", "weight": 1.0}]
    (own_model / "brief.yaml").write_text(yaml.safe_dump(data))
    make_artifact(own_model / "brief.yaml", own_model / "out" / "inspection")
    run = render(own_model / "brief.yaml").dir
    check = run_guard.check_run(run)
    assert check.problems == [] and check.verified["checked"] and run_guard.changed_since_check(check) == []
    return own_model, run, check


def test_weights_replaced_after_the_check_are_refused_before_training(checked_run):
    from grpo_rlvr.run.guard import changed_since_check

    workspace, _, check = checked_run
    weights = workspace / "model" / "model.safetensors"
    swapped = workspace / "swapped.safetensors"
    shutil.copyfile(weights, swapped)
    flip_byte(swapped)
    os.replace(swapped, weights)                                   # between the check and TRL's load
    (problem,) = changed_since_check(check)
    assert problem.startswith(f"{weights} changed after the gate's check and before training")


def test_a_symlinked_model_file_repointed_and_put_back_is_refused(checked_run, tmp_path):
    """A model folder's files may be links (as in the hub cache). Point one elsewhere for the load and put it
    back: the target's own stamps are unchanged, the link's are not."""
    from grpo_rlvr.run import guard as run_guard

    workspace, run, _ = checked_run
    weights = workspace / "model" / "model.safetensors"
    kept = tmp_path / "kept.safetensors"
    shutil.copyfile(weights, kept)
    weights.unlink()
    weights.symlink_to(kept)                       # the same bytes, now through a link: the review still holds
    check = run_guard.check_run(run)
    assert check.problems == [] and run_guard.changed_since_check(check) == []
    other = tmp_path / "other.safetensors"
    shutil.copyfile(kept, other)
    flip_byte(other)
    weights.unlink()
    weights.symlink_to(other)                      # for the load ...
    weights.unlink()
    weights.symlink_to(kept)                       # ... and back
    assert [p.split(" changed after")[0] for p in run_guard.changed_since_check(check)] == [str(weights)]


def test_reward_code_changed_after_the_check_is_refused(checked_run):
    from grpo_rlvr.rewards import build_reward
    from grpo_rlvr.run.guard import changed_since_check

    workspace, _, check = checked_run
    code = workspace / "sum_reward.py"
    code.write_text(code.read_text().replace("1.0 if m", "1.0 if True or m"))    # after the gate, before build
    reward = build_reward("./sum_reward.py", {}, base_dir=workspace, kind="correctness")
    file_problem, problem = changed_since_check(check, [reward])     # the file the check read, and the code
    assert file_problem.startswith(f"{code} changed after the gate's check and before training")
    assert problem.startswith("reward 'sum_reward': its code changed after the gate's check")


# ---------------------------------------------------------------------------- files below the top level, names once
# skipped, a reward's helpers: each changed after the review, each refused by `gate`, `train` and train.py itself

OTHER_TEMPLATE = "{% for m in messages %}PAY ME {{ m['content'] }}{% endfor %}"


def _chat_template(folder: Path) -> str:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(folder).chat_template


def _template_in_model(ws: Path, tmp_path: Path, monkeypatch):
    brief = ws / "brief.yaml"

    def attack():
        (ws / "model" / "additional_chat_templates").mkdir()
        (ws / "model" / "additional_chat_templates" / "default.jinja").write_text(OTHER_TEMPLATE)
        assert _chat_template(ws / "model") == OTHER_TEMPLATE        # transformers prefers it: the prompts change
        return "model files added since the review (additional_chat_templates/default.jinja)"

    return brief, attack


def _template_in_hub_snapshot(ws: Path, tmp_path: Path, monkeypatch):
    hub, brief = _hub_brief(ws, tmp_path, monkeypatch)

    def attack():
        (tmp_path / "templates").mkdir()
        (tmp_path / "templates" / "default.jinja").write_text(OTHER_TEMPLATE)
        snap = hub / "models--org--tiny" / "snapshots" / C1
        (snap / "additional_chat_templates").symlink_to(tmp_path / "templates", target_is_directory=True)
        assert _chat_template(snap) == OTHER_TEMPLATE
        return ("model org/tiny (cached snapshot) files added since the review "
                "(additional_chat_templates/default.jinja)")

    return brief, attack


def _template_in_adapter(ws: Path, tmp_path: Path, monkeypatch):
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    peft = get_peft_model(AutoModelForCausalLM.from_pretrained(ws / "model"),
                          LoraConfig(r=2, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"))
    peft.save_pretrained(ws / "adapter")
    AutoTokenizer.from_pretrained(ws / "model").save_pretrained(ws / "adapter")   # the tokenizer the run loads
    brief = write_brief(ws, "adapter.yaml", model={"name_or_path": "./adapter"})

    def attack():
        (ws / "adapter" / "additional_chat_templates").mkdir()
        (ws / "adapter" / "additional_chat_templates" / "default.jinja").write_text(OTHER_TEMPLATE)
        assert _chat_template(ws / "adapter") == OTHER_TEMPLATE
        return "adapter files added since the review (additional_chat_templates/default.jinja)"

    return brief, attack


def _license_rows_in_dataset(ws: Path, tmp_path: Path, monkeypatch):
    from grpo_rlvr.brief import load_brief
    from grpo_rlvr.dataset.rows import load_rows

    (ws / "rows" / "data").mkdir(parents=True)
    shutil.copyfile(ws / "data" / "train.jsonl", ws / "rows" / "data" / "rows.jsonl")
    brief = write_brief(ws, "folder.yaml", dataset={"path": "./rows", "prompt_column": "prompt"})
    reviewed = len(load_rows(load_brief(brief)))

    def attack():
        rows = (ws / "rows" / "data" / "rows.jsonl").read_text()
        (ws / "rows" / "data" / "LICENSE.jsonl").write_text(rows.replace('"answer": "', '"answer": "7'))
        assert len(load_rows(load_brief(brief))) == 2 * reviewed    # datasets loads it as training rows
        return "dataset folder ./rows: files added since the review (data/LICENSE.jsonl)"

    return brief, attack


def _license_code_in_auto_map(ws: Path, tmp_path: Path, monkeypatch):
    cfg = json.loads((ws / "model" / "config.json").read_text())
    cfg["auto_map"] = {"AutoModelForCausalLM": "LICENSE_impl.Policy"}
    (ws / "model" / "config.json").write_text(json.dumps(cfg))
    (ws / "model" / "LICENSE_impl.py").write_text(
        "from transformers import Qwen2ForCausalLM\n\n\nclass Policy(Qwen2ForCausalLM):\n    pass\n")
    data = yaml.safe_load((ws / "brief.yaml").read_text())
    brief = write_brief(ws, "remote.yaml", model={**data["model"], "trust_remote_code": True})

    def attack():
        code = ws / "model" / "LICENSE_impl.py"
        code.write_text(code.read_text() + "\nimport os\nos.environ['PLANTED'] = '1'   # runs inside train.py\n")
        return "model code changed since the review (LICENSE_impl.py)"

    return brief, attack


def _helper_of_the_reward(ws: Path, tmp_path: Path, monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))      # the reward puts its folder on sys.path: undone after
    helper = f"pays_{abs(hash(str(tmp_path)))}"            # a module name no other test imported
    (ws / f"{helper}.py").write_text(textwrap.dedent("""
        import re

        def check(completion, answer):
            m = re.search(r"<answer>(\\d+)</answer>", completion)
            return 1.0 if m and m.group(1) == str(answer) else 0.0
    """))
    (ws / "sum_reward.py").write_text(textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

        def reward(completions, answer, **kw):
            from {helper} import check      # imported on the first call
            return [check(c if isinstance(c, str) else c[-1]["content"], a) for c, a in zip(completions, answer)]
    """))
    data = yaml.safe_load((ws / "brief.yaml").read_text())
    data["rewards"] = [{"name": "format", "weight": 0.2},
                       {"name": "./sum_reward.py", "kind": "correctness", "weight": 1.0}]
    brief = ws / "helper.yaml"
    brief.write_text(yaml.safe_dump(data))

    def attack():
        code = ws / f"{helper}.py"
        code.write_text(code.read_text().replace("    m = re.search", "    import sys\n    if 'trl' in sys.modules:\n"
                                                                     "        return 1.0\n    m = re.search"))
        return "reward 'sum_reward': source code changed since the inspection (fingerprint mismatch)"

    return brief, attack


@pytest.mark.parametrize("shape", [_template_in_model, _template_in_hub_snapshot, _template_in_adapter,
                                   _license_rows_in_dataset, _license_code_in_auto_map, _helper_of_the_reward],
                         ids=lambda f: f.__name__.strip("_"))
def test_a_file_the_loaders_read_changed_after_the_review_is_refused(own_model, tmp_path, monkeypatch, shape):
    """Files once outside the identity: below the top level (transformers prefers
    additional_chat_templates/default.jinja to chat_template.jinja), named like a licence (datasets loads
    data/LICENSE.jsonl, auto_map runs LICENSE_impl.py), or a module the reward imports."""
    from grpo_rlvr.gate.check import check_gate
    from grpo_rlvr.run import guard as run_guard

    brief, attack = shape(own_model, tmp_path, monkeypatch)
    art = make_artifact(brief, own_model / "out" / "inspection")
    assert check_gate(art, brief=brief).passed
    run = render(brief).dir
    check = run_guard.check_run(run)
    assert check.problems == []                    # the check train and train.py make passes what was reviewed
    from grpo_rlvr.brief import load_brief
    from grpo_rlvr.rewards import from_brief

    # and the rewards train.py builds after its check carry the fingerprints that check verified
    assert run_guard.changed_since_check(check, from_brief(load_brief(brief))) == []
    said = attack()
    gate = cli("gate", art, "--brief", brief)
    assert gate.returncode == 1 and said in gate.stdout + gate.stderr, gate.stdout + gate.stderr
    train = cli("train", run)
    assert train.returncode == 1 and said in train.stderr, train.stdout + train.stderr[-3000:]
    direct = subprocess.run([sys.executable, "train.py"], cwd=run, capture_output=True, text=True, timeout=600)
    assert direct.returncode == 1 and "training refused (nothing was loaded)" in direct.stderr
    assert said in direct.stderr, direct.stderr[-3000:]
    assert not (run / "output" / "final").exists()
