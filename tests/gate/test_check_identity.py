"""Rule 4 binds a review to what was reviewed: the model's and data's content and a hub id's resolved commit.

Each test makes a real, reviewed inspection artifact (``tests/artifacts.py``), changes one thing the way a user or
an agent would, and checks the gate's verdict and its words."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from artifacts import make_artifact
from briefs import write_brief
from grpo_rlvr.gate.check import check_gate
from grpo_rlvr.identity import hash_cache
from hub_cache_layout import add_snapshot

C1, C2 = "a" * 40, "b" * 40


def rule4(result) -> tuple[bool, list[str]]:
    r = next(r for r in result.rules if r.id == 4)
    return r.passed, r.problems


def test_weights_rewritten_in_place_with_the_same_size_fail_rule_4(own_model):
    brief = own_model / "brief.yaml"
    art = make_artifact(brief, own_model / "out" / "inspection")
    assert check_gate(art, brief=brief).passed
    weights = own_model / "model" / "model.safetensors"
    st = weights.stat()
    with weights.open("r+b") as fh:   # a new SFT checkpoint: same tensors, same size, other values
        fh.seek(st.st_size // 2)
        byte = fh.read(1)
        fh.seek(st.st_size // 2)
        fh.write(bytes([byte[0] ^ 0xFF]))
    import os

    os.utime(weights, ns=(st.st_atime_ns, st.st_mtime_ns))   # and its old mtime put back
    assert weights.stat().st_size == st.st_size
    passed, problems = rule4(check_gate(art, brief=brief))
    assert not passed
    assert problems == ["model weights changed since the review (model.safetensors): re-inspect and review"]


def test_the_same_content_under_another_path_spelling_passes(own_model, tmp_path):
    brief = own_model / "brief.yaml"
    art = make_artifact(brief, own_model / "out" / "inspection")
    data = yaml.safe_load(brief.read_text())
    elsewhere = tmp_path / "moved"
    shutil.copytree(own_model / "model", elsewhere / "copy-of-model")
    data["model"]["name_or_path"] = str(elsewhere / "copy-of-model")          # absolute, and another folder
    data["dataset"]["path"] = str((own_model / "data" / "train.jsonl").resolve())
    spelled = elsewhere / "brief.yaml"
    spelled.write_text(yaml.safe_dump(data))
    result = check_gate(art, brief=spelled)
    assert result.passed, result.format()


def test_an_adapter_swap_fails_rule_4(workspace, monkeypatch):
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    monkeypatch.setattr(hash_cache, "RACY_NS", 0)
    for seed, name in ((0, "adapter"), (1, "other-adapter")):   # two SFT runs' adapters on the same base
        torch.manual_seed(seed)
        base = AutoModelForCausalLM.from_pretrained(workspace / "model")
        peft = get_peft_model(base, LoraConfig(r=2, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"))
        peft.save_pretrained(workspace / name)
    brief = write_brief(workspace, "adapter.yaml", model={"name_or_path": "./adapter"})
    art = make_artifact(brief, workspace / "out" / "inspection")
    assert rule4(check_gate(art, brief=brief))[0]
    shutil.copyfile(workspace / "other-adapter" / "adapter_model.safetensors",
                    workspace / "adapter" / "adapter_model.safetensors")
    passed, problems = rule4(check_gate(art, brief=brief))
    assert not passed
    assert problems == ["adapter weights changed since the review (adapter_model.safetensors): re-inspect and review"]


def test_a_changed_dataset_folder_fails_rule_4(workspace):
    (workspace / "data" / "extra").mkdir()
    shutil.copyfile(workspace / "data" / "train.jsonl", workspace / "data" / "extra" / "more.jsonl")
    brief = write_brief(workspace, "folder.yaml", dataset={"path": "./data", "prompt_column": "prompt"})
    art = make_artifact(brief, workspace / "out" / "inspection")
    assert rule4(check_gate(art, brief=brief))[0]
    more = workspace / "data" / "extra" / "more.jsonl"
    more.write_text(more.read_text().replace('"answer": "1', '"answer": "9'))   # files replaced in the folder
    passed, problems = rule4(check_gate(art, brief=brief))
    assert not passed
    assert problems == ["dataset folder ./data: files changed since the review (extra/more.jsonl): "
                        "re-inspect and review"]


def test_a_hub_id_pinned_at_inspect_fails_on_another_commit(workspace, monkeypatch, tmp_path):
    hub = tmp_path / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    add_snapshot(hub, "org/tiny", Path(workspace / "model").resolve(), C1)
    brief = write_brief(workspace, "hub.yaml", model={"name_or_path": "org/tiny"})   # no revision
    art = make_artifact(brief, workspace / "out" / "inspection")
    assert check_gate(art, brief=brief).passed
    changed = tmp_path / "upstream"
    shutil.copytree(Path(workspace / "model").resolve(), changed)
    (changed / "generation_config.json").write_text('{"temperature": 0.1}')
    add_snapshot(hub, "org/tiny", changed, C2)    # main moved upstream and was fetched
    passed, problems = rule4(check_gate(art, brief=brief))
    assert not passed
    assert len(problems) == 1 and f"resolves to commit {C2[:12]} now, but the review read commit {C1[:12]}" \
        in problems[0] and f"revision: {C1}" in problems[0]
    pinned = write_brief(workspace, "pinned.yaml", model={"name_or_path": "org/tiny", "revision": C1})
    assert check_gate(art, brief=pinned).passed    # the fix the message names: the reviewed commit, pinned


def test_a_hub_model_missing_from_the_cache_cannot_pass(workspace, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    add_snapshot(tmp_path / "hub", "org/tiny", Path(workspace / "model").resolve(), C1)
    brief = write_brief(workspace, "hub.yaml", model={"name_or_path": "org/tiny"})
    art = make_artifact(brief, workspace / "out" / "inspection")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty"))
    passed, problems = rule4(check_gate(art, brief=brief))
    assert not passed and "is not in this machine's Hugging Face cache" in problems[0] and C1[:12] in problems[0]
