"""An SFT output as the model: a PEFT LoRA adapter folder (adapter_config.json + adapter_model.safetensors) built
with peft on the local tiny model. validate, preflight and inspect load it on its base; `grpo-rlvr merge` writes
one model folder; a folder that is neither a model nor an adapter exits 2 naming what is missing."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from briefs import example_brief_text
from rendered import load_policy_of, setup_of

CLI = [sys.executable, "-m", "grpo_rlvr"]


def run(*args, cwd=None):
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, cwd=cwd)


@pytest.fixture(scope="session")
def sft_adapter(tiny_model_dir, tmp_path_factory):
    """What SFT with peft saves: a LoRA adapter (non-zero B, so it changes the model) whose adapter_config.json
    names the base folder; the tokenizer saved beside it, as SFTTrainer does."""
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    d = tmp_path_factory.mktemp("sft") / "adapter"
    base = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    peft_model = get_peft_model(base, LoraConfig(r=4, lora_alpha=8, target_modules="all-linear",
                                                 init_lora_weights=False))
    peft_model.save_pretrained(d)
    AutoTokenizer.from_pretrained(tiny_model_dir).save_pretrained(d)
    assert not (d / "config.json").exists()
    return d


def adapter_brief(workspace, adapter, **sections):
    data = yaml.safe_load(example_brief_text())
    data["model"] = {"name_or_path": str(adapter)}
    data.update(sections)
    p = workspace / "adapter.yaml"
    p.write_text(yaml.safe_dump(data))
    return p


def test_validate_reads_the_base_from_adapter_config(workspace, sft_adapter, tiny_model_dir):
    r = run("validate", adapter_brief(workspace, sft_adapter), "--json")
    assert r.returncode == 0, r.stderr
    model = json.loads(r.stdout)["model"]
    assert model["adapter"]["base"] == str(tiny_model_dir.resolve()) and model["adapter"]["peft_type"] == "LORA"
    assert model["params_from"].startswith("config.json") and str(tiny_model_dir.resolve()) in model["params_from"]
    text = run("validate", adapter_brief(workspace, sft_adapter)).stdout
    assert f"a PEFT LORA adapter on {tiny_model_dir.resolve()}" in text


def test_validate_says_vllm_needs_merged_weights_and_lora_continues_the_adapter(workspace, sft_adapter):
    from grpo_rlvr.brief import load_brief
    from grpo_rlvr.validate.report import adapter_warnings

    p = adapter_brief(workspace, sft_adapter, method="lora", lora={"r": 8},
                      hardware={"accelerator": "gpu", "num_gpus": 1},
                      grpo={"use_vllm": True, "max_completion_length": 24})
    warnings = adapter_warnings(load_brief(p))
    assert any("vLLM loads one model folder" in w and f"grpo-rlvr merge {sft_adapter}" in w for w in warnings)
    assert any(w.startswith("lora: the model is a LoRA adapter, which training continues") for w in warnings)
    # a lora: section counts as written even when it sets nothing; without one there is nothing to warn about
    for lora, warned in (({}, True), (None, False)):
        sections = {"lora": lora} if lora is not None else {}
        p = adapter_brief(workspace, sft_adapter, method="lora", **sections)
        said = [w for w in adapter_warnings(load_brief(p)) if w.startswith("lora: the model is a LoRA adapter")]
        assert bool(said) is warned, (lora, said)


def test_validate_reports_the_adapters_own_lora_settings(workspace, sft_adapter):
    """LoRA training continues the adapter with its own r and alpha (r 4, alpha 8 here), so validate reports
    those, from the adapter, not the method's defaults (r 16, alpha 32)."""
    r = run("validate", adapter_brief(workspace, sft_adapter, method="lora"), "--json")
    assert r.returncode == 0, r.stderr
    lora = json.loads(r.stdout)["lora"]
    assert (lora["r"], lora["alpha"]) == ({"value": 4, "from": "adapter"}, {"value": 8, "from": "adapter"}), lora
    assert lora["dropout"]["from"] == "adapter" and "adapter" in json.loads(r.stdout)["sources"]
    text = run("validate", adapter_brief(workspace, sft_adapter, method="lora")).stdout
    assert "r 4 ← adapter, alpha 8 ← adapter" in text and "r 16" not in text, text


def test_an_adapter_loads_on_its_base_and_changes_the_model(workspace, sft_adapter, tiny_model_dir):
    """The rollout road samples the policy training trains: for LoRA, the adapter continued on its base, whose
    logits are the PeftModel's, not the base's."""
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    from grpo_rlvr.brief import load_brief
    from grpo_rlvr.dataset.rows import load_rows
    from grpo_rlvr.rollout import road

    brief = load_brief(adapter_brief(workspace, sft_adapter, method="lora"))
    road.roll_out(brief, load_rows(brief)[:1], 8, seed=0)
    model, tok = road._kept[1].model, road._kept[1].processing_class
    ids = torch.tensor([tok("3+4=")["input_ids"]])
    base = AutoModelForCausalLM.from_pretrained(tiny_model_dir).eval()
    with torch.no_grad():
        ours, plain = model.eval()(ids).logits, base(ids).logits
        peft = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(tiny_model_dir), sft_adapter).eval()(
            ids).logits
    assert isinstance(model, PeftModel)
    assert not torch.allclose(ours, plain, atol=1e-4)
    assert torch.allclose(ours, peft, atol=1e-4)


def test_for_full_training_the_merged_adapter_leaves_every_weight_trainable(sft_adapter, tiny_model_dir, tmp_path):
    """method: full: train.py's policy is base + adapter merged into one plain model whose every weight trains
    (PeftModel freezes the base; a frozen merged model gives a loss without a gradient); method: lora keeps a
    PeftModel whose only trainable weights are the adapter's."""
    from peft import PeftModel
    from trl import GRPOConfig

    from grpo_rlvr.trainer.model_loading import load_adapter_for_training

    config = GRPOConfig(output_dir=str(tmp_path), report_to=[], use_cpu=True, bf16=False)
    full = load_adapter_for_training(str(tiny_model_dir), {"path": str(sft_adapter), "continue": False}, config)
    assert not isinstance(full, PeftModel) and not any("lora" in n for n, _ in full.named_parameters())
    assert all(p.requires_grad for p in full.parameters())
    lora = load_adapter_for_training(str(tiny_model_dir), {"path": str(sft_adapter), "continue": True}, config)
    trainable = {n for n, p in lora.named_parameters() if p.requires_grad}
    assert isinstance(lora, PeftModel) and trainable and all("lora_" in n for n in trainable)


def test_an_adapter_on_a_hub_base_trains_on_the_reviewed_base_commit(workspace, sft_adapter, tmp_path, monkeypatch):
    """The adapter's base is a hub id: render pins the base commit the review read, and train.py merges the
    adapter into that snapshot even after the cache's main moves to another commit."""
    import shutil

    from trl import GRPOConfig

    from artifacts import make_artifact
    from grpo_rlvr.run.render import render
    from hub_cache_layout import add_snapshot

    c1, c2 = "c1" * 20, "c2" * 20
    hub = tmp_path / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    model = (workspace / "model").resolve()
    for commit in (c1, c2):
        snap = shutil.copytree(model, tmp_path / commit)
        cfg = json.loads((snap / "config.json").read_text())
        (snap / "config.json").write_text(json.dumps({**cfg, "snapshot_marker": commit}))
        if commit == c1:
            add_snapshot(hub, "org/tiny", snap, c1)
    adapter = shutil.copytree(sft_adapter, tmp_path / "adapter")
    cfg = json.loads((adapter / "adapter_config.json").read_text())
    (adapter / "adapter_config.json").write_text(json.dumps({**cfg, "base_model_name_or_path": "org/tiny"}))

    p = adapter_brief(workspace, adapter)
    make_artifact(p, workspace / "out" / "inspection")
    run_dir = render(p).dir
    setup = setup_of(run_dir)
    assert setup["model"] == "org/tiny" and setup["model_revision"] == c1
    add_snapshot(hub, "org/tiny", tmp_path / c2, c2)   # main moves after the gate
    policy = load_policy_of(run_dir, GRPOConfig(output_dir=str(tmp_path / "o"), report_to=[], use_cpu=True,
                                                bf16=False))
    assert policy.config.snapshot_marker == c1


def test_preflight_and_inspect_sample_the_adapter(workspace, sft_adapter):
    p = adapter_brief(workspace, sft_adapter)
    pre = run("preflight", p, "--prompts", "4", "--k", "4", "--json")
    assert pre.returncode in (0, 1) and "Traceback" not in pre.stderr, pre.stderr[-2000:]
    assert json.loads(pre.stdout)["prompts"] == 4
    ins = run("inspect", p, "--samples", "50", "--out", workspace / "insp", "--json")
    assert ins.returncode == 0, ins.stderr[-2000:]
    manifest = json.loads((workspace / "insp" / "manifest.json").read_text())
    assert manifest["sample_count"] == 50 and json.loads(ins.stdout)["exit_code"] == 0


def test_a_folder_without_config_exits_2_naming_what_is_missing(workspace, tmp_path):
    empty = tmp_path / "sft-out"
    empty.mkdir()
    (empty / "model.safetensors").write_bytes(b"")
    for cmd in ("validate", "preflight", "inspect"):
        r = run(cmd, adapter_brief(workspace, empty))
        assert r.returncode == 2 and "Traceback" not in r.stderr, (cmd, r.stderr[-2000:])
        assert "has no config.json" in r.stderr and "no adapter_config.json" in r.stderr, r.stderr
        assert "holds model.safetensors" in r.stderr


def test_an_adapter_whose_base_is_missing_exits_2(workspace, tmp_path, sft_adapter):
    import shutil

    moved = tmp_path / "adapter"
    shutil.copytree(sft_adapter, moved)
    cfg = json.loads((moved / "adapter_config.json").read_text())
    (moved / "adapter_config.json").write_text(json.dumps({**cfg, "base_model_name_or_path": str(tmp_path / "gone")}))
    r = run("validate", adapter_brief(workspace, moved))
    assert r.returncode == 2 and "base_model_name_or_path" in r.stderr and "does not exist here" in r.stderr, r.stderr
    (moved / "adapter_config.json").write_text(json.dumps({**cfg, "base_model_name_or_path": None}))
    r = run("validate", adapter_brief(workspace, moved))
    assert r.returncode == 2 and "no base_model_name_or_path" in r.stderr, r.stderr


def test_merge_writes_one_model_folder_atomically_and_never_over_one(sft_adapter, tmp_path, tiny_model_dir):
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    out = tmp_path / "merged"
    r = run("merge", sft_adapter, "--out", out, "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["exit_code"] == 0, r.stderr[-2000:]
    assert (out / "config.json").is_file() and (out / "model.safetensors").is_file()
    assert not (out / "adapter_config.json").exists() and (out / "tokenizer.json").is_file()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary folder left behind
    ids = torch.tensor([[4, 5, 6, 7]])
    with torch.no_grad():
        merged = AutoModelForCausalLM.from_pretrained(out).eval()(ids).logits
        peft = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(tiny_model_dir), sft_adapter).eval()(
            ids).logits
    assert torch.allclose(merged, peft, atol=1e-4)

    again = run("merge", sft_adapter, "--out", out)
    assert again.returncode == 2 and "exists" in again.stderr and "--force" in again.stderr
    assert run("merge", sft_adapter, "--out", out, "--force").returncode == 0
    not_adapter = run("merge", tiny_model_dir, "--out", tmp_path / "m2")
    assert not_adapter.returncode == 2 and "not a PEFT adapter" in not_adapter.stderr
    assert not (tmp_path / "m2").exists()


@pytest.mark.e2e
def test_lora_training_continues_the_sft_adapter(workspace, tmp_path_factory, warm60_model_dir):
    """Real GRPOTrainer + peft on CPU, 2 steps. The SFT output is a LoRA adapter trained (a few SFT steps) on the
    demo's warmed-up model, so samples earn some reward. The rendered train.py loads the base, applies the adapter
    as trainable, and saves an adapter with the SFT adapter's own rank whose weights moved from where SFT left
    them."""
    from peft import LoraConfig, get_peft_model
    from safetensors.numpy import load_file
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from artifacts import make_artifact
    from grpo_rlvr.demo import arithmetic_task as task
    from grpo_rlvr.demo.warmup import sft_warmup
    from grpo_rlvr.run.render import render
    from tiny_runs import answers

    rows = task.make_rows(600, seed=1)
    warm = warm60_model_dir
    sft = get_peft_model(AutoModelForCausalLM.from_pretrained(warm), LoraConfig(r=4, lora_alpha=8,
                                                                                target_modules="all-linear"))
    sft_warmup(sft, AutoTokenizer.from_pretrained(warm), rows, answers(rows), steps=5, lr=1e-3, batch_size=16, seed=0)
    adapter = tmp_path_factory.mktemp("sft-lora") / "adapter"
    sft.save_pretrained(adapter)

    p = adapter_brief(workspace, adapter, method="lora",
                      grpo={"learning_rate": 1e-3, "per_device_train_batch_size": 16, "max_completion_length": 24,
                            "save_steps": 50, "logging_steps": 1})
    make_artifact(p, workspace / "out" / "inspection")
    run_dir = render(p).dir
    out = subprocess.run([*CLI, "train", str(run_dir), "--max-steps", "2"], capture_output=True, text=True,
                         timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    final = run_dir / "output" / "final"
    assert json.loads((final / "adapter_config.json").read_text())["r"] == 4     # the SFT adapter's rank
    before = load_file(str(adapter / "adapter_model.safetensors"))
    after = load_file(str(final / "adapter_model.safetensors"))
    assert set(before) == set(after)
    assert any(abs(before[k]).max() > 0 for k in before if "lora_B" in k)        # SFT moved B off zero
    assert any(abs(after[k] - before[k]).max() > 0 for k in before)           # GRPO trained it further


@pytest.mark.e2e
def test_full_training_merges_the_adapter_and_trains_every_weight(workspace, sft_adapter):
    """method: full with an adapter folder: train.py merges it into the base, and the run saves a full model."""
    from safetensors.numpy import load_file

    from artifacts import make_artifact
    from grpo_rlvr.run.render import render

    p = adapter_brief(workspace, sft_adapter)
    make_artifact(p, workspace / "out" / "inspection")
    run_dir = render(p).dir
    assert setup_of(run_dir)["adapter"]["path"] and "'continue': False" in (
        run_dir / "train.py").read_text()
    out = subprocess.run([*CLI, "train", str(run_dir), "--max-steps", "1"], capture_output=True, text=True,
                         timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    final = run_dir / "output" / "final"
    assert (final / "model.safetensors").is_file() and not (final / "adapter_config.json").exists()
    assert not any("lora" in k for k in load_file(str(final / "model.safetensors")))
