"""Full, LoRA and QLoRA: per-method defaults with their sources, LoRA trained for real through the launcher, and
QLoRA rendered as a 4-bit NF4 load that stops with a clear error where bitsandbytes cannot run (this machine has
no CUDA GPU, so the 4-bit load itself is not run here)."""

from __future__ import annotations

import json
import subprocess
import time

import pytest
import yaml

from artifacts import make_artifact
from briefs import brief_for, example_brief_text
from grpo_rlvr.brief import load_brief
from grpo_rlvr.brief.methods import LORA_DEFAULTS, METHOD_GRPO_DEFAULTS, defaults_table
from grpo_rlvr.errors import MachineError
from grpo_rlvr.run.render import render
from grpo_rlvr.validate.report import validate_report
from outcome_seeds import training_outcome
from paths import CLI
from rendered import setup_of


def _brief(workspace, name: str, **delta):
    return brief_for(workspace, name, delta)


def _without_lr(workspace, name, **delta):
    data = yaml.safe_load(example_brief_text())
    data["grpo"].pop("learning_rate")
    data.update(delta)
    p = workspace / f"{name}.yaml"
    p.write_text(yaml.safe_dump(data))
    return p


def test_learning_rate_default_follows_the_method_with_its_source(workspace):
    full = load_brief(_without_lr(workspace, "full"))
    lora = load_brief(_without_lr(workspace, "lora", method="lora"))
    assert full.grpo["learning_rate"] == 5e-7 and full.origin["learning_rate"] == "recipe"
    assert lora.grpo["learning_rate"] == 1e-5 == METHOD_GRPO_DEFAULTS["lora"]["learning_rate"]
    assert lora.origin["learning_rate"] == "method:lora"
    assert dict(lora.lora) == LORA_DEFAULTS and set(lora.lora_origin.values()) == {"method:lora"}
    report = validate_report(workspace / "lora.yaml")
    assert report["grpo_config"]["learning_rate"] == {"value": 1e-5, "from": "method:lora", "bound": False}
    assert "lora_without_regret" in report["sources"]["method:lora"]
    out = subprocess.run([*CLI, "validate", str(workspace / "lora.yaml")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "learning_rate" in out.stdout and "← method:lora" in out.stdout and "[method:lora] TRL docs" in out.stdout


def test_full_fine_tuning_rate_with_lora_is_warned(workspace):
    b = load_brief(_brief(workspace, "slow", method="lora", grpo={"learning_rate": 5e-7}, lora={"r": 4}))
    assert b.grpo["learning_rate"] == 5e-7 and b.origin["learning_rate"] == "brief"
    assert b.lora["r"] == 4 and b.lora_origin["r"] == "brief" and b.lora_origin["alpha"] == "method:lora"
    assert any("grpo.learning_rate: 5e-07 with method 'lora' is a full fine-tuning rate" in w for w in b.warnings)
    ok = load_brief(_brief(workspace, "ok", method="lora", grpo={"learning_rate": 5e-5}))
    assert not any("full fine-tuning rate" in w for w in ok.warnings)


def test_defaults_table_names_every_method():
    rows = {r["setting"]: r for r in defaults_table()}
    assert rows["grpo.learning_rate"]["full"] == 5e-7 and rows["grpo.learning_rate"]["lora"] == 1e-5
    assert rows["lora.r"]["lora"] == 16 and rows["lora.target_modules"]["qlora"] == "all-linear"


def test_qlora_renders_a_4bit_nf4_load(workspace):
    p = _brief(workspace, "q", method="qlora", hardware={"accelerator": "gpu", "num_gpus": 1})
    run = render(p, out=workspace / "qrun").dir
    assert setup_of(run)["quantization"] == {"load_in_4bit": True, "bnb_4bit_quant_type": "nf4",
                                             "bnb_4bit_use_double_quant": True, "bnb_4bit_compute_dtype": "bfloat16"}
    lora = render(_brief(workspace, "l", method="lora"), out=workspace / "lrun").dir
    assert setup_of(lora)["quantization"] is None


def test_qlora_on_this_cpu_machine_is_a_clear_error(workspace):
    """validate exits 2 naming bitsandbytes/CUDA; --remote makes it a warning; the rendered train.py refuses too."""
    p = _brief(workspace, "q", method="qlora", hardware={"accelerator": "gpu", "num_gpus": 1})
    out = subprocess.run([*CLI, "validate", str(p)], capture_output=True, text=True)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "method: 'qlora' cannot run on this machine" in out.stderr and "no CUDA GPU" in out.stderr
    assert "--remote" in out.stderr
    with pytest.raises(MachineError):
        validate_report(p)
    remote = subprocess.run([*CLI, "validate", str(p), "--remote"], capture_output=True, text=True)
    assert remote.returncode == 0, remote.stderr
    assert "Warning: method: 'qlora' cannot run on this machine" in remote.stdout
    # What the rendered train.py calls to load the model (train.py turns the MachineError into exit 2).
    from grpo_rlvr.trainer.model_loading import load_quantized_for_training

    with pytest.raises(MachineError, match="no CUDA GPU is visible"):
        load_quantized_for_training(str(workspace / "model"), {"load_in_4bit": True})


def test_qlora_on_cpu_or_sharded_is_refused(workspace):
    from grpo_rlvr.errors import ConfigError

    with pytest.raises(ConfigError, match="method: 'qlora' loads the base model in 4-bit"):
        load_brief(_brief(workspace, "qc", method="qlora"))
    hw = {"accelerator": "gpu", "num_gpus": 4, "vllm_gpus": 0, "sharding": "zero3"}
    with pytest.raises(ConfigError, match="hardware.sharding: 'zero3' with method 'qlora'"):
        load_brief(_brief(workspace, "qz", method="qlora", hardware=hw, grpo={"vllm_mode": "colocate"}))


@pytest.mark.e2e
@training_outcome
def test_lora_grpo_trains_through_the_launcher_and_saves_an_adapter(workspace, warm60_model_dir, seed):
    """Real GRPOTrainer + peft on CPU: `grpo-rlvr train` on the rendered run, 3 steps, on the demo's model after
    its SFT warmup; the saved adapter is a PEFT adapter whose lora_B weights (zero at init) have moved. That they
    moved is an outcome of training (some group in 3 steps had unequal rewards), hence the seeds. Sweep (issue 23):
    seeds 0-1 with the default kernels and with AVX2 held, 4 of 4."""
    from safetensors.numpy import load_file

    p = _brief(workspace, "brief", method="lora", lora={"r": 4, "alpha": 8},
               model={"name_or_path": str(warm60_model_dir)},
               grpo={"learning_rate": 1e-3, "save_steps": 3, "per_device_train_batch_size": 16, "seed": seed})
    make_artifact(p, workspace / "out" / "inspection")
    run = render(p).dir
    start = time.monotonic()
    out = subprocess.run([*CLI, "train", str(run), "--max-steps", "3"], capture_output=True, text=True, timeout=900)
    elapsed = time.monotonic() - start
    assert out.returncode == 0, out.stderr[-3000:]
    final = run / "output" / "final"
    cfg = json.loads((final / "adapter_config.json").read_text())
    assert cfg["peft_type"] == "LORA" and cfg["r"] == 4 and cfg["lora_alpha"] == 8
    assert not (final / "model.safetensors").exists()          # an adapter, not a full model
    weights = load_file(str(final / "adapter_model.safetensors"))
    b = {k: v for k, v in weights.items() if "lora_B" in k}
    assert b and any(abs(v).max() > 0 for v in b.values())     # lora_B starts at exactly zero
    summary = json.loads((run / "output" / "train_summary.json").read_text())
    assert summary["global_step"] == 3
    moved = max(float(abs(v).max()) for v in b.values())
    print(f"LoRA run: 3 steps in {elapsed:.1f} s (train command, incl. start-up); {len(weights)} adapter tensors, "
          f"max |lora_B| {moved:.2e}; files "
          f"{sorted(x.name for x in final.iterdir())}")
