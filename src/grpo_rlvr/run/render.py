"""``grpo-rlvr render``: write the run directory a GPU box needs, from Jinja2 template files.

RUN/grpo_config.yaml   GRPOConfig kwargs (TRL field names)
RUN/train.py           builds GRPOTrainer with the brief's rewards, imported by name
RUN/accelerate.yaml    single process, multi-GPU DDP, ZeRO-2/3, FSDP2, multi-node
RUN/launch.sh          colocate: one command; server: vLLM on its own GPUs, health wait, teardown on exit
RUN/brief.lock.json    the resolved brief, fingerprints, the inspection it was gated on, and the SHA-256 of
                       every file above (train.py refuses to run when one differs; see run/guard.py)

Values are computed here; templates only substitute and branch. Rendering is deterministic (no timestamps).
Rendering into a folder that holds training outputs (``output/``) of another lock is refused without
``--force``, which first moves those outputs aside as ``output.bak-<time>/``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import yaml

from grpo_rlvr import __version__
from grpo_rlvr.brief import Brief, load_brief
from grpo_rlvr.errors import ConfigError
from grpo_rlvr.files import move_aside, write_text_atomic
from grpo_rlvr.protected_targets import refuse_target
from grpo_rlvr.rollout.trainer_setup import VLLM_GROUP_PORT, grpo_config_dict, pinned_revision, trainer_setup
from grpo_rlvr.run.lock import LOCK, read_lock_if_any, with_hashes, write_lock
from grpo_rlvr.run.plan import VLLM_PORT, LaunchPlan, server_argv, training_argv
from grpo_rlvr.templating import environment

TRL_VERSION = "1.16"
RUN_FILES = ("grpo_config.yaml", "train.py", "accelerate.yaml", "launch.sh", "brief.lock.json")


@dataclass
class RenderResult:
    dir: Path
    files: list[str]
    mode: str

    def to_dict(self) -> dict:
        return {"dir": str(self.dir), "files": self.files, "mode": self.mode, "next": f"grpo-rlvr train {self.dir}"}

    def format(self) -> str:
        return (f"Rendered {self.mode} run in {self.dir}: {', '.join(self.files)}\n"
                f"Next: grpo-rlvr train {self.dir}   (checks the inspection gate first)")


def accelerate_config(brief: Brief) -> tuple[dict, str]:
    """The accelerate config dict and a one-line description."""
    hw = brief.hardware
    nproc, machines = hw.num_processes, hw.training_nodes   # a generation node is no machine of accelerate's
    base = {"compute_environment": "LOCAL_MACHINE", "debug": False, "machine_rank": 0, "main_training_function": "main",
            "num_machines": machines, "num_processes": nproc, "rdzv_backend": "static", "same_network": True,
            "use_cpu": hw.accelerator == "cpu", "mixed_precision": "bf16" if brief.grpo.get("bf16") else "no",
            "main_process_ip": None, "main_process_port": None}
    if machines > 1:  # the address comes from launch.sh's --main_process_ip "$MAIN_PROCESS_IP"
        base.update(main_process_port=29500)
    if hw.sharding in ("zero2", "zero3"):
        stage = 3 if hw.sharding == "zero3" else 2
        base.update(distributed_type="DEEPSPEED", deepspeed_config={
            "deepspeed_multinode_launcher": "standard", "offload_optimizer_device": "none",
            "offload_param_device": "none", "zero3_init_flag": stage == 3, "zero3_save_16bit_model": stage == 3,
            "zero_stage": stage})
        desc = f"DeepSpeed ZeRO-{stage} over {nproc} processes on {machines} training node(s)"
    elif hw.sharding == "fsdp2":
        base.update(distributed_type="FSDP", fsdp_config={
            "fsdp_version": 2, "fsdp_auto_wrap_policy": "TRANSFORMER_BASED_WRAP", "fsdp_cpu_ram_efficient_loading": True,
            "fsdp_offload_params": False, "fsdp_reshard_after_forward": True, "fsdp_state_dict_type": "SHARDED_STATE_DICT"})
        desc = f"FSDP2 over {nproc} processes on {machines} training node(s)"
    elif nproc > 1:
        base.update(distributed_type="MULTI_CPU" if hw.accelerator == "cpu" else "MULTI_GPU")
        desc = f"DDP over {nproc} processes on {machines} training node(s)"
    else:
        base.update(distributed_type="NO")
        desc = "single process (" + ("CPU" if hw.accelerator == "cpu" else "one GPU, vLLM colocated") + ")"
    return {k: v for k, v in base.items() if v is not None}, desc


def _devices(start: int, count: int) -> str:
    return ",".join(str(i) for i in range(start, start + count))


def launch_plan(brief: Brief) -> LaunchPlan:
    """How this brief's run starts (stored in the lock; launch.sh and ``train --dry-run`` show the same)."""
    hw = brief.hardware
    per_node = hw.num_processes if hw.accelerator == "cpu" else hw.training_gpus_per_node
    launcher, train = training_argv(hw.accelerator, per_node, hw.training_nodes)
    mode = brief.vllm_mode or "local"
    if mode != "server":
        return LaunchPlan(mode, launcher, per_node, hw.num_nodes, train)
    first_training_gpu = 0 if hw.generation_node else hw.vllm_gpus
    return LaunchPlan(mode, launcher, per_node, hw.num_nodes, train,
                      vllm_argv=server_argv(brief.model.base_path, pinned_revision(brief), hw.vllm_tensor_parallel,
                                            hw.vllm_data_parallel),
                      vllm_devices=_devices(0, hw.vllm_gpus),
                      train_devices=_devices(first_training_gpu, hw.training_gpus_per_node),
                      vllm_port=int(brief.grpo.get("vllm_server_port") or VLLM_PORT),
                      generation_node=hw.generation_node)


def _split_spec(resolved: str, local: bool, split: str, field: str, subset: str | None,
                revision: str | None = None) -> dict:
    return {"path": resolved, "local": local, "split": split, "subset": None if local else subset, "field": field,
            "revision": revision}


def _protect_outputs(out: Path, lock: dict, files: dict, force: bool) -> None:
    """Refuse to re-render over training outputs made under another lock, unless ``force`` moves them aside."""
    output = out / "output"
    if not output.is_dir() or not any(output.iterdir()):
        return
    if read_lock_if_any(out) == with_hashes(lock, files):
        return
    if not force:
        raise ConfigError(f"{out}: holds training outputs ({output}) made by another render (another brief, "
                          "settings or grpo-rlvr version); rendering here would mix the two runs. Render into a new "
                          f"folder with --out, or re-run with --force, which moves them to {output.name}.bak-<time>/")
    move_aside(output)


def render(brief_path, out=None, inspection=None, force: bool = False) -> RenderResult:
    """Write the run directory for ``brief_path`` into ``out`` (default ``<output_dir>/run``).

    Raises:
        ConfigError: the brief is invalid (every problem listed), or ``out`` holds outputs of another lock and
            ``force`` is not set.
    """
    brief = load_brief(brief_path)
    out = refuse_target(Path(out) if out else brief.output_dir / "run", "--out", own="run")
    insp = Path(inspection) if inspection else brief.output_dir / "inspection"
    files, lock = rendered(brief, insp)
    _protect_outputs(out, lock, files, force)
    out.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        write_text_atomic(out / name, text, mode=0o755 if name.endswith((".sh", ".py")) else None)
    lock = write_lock(out, lock, files)
    return RenderResult(out, [*files, LOCK], lock["launch"]["mode"])


def rendered(brief: Brief, insp: Path) -> tuple[dict[str, str], dict]:
    """What ``render`` writes for ``brief`` gated on the inspection ``insp``: ``{file name: text}`` and the lock
    (without its ``files`` hashes). Deterministic, so the run check compares a run folder against it."""
    env = environment()
    common = {"version": __version__, "brief_name": brief.name, "fingerprint": brief.fingerprint}

    cfg = grpo_config_dict(brief)
    body = yaml.safe_dump(cfg, sort_keys=True, default_flow_style=False)
    files = {"grpo_config.yaml": env.get_template("grpo_config.yaml.j2").render(
        **common, trl_version=TRL_VERSION, body=body)}

    ds = brief.dataset
    files["train.py"] = env.get_template("train.py.j2").render(
        **common, setup=trainer_setup(brief),
        dataset={**_split_spec(ds.resolved, ds.is_local, ds.split, "dataset.path", ds.subset,
                               pinned_revision(brief, "dataset")),
                 "eval": _split_spec(ds.eval_resolved, ds.eval_is_local, ds.eval_split, "dataset.eval_path",
                                     ds.subset)
                 if ds.eval_path else None},
        prompt_column=ds.prompt_column, column_map=dict(ds.columns), prompt=dict(ds.prompt) or None,
        rewards=[{"name": r.name, "params": dict(r.params), "kind": r.kind} for r in brief.rewards],
        brief_dir=str(brief.base_dir), watch=brief.watch.to_dict(), use_vllm=brief.vllm_mode is not None,
        tools=None if brief.tools is None else brief.tools.to_dict())

    acc, desc = accelerate_config(brief)
    files["accelerate.yaml"] = env.get_template("accelerate.yaml.j2").render(
        **common, description=desc, body=yaml.safe_dump(acc, sort_keys=True))
    plan = launch_plan(brief)
    files["launch.sh"] = env.get_template("launch.sh.j2").render(
        **common, description=f"{plan.mode} mode; {desc}", mode=plan.mode, train_command=plan.train_command,
        vllm_devices=plan.vllm_devices, train_devices=plan.train_devices, vllm_command=plan.vllm_command,
        vllm_port=plan.vllm_port, health_timeout_s=plan.health_timeout_s, layout=plan.layout,
        num_nodes=plan.nodes, training_nodes=plan.training_nodes, training_node_names=plan.training_node_names,
        vllm_group_port=int(brief.grpo.get("vllm_group_port") or VLLM_GROUP_PORT))
    if plan.nodes > 1:
        files["slurm.sh"] = env.get_template("slurm.sh.j2").render(
            **common, num_nodes=plan.nodes, training_nodes=plan.training_nodes, layout=plan.layout,
            training_node_names=plan.training_node_names,
            gpus_per_node=brief.hardware.num_gpus, job_name=brief.name, description=desc)
    lock = {
        "tool": f"grpo-rlvr {__version__}", "brief": str(brief.path), "fingerprint": brief.fingerprint,
        "inspection": str(insp.resolve()), "launch": plan.to_dict(), "accelerate": desc,
        "resolved": json.loads(json.dumps(dict(brief.as_written), default=str)),
        "grpo_config": cfg,
        "variant": None if brief.variant is None else {"name": brief.variant.name, "diagnosis": brief.variant.diagnosis,
                                                        "automatic": brief.variant.automatic},
    }
    if brief.dynamic_sampling is not None:  # only when on, so plain runs keep their lock
        lock["dynamic_sampling"] = {**brief.dynamic_sampling.to_dict(), "from": brief.dynamic_sampling.origin}
    return files, json.loads(json.dumps(lock, default=str))
