"""The launch plan is data: argv lists in the lock, joined with shell quoting for launch.sh, started as lists by
``grpo-rlvr train`` (no command string is parsed back)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys

import pytest

from grpo_rlvr.errors import LaunchError
from grpo_rlvr.run.plan import LaunchPlan, server_argv, shell_join, training_argv


@pytest.mark.parametrize("accelerator,processes,nodes,launcher", [
    ("cpu", 1, 1, "python"), ("cpu", 3, 1, "torchrun"), ("gpu", 8, 1, "accelerate"), ("gpu", 8, 2, "accelerate")])
def test_each_launcher_round_trips_through_the_lock_and_starts_as_a_list(tmp_path, accelerator, processes, nodes,
                                                                         launcher):
    got, argv = training_argv(accelerator, processes, nodes)
    plan = LaunchPlan("local", got, processes, nodes, argv)
    back = LaunchPlan.from_dict(json.loads(json.dumps(plan.to_dict())), "brief.lock.json")
    assert got == launcher and back == plan and argv[-1] == "train.py"
    cmd = back.argv(tmp_path)
    if nodes > 1:  # each node's $MACHINE_RANK is expanded by launch.sh's shell, never passed literally
        assert cmd == ["bash", str(tmp_path / "launch.sh")]
        assert '--machine_rank "$MACHINE_RANK"' in back.train_command
    else:
        assert cmd[0] == sys.executable and cmd[-1] == str(tmp_path / "train.py")
        assert "$" not in " ".join(cmd)


def test_the_server_command_keeps_awkward_words_whole():
    path = "/models/my model's copy"
    words = server_argv(path, "a" * 40, 2)
    line = shell_join(words)
    assert shlex.split(line) == list(words)  # what bash runs is the argv the plan holds
    assert "'{\"backend\": \"nccl\"}'" in line and "--revision " + "a" * 40 in line
    out = subprocess.run(["bash", "-c", f"printf '%s\\n' {line}"], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == list(words)


@pytest.mark.parametrize("launch", [
    {"mode": "local", "train_command": "python train.py"},      # what grpo-rlvr wrote before the plan was data
    {"mode": "warp", "launcher": "python", "processes": 1, "nodes": 1, "train_argv": ["python", "train.py"],
     "vllm_argv": []},
    None])
def test_a_plan_this_version_does_not_write_is_refused_with_the_fix(launch):
    with pytest.raises(LaunchError) as e:
        LaunchPlan.from_dict(launch, "run/brief.lock.json")
    assert "run/brief.lock.json" in str(e.value) and "grpo-rlvr render" in str(e.value)
