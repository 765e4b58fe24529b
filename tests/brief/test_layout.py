"""The hardware section as a layout of nodes and GPUs: the defaults (several nodes in server mode: node 0 generates
on every GPU, the others train on every GPU), the layouts refused (idle GPUs, a server split that cannot start) with
the field and the fix, and the layout validate prints. The tiny model has 4 attention heads and 4 key/value heads."""

from __future__ import annotations

import subprocess

import pytest
import yaml

from briefs import example_brief_text
from grpo_rlvr.brief import load_brief
from grpo_rlvr.errors import ConfigError
from paths import CLI


def brief_with(workspace, hardware: dict, **grpo):
    data = yaml.safe_load(example_brief_text())
    data["hardware"] = hardware
    data["grpo"].update({"per_device_train_batch_size": 8, **grpo})
    path = workspace / "layout.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def problems(workspace, hardware: dict, **grpo) -> str:
    with pytest.raises(ConfigError) as e:
        load_brief(brief_with(workspace, hardware, **grpo))
    return str(e.value)


def test_two_nodes_default_to_a_generation_node_and_a_training_node(workspace):
    hw = load_brief(brief_with(workspace, {"accelerator": "gpu", "num_gpus": 8, "num_nodes": 2})).hardware
    assert (hw.generation_node, hw.vllm_gpus, hw.vllm_tensor_parallel, hw.vllm_data_parallel) == (True, 8, 1, 8)
    assert (hw.training_nodes, hw.training_gpus_per_node, hw.num_processes) == (1, 8, 8)


def test_three_nodes_train_on_sixteen_gpus_and_the_split_follows_the_one_given(workspace):
    b = load_brief(brief_with(workspace, {"accelerator": "gpu", "num_gpus": 8, "num_nodes": 3,
                                          "vllm_tensor_parallel": 4}))
    hw = b.hardware
    assert (hw.num_processes, hw.training_nodes, hw.vllm_tensor_parallel, hw.vllm_data_parallel) == (16, 2, 4, 2)
    assert b.grpo["vllm_mode"] == "server"


def test_several_nodes_colocated_train_on_every_gpu_of_every_node(workspace):
    b = load_brief(brief_with(workspace, {"accelerator": "gpu", "num_gpus": 4, "num_nodes": 2}, vllm_mode="colocate"))
    assert (b.hardware.vllm_gpus, b.hardware.generation_node, b.hardware.num_processes) == (0, False, 8)


def test_one_node_keeps_tensor_parallel_over_its_vllm_gpus_as_far_as_the_heads_allow(workspace):
    two = load_brief(brief_with(workspace, {"accelerator": "gpu", "num_gpus": 8, "vllm_gpus": 2})).hardware
    assert (two.vllm_tensor_parallel, two.vllm_data_parallel, two.num_processes) == (2, 1, 6)
    eight = load_brief(brief_with(workspace, {"accelerator": "gpu", "num_gpus": 16, "vllm_gpus": 8})).hardware
    assert (eight.vllm_tensor_parallel, eight.vllm_data_parallel) == (4, 2)  # 4 heads: tensor parallel 8 cannot start


@pytest.mark.parametrize("hardware,grpo,expect", [
    ({"num_gpus": 8, "num_nodes": 2, "vllm_gpus": 2}, {},
     "hardware.vllm_gpus: 2 of the generation node's 8 GPUs would leave 6 idle"),
    ({"num_gpus": 8, "num_nodes": 2, "vllm_gpus": 12}, {}, "hardware.vllm_gpus: 12 but the generation node has 8 GPUs"),
    ({"num_gpus": 8, "num_nodes": 2, "vllm_tensor_parallel": 2, "vllm_data_parallel": 2}, {},
     "hardware.vllm_tensor_parallel × vllm_data_parallel: 2 × 2 = 4, but the server has 8 GPU(s)"),
    ({"num_gpus": 8, "num_nodes": 2, "vllm_tensor_parallel": 3}, {}, "the product must equal it, e.g. 1 × 8 or 2 × 4"),
    ({"num_gpus": 8, "num_nodes": 2, "vllm_tensor_parallel": 8}, {},
     "hardware.vllm_tensor_parallel: 8 does not split the model's 4 attention heads"),
    ({"num_gpus": 4, "num_nodes": 2, "vllm_tensor_parallel": 2}, {"vllm_mode": "colocate"},
     "hardware.vllm_tensor_parallel: sets the vLLM server's split, but no GPU serves vLLM"),
    ({"num_gpus": 8, "vllm_gpus": 2}, {"use_vllm": False}, "grpo.use_vllm: false but hardware.vllm_gpus is 2"),
    ({"num_gpus": 8, "vllm_gpus": 2}, {"vllm_tensor_parallel_size": 2},
     "grpo.vllm_tensor_parallel_size: 2 is applied by TRL to colocate mode only"),
    ({"num_gpus": 8, "vllm_gpus": 8}, {}, "leave no GPU for training out of 8"),
], ids=["partial-generation-node", "more-vllm-gpus-than-a-node", "split-short", "split-not-dividing", "tp-vs-heads",
        "split-without-server", "idle-server-gpus", "grpo-tp-in-server-mode", "one-node-all-serve"])
def test_layouts_that_idle_gpus_or_cannot_start_are_refused_with_the_fix(workspace, hardware, grpo, expect):
    assert expect in problems(workspace, {"accelerator": "gpu", **hardware}, **grpo)


def test_the_fix_for_a_partial_generation_node_is_a_layout_that_loads(workspace):
    said = problems(workspace, {"accelerator": "gpu", "num_gpus": 8, "num_nodes": 2, "vllm_gpus": 2})
    assert "remove vllm_gpus (all 8 serve) or set vllm_gpus: 8" in said
    fixed = load_brief(brief_with(workspace, {"accelerator": "gpu", "num_gpus": 8, "num_nodes": 2, "vllm_gpus": 8}))
    assert fixed.hardware.num_processes == 8


def test_validate_prints_each_node_kind(workspace):
    path = brief_with(workspace, {"accelerator": "gpu", "num_gpus": 8, "num_nodes": 3, "vllm_tensor_parallel": 2,
                                  "sharding": "zero3"})
    out = subprocess.run([*CLI, "validate", str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "    node 0 generates: vllm serve on GPUs 0-7 (tensor parallel 2 × data parallel 4)" in out.stdout
    assert ("    nodes 1-2 train: accelerate launch on GPUs 0-7 of each (machine ranks 0-1), 16 training processes, "
            "zero3; every GPU busy") in out.stdout
    bad = subprocess.run([*CLI, "validate", str(brief_with(workspace, {"accelerator": "gpu", "num_gpus": 8,
                                                                        "num_nodes": 2, "vllm_gpus": 2}))],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "hardware.vllm_gpus" in bad.stderr and "Traceback" not in bad.stderr
