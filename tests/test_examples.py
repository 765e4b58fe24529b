"""Every brief in examples/ validates offline (no hub, an empty Hugging Face cache) with its memory estimate, and
renders a run directory whose config TRL accepts and whose scripts parse."""

from __future__ import annotations

import py_compile
import subprocess

import pytest
import yaml

from grpo_rlvr.errors import MachineError
from grpo_rlvr.run.render import RUN_FILES, render
from grpo_rlvr.trainer.model_loading import quantization_problems
from grpo_rlvr.validate.report import validate_report
from paths import CLI, REPO

EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))
COVERED = {"gsm8k", "math_boxed", "code_mbpp", "tool_calls", "moe_gspo", "lora_24gb", "qlora_24gb", "server_8gpu",
           "slurm_2nodes", "reasoning_gym"}


@pytest.fixture(autouse=True)
def _empty_hf_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def test_the_examples_cover_the_setups_people_train():
    assert {p.stem for p in EXAMPLES} == COVERED
    for p in EXAMPLES:
        head = p.read_text().splitlines()[:3]
        assert all(line.startswith("#") for line in head), f"{p.name}: starts with a few lines of comment"


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_validates_offline_and_renders(path, tmp_path):
    from trl import GRPOConfig

    qlora = yaml.safe_load(path.read_text()).get("method") == "qlora"
    if qlora and quantization_problems():   # this machine cannot run bitsandbytes: validate says so, exit 2
        with pytest.raises(MachineError, match="cannot run on this machine"):
            validate_report(path)
    report = validate_report(path, remote=qlora)
    mem = report["memory"]
    assert mem is not None and mem["fits"] and mem["size_from"] == "brief (model.params)"
    assert not any("guessed" in w or "unknown" in w for w in report["warnings"])
    run = render(path, out=tmp_path / "run").dir
    names = {p.name for p in run.iterdir()}
    assert set(RUN_FILES) <= names and ("slurm.sh" in names) == (report["hardware"]["num_nodes"] > 1)
    cfg = yaml.safe_load((run / "grpo_config.yaml").read_text())
    GRPOConfig(**{**cfg, "output_dir": str(tmp_path / "o"), "use_cpu": True})  # use_cpu: this machine has no GPU
    py_compile.compile(str(run / "train.py"), doraise=True)
    for script in ("launch.sh", "slurm.sh"):
        if (run / script).exists():
            assert subprocess.run(["bash", "-n", str(run / script)]).returncode == 0
    train = (run / "train.py").read_text()
    assert ("'nf4'" in train) == qlora
    if report["method"] != "full":
        assert report["grpo_config"]["learning_rate"]["from"] == f"method:{report['method']}"
        assert "'peft': {'r': 16" in train
    if path.stem == "moe_gspo":
        v = report["variant"]
        assert (v["name"], v["automatic"], v["diagnosis"], v["set_by"]) == ("gspo", True, None, {})
        assert cfg["importance_sampling_level"] == "sequence"
    if path.stem in ("tool_calls", "reasoning_gym"):  # local data: its columns were checked, so no hub note
        assert not any("hub dataset" in w for w in report["warnings"])
    else:
        assert any("columns were not checked" in w for w in report["warnings"])
    if report["hardware"]["vllm_gpus"]:
        assert cfg["vllm_mode"] == "server"


def test_validate_cli_prints_the_memory_lines_of_an_example():
    out = subprocess.run([*CLI, "validate", str(REPO / "examples" / "lora_24gb.yaml")], capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
    assert "Memory: ~" in out.stdout and "on 24GB" in out.stdout and "from brief (model.params)" in out.stdout
    assert "learning_rate" in out.stdout and "← method:lora" in out.stdout
