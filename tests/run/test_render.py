"""The run directory: every rendered config instantiates TRL's GRPOConfig; scripts parse; rendering is
deterministic; accelerate configs match the hardware."""

from __future__ import annotations

import py_compile
import subprocess

import pytest
import yaml

from briefs import brief_for
from grpo_rlvr.run.render import RUN_FILES, render

MATRIX = {
    "cpu": {},
    "gpu1-colocate": {"hardware": {"accelerator": "gpu", "num_gpus": 1}},
    "gpu8-server": {"hardware": {"accelerator": "gpu", "num_gpus": 8, "vllm_gpus": 2}},
    "gpu4-zero3": {"hardware": {"accelerator": "gpu", "num_gpus": 4, "vllm_gpus": 0, "sharding": "zero3"},
                   "grpo": {"vllm_mode": "colocate"}},
    "gpu4-fsdp2": {"hardware": {"accelerator": "gpu", "num_gpus": 4, "vllm_gpus": 0, "sharding": "fsdp2"},
                   "grpo": {"vllm_mode": "colocate"}},
    "2nodes-server": {"hardware": {"accelerator": "gpu", "num_gpus": 8, "num_nodes": 2}},
    "3nodes-server": {"hardware": {"accelerator": "gpu", "num_gpus": 8, "num_nodes": 3, "vllm_tensor_parallel": 2,
                                   "sharding": "zero3"}},
    "2nodes-colocate": {"hardware": {"accelerator": "gpu", "num_gpus": 4, "num_nodes": 2}, "grpo": {"vllm_mode": "colocate"}},
    "lora": {"method": "lora", "lora": {"r": 8, "alpha": 16}},
    "no-vllm-gpu": {"hardware": {"accelerator": "gpu", "num_gpus": 1}, "grpo": {"use_vllm": False}},
}


@pytest.mark.parametrize("name", list(MATRIX))
def test_rendered_run_is_valid(workspace, name):
    from trl import GRPOConfig

    brief = brief_for(workspace, name, MATRIX[name])
    res = render(brief, out=workspace / "runs" / name)
    extra = ["slurm.sh"] if "nodes" in name else []
    assert sorted(p.name for p in res.dir.iterdir()) == sorted([*RUN_FILES, *extra])
    cfg = yaml.safe_load((res.dir / "grpo_config.yaml").read_text())
    # TRL itself accepts every key and value. GPU configs set bf16, which transformers refuses on a machine
    # without a bf16 GPU unless use_cpu is set: that is an environment check (this machine has no GPU), so the
    # stand-in use_cpu=True is added here only for GPU briefs.
    extra = {"use_cpu": True} if cfg.get("bf16") else {}
    GRPOConfig(**{**cfg, "output_dir": str(workspace / "o"), **extra})
    assert cfg["loss_type"] == "grpo" and cfg["num_generations"] >= 8
    py_compile.compile(str(res.dir / "train.py"), doraise=True)
    for script in ("launch.sh", "slurm.sh"):
        if (res.dir / script).exists():
            assert_shell_parses(res.dir / script)
    acc = yaml.safe_load((res.dir / "accelerate.yaml").read_text())
    header = (res.dir / "train.py").read_text().splitlines()[1]
    assert "Rendered by grpo-rlvr" in header and "fingerprint" in header
    if name == "gpu8-server":
        launch = (res.dir / "launch.sh").read_text()
        assert 'VLLM_CMD=(env VLLM_SERVER_DEV_MODE=1 python -m vllm.entrypoints.openai.api_server --model' in launch
        assert 'CUDA_VISIBLE_DEVICES=0,1 setsid "${VLLM_CMD[@]}"' in launch
        assert 'TRAIN_CMD=(accelerate launch --config_file accelerate.yaml train.py' in launch
        assert 'CUDA_VISIBLE_DEVICES=2,3,4,5,6,7 setsid "${TRAIN_CMD[@]}"' in launch
        assert "trap teardown EXIT" in launch and acc["num_processes"] == 6
        assert cfg["vllm_mode"] == "server" and cfg["vllm_server_port"] == 8000
    if name == "gpu4-zero3":
        assert acc["distributed_type"] == "DEEPSPEED" and acc["deepspeed_config"]["zero_stage"] == 3
    if name == "gpu4-fsdp2":
        assert acc["distributed_type"] == "FSDP" and acc["fsdp_config"]["fsdp_version"] == 2
    if name == "2nodes-server":   # node 0 generates on all 8 GPUs; node 1 is accelerate's only machine, all 8 train
        assert (acc["num_machines"], acc["num_processes"]) == (1, 8) and "main_process_port" not in acc
        slurm = (res.dir / "slurm.sh").read_text()
        assert "#SBATCH --nodes=2" in slurm and "#SBATCH --gres=gpu:8" in slurm
        assert "VLLM_SERVER_HOST=${HOSTS[0]}" in slurm and "MAIN_PROCESS_IP=${HOSTS[1]}" in slurm
        assert "env NODE_ROLE=generation bash launch.sh &" in slurm and "NODE_ROLE=training MACHINE_RANK=$SLURM_PROCID" in slurm
        assert "--nodes=1 --ntasks=1 --ntasks-per-node=1" in slurm   # the training step: the one training host
    if name == "3nodes-server":   # two training machines, 16 processes, ranks from each node's MACHINE_RANK
        assert (acc["num_machines"], acc["num_processes"], acc["main_process_port"]) == (2, 16, 29500)
        assert acc["deepspeed_config"]["deepspeed_multinode_launcher"] == "standard"
        assert "--tensor-parallel-size 2 --data-parallel-size 4" in (res.dir / "launch.sh").read_text()
        assert "--nodes=2 --ntasks=2" in (res.dir / "slurm.sh").read_text()
    if name == "2nodes-colocate":  # no server: both nodes train, each on its 4 GPUs
        assert (acc["num_machines"], acc["num_processes"]) == (2, 8)
        slurm = (res.dir / "slurm.sh").read_text()
        assert "MAIN_PROCESS_IP=${HOSTS[0]}" in slurm and "NODE_ROLE" not in slurm
    if name == "cpu":
        assert acc["distributed_type"] == "NO" and acc["use_cpu"] is True


def assert_shell_parses(script):
    """bash -n, and ShellCheck at warning level where it is installed (the info notes it gives on these scripts are
    functions run by traps and words quoted for the node's own shell)."""
    import shutil
    import sys
    from pathlib import Path

    assert subprocess.run(["bash", "-n", str(script)]).returncode == 0
    check = shutil.which("shellcheck") or shutil.which("shellcheck", path=str(Path(sys.executable).parent))
    if check:
        out = subprocess.run([check, "-S", "warning", str(script)], capture_output=True, text=True)
        assert out.returncode == 0, out.stdout


def test_rendering_is_deterministic(workspace):
    a = render(workspace / "brief.yaml", out=workspace / "a")
    b = render(workspace / "brief.yaml", out=workspace / "b")
    for f in RUN_FILES:
        ta, tb = (a.dir / f).read_text(), (b.dir / f).read_text()
        assert ta == tb, f


def test_every_shipped_template_is_used_and_renders(workspace):
    from importlib import resources

    names = {p.name for p in resources.files("grpo_rlvr").joinpath("templates").iterdir() if p.name.endswith(".j2")}
    render(workspace / "brief.yaml", out=workspace / "r")
    assert names == {"grpo_config.yaml.j2", "train.py.j2", "accelerate.yaml.j2", "launch.sh.j2", "report.html.j2",
                     "slurm.sh.j2", "run_report.html.j2"}
    # slurm.sh is rendered in the multi-node case of the matrix above; the run's report in tests/report/


@pytest.mark.e2e
def test_trl_own_cli_accepts_the_rendered_config(workspace, tmp_path):
    """`trl grpo --config grpo_config.yaml` (TRL's own command line) runs one step on the tiny model."""
    import os
    import sys
    from pathlib import Path

    run = render(workspace / "brief.yaml").dir
    trl = Path(sys.executable).with_name("trl")
    out = subprocess.run([str(trl), "grpo", "--config", str(run / "grpo_config.yaml"),
                          "--model_name_or_path", str(workspace / "model"), "--dataset_name", str(workspace / "data"),
                          "--reward_funcs", "grpo_rlvr.rewards.trl_cli.format", "grpo_rlvr.rewards.trl_cli.exact_match",
                          "--max_steps", "1", "--output_dir", str(tmp_path / "trl-out")],
                         capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"}, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert (tmp_path / "trl-out" / "model.safetensors").is_file()


def test_a_training_machine_without_the_default_dashboard_is_told_so(workspace, monkeypatch):
    """Rendered where trackio is installed (runs report to it by default), checked on a machine without it: the
    run check's fresh render differs only in report_to, and the message says that, not that the brief changed."""
    import importlib.util

    from artifacts import make_artifact
    from grpo_rlvr.brief import load_brief, recipe
    from grpo_rlvr.run.check import not_as_rendered
    from grpo_rlvr.run.lock import read_lock

    if importlib.util.find_spec("trackio") is None:
        pytest.skip("trackio is not installed")
    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    run = render(workspace / "brief.yaml").dir
    lock = read_lock(run)
    assert lock["grpo_config"]["report_to"] == "trackio"
    assert not_as_rendered(run, lock, load_brief(workspace / "brief.yaml")) == []
    monkeypatch.setattr(recipe, "dashboard_installed", lambda: False)   # the training machine has no trackio
    [said] = not_as_rendered(run, lock, load_brief(workspace / "brief.yaml"))
    assert said.startswith("the run reports to 'trackio', but rendered on this machine it would report to 'none'")
    assert "pip install 'grpo-rlvr[dashboard]'" in said and "set grpo.report_to in the brief" in said
