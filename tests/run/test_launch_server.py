"""vLLM server mode: launch.sh for 8 GPUs (2 vLLM + 6 training) and for 2 and 3 nodes (node 0 generates, the others
train on every GPU), checked by its dry run; and the server lifecycle (health deadline, teardown on success,
failure, Ctrl-C, SIGTERM and SIGKILL of the launcher) exercised with STAND-IN processes: a fake
`vllm.entrypoints.openai.api_server` module (on PYTHONPATH) that serves /health on loopback, and a fake
`accelerate` on PATH. The multi-node layout runs as two or three launch.sh processes on this one machine, each with
its node's role, the nodes' addresses all loopback. This lane has no GPU, no vLLM and one machine; the stand-ins
are named as such. The same lifecycle with a real vLLM server is tests/vllm_lane/test_server.py (the vLLM lane)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from artifacts import make_artifact
from briefs import example_brief_text
from grpo_rlvr.run.launch import train
from grpo_rlvr.run.render import render

STAND_IN_VLLM = r'''# STAND-IN for `python -m vllm.entrypoints.openai.api_server`: serves /health on loopback after
# HEALTHY_AFTER_S seconds; records its pid.
import http.server, os, sys, threading, time
port = int(sys.argv[sys.argv.index("--port") + 1])
open(os.environ["STANDIN_DIR"] + "/vllm.pid", "w").write(str(os.getpid()))
delay = float(os.environ.get("HEALTHY_AFTER_S", "0.5"))
start = time.time()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        ok = self.path == "/health" and time.time() - start >= delay
        self.send_response(200 if ok else 503); self.end_headers()
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
'''

STAND_IN_ACCELERATE = r'''#!/usr/bin/env bash
# STAND-IN for `accelerate launch ... train.py`: records its arguments, then behaves as TRAIN_BEHAVIOUR says.
echo $$ > "$STANDIN_DIR/train.pid"
echo "$CUDA_VISIBLE_DEVICES $*" > "$STANDIN_DIR/train.args"
echo "$CUDA_VISIBLE_DEVICES $*" >> "$STANDIN_DIR/train.args.every-node"
env > "$STANDIN_DIR/train.env"
case "${TRAIN_BEHAVIOUR:-ok}" in
  ok) exit 0 ;;
  fail) exit 3 ;;
  hang) sleep 300 ;;
esac
'''


def free_port() -> int:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def server_run(workspace, hardware, reviewed: str | None = "agree", port: int | None = None) -> Path:
    """A rendered server-mode run; with a passing review unless ``reviewed`` is None (launch.sh checks the gate);
    its vLLM server on ``port`` (the brief's grpo.vllm_server_port) when given."""
    data = yaml.safe_load(example_brief_text())
    data["hardware"] = hardware
    if port is not None:
        data["grpo"]["vllm_server_port"] = port
    data["grpo"]["per_device_train_batch_size"] = 8
    data["grpo"].pop("disable_tqdm", None)
    (workspace / "brief.yaml").write_text(yaml.safe_dump(data))
    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection", verdict=reviewed)
    return render(workspace / "brief.yaml").dir


@pytest.fixture
def standins(tmp_path):
    d = tmp_path / "standins"
    d.mkdir()
    p = d / "accelerate"
    p.write_text(STAND_IN_ACCELERATE)
    p.chmod(p.stat().st_mode | stat.S_IEXEC)
    server = d / "pkgs" / "vllm" / "entrypoints" / "openai"
    server.mkdir(parents=True)
    for pkg in (server, server.parent, server.parent.parent):
        (pkg / "__init__.py").write_text("")
    (server / "api_server.py").write_text(STAND_IN_VLLM)
    return d


def test_dry_run_8_gpus_prints_exact_commands(workspace):
    run = server_run(workspace, {"accelerator": "gpu", "num_gpus": 8, "vllm_gpus": 2})
    res = train(run, dry_run=True)
    assert res.command == ["bash", str(run / "launch.sh")]
    plan = "\n".join(res.plan)
    assert ("CUDA_VISIBLE_DEVICES=0,1 env VLLM_SERVER_DEV_MODE=1 python -m vllm.entrypoints.openai.api_server "
            "--model " in plan
            and "--tensor-parallel-size 2" in plan and "--weight-transfer-config" in plan and "--port 8000" in plan)
    assert "CUDA_VISIBLE_DEVICES=2,3,4,5,6,7 accelerate launch --config_file accelerate.yaml train.py" in plan
    assert yaml.safe_load((run / "accelerate.yaml").read_text())["num_processes"] == 6


def dry(run, **env):
    return subprocess.run(["bash", str(run / "launch.sh")], env={**os.environ, "GRPO_RLVR_DRY_RUN": "1", **env},
                          capture_output=True, text=True)


def test_dry_run_two_nodes_one_generation_node_and_every_training_gpu_busy(workspace):
    """2 nodes × 8 GPUs: node 0 only serves (vllm serve on GPUs 0-7, data parallel over all 8 by default), node 1
    trains on GPUs 0-7 (8 processes, accelerate's only machine) against node 0's server."""
    run = server_run(workspace, {"accelerator": "gpu", "num_gpus": 8, "num_nodes": 2})
    missing = dry(run)
    assert missing.returncode != 0 and "set NODE_ROLE=generation on node 0 and NODE_ROLE=training on node 1" in \
        missing.stderr
    assert "set VLLM_SERVER_HOST" in dry(run, NODE_ROLE="training").stderr
    node0 = dry(run, NODE_ROLE="generation")
    assert node0.returncode == 0, node0.stderr
    assert node0.stdout.splitlines() == [
        "CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 env VLLM_SERVER_DEV_MODE=1 python -m vllm.entrypoints.openai.api_server "
        f"--model {(workspace / 'model').resolve()} --tensor-parallel-size 1 --data-parallel-size 8 --weight-transfer-config "
        '{"backend": "nccl"} --logprobs-mode processed_logprobs --max-logprobs -1 --port 8000',
        "wait for http://127.0.0.1:8000/health (deadline 600s)",
        "serve until stopped (Ctrl-C or SIGTERM stops the server)"]
    node1 = dry(run, NODE_ROLE="training", VLLM_SERVER_HOST="node0")
    assert node1.returncode == 0, node1.stderr
    assert node1.stdout.splitlines() == [
        "wait for http://node0:8000/health (deadline 600s)",
        "CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 accelerate launch --config_file accelerate.yaml train.py "
        "--vllm-server-host node0 "]
    acc = yaml.safe_load((run / "accelerate.yaml").read_text())
    assert (acc["num_machines"], acc["num_processes"]) == (1, 8)
    # `grpo-rlvr train --dry-run` prints each node's command from the same dry runs
    res = train(run, dry_run=True)
    assert res.command == ["bash", str(run / "launch.sh")] and not res.refused
    assert res.plan[0] == "node 0 (generation): NODE_ROLE=generation bash launch.sh"
    assert res.plan[1:4] == [f"  {x}" for x in node0.stdout.splitlines()]
    assert res.plan[4] == "node 1 (training, machine rank 0): NODE_ROLE=training VLLM_SERVER_HOST=node0 bash launch.sh"
    assert res.plan[5:] == [f"  {x}" for x in node1.stdout.splitlines()]
    lock = json.loads((run / "brief.lock.json").read_text())["launch"]
    assert (lock["nodes"], lock["processes"], lock["generation_node"]) == (2, 8, True)


def test_dry_run_three_nodes_two_training_machines(workspace):
    """3 nodes × 8 GPUs, tensor parallel 2: node 0 serves (2 × 4), nodes 1 and 2 are machine ranks 0 and 1 of 16
    training processes, both pointed at node 1 for accelerate's rendezvous and at node 0 for generation."""
    run = server_run(workspace, {"accelerator": "gpu", "num_gpus": 8, "num_nodes": 3, "vllm_tensor_parallel": 2})
    assert "set MACHINE_RANK (0..1)" in dry(run, NODE_ROLE="training", VLLM_SERVER_HOST="node0").stderr
    res = train(run, dry_run=True)
    plan = "\n".join(res.plan)
    assert "--tensor-parallel-size 2 --data-parallel-size 4" in res.plan[1]
    for rank in (0, 1):
        head = res.plan.index(f"node {rank + 1} (training, machine rank {rank}): NODE_ROLE=training "
                              f"VLLM_SERVER_HOST=node0 MACHINE_RANK={rank} MAIN_PROCESS_IP=node1 bash launch.sh")
        assert res.plan[head + 2] == (
            "  CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 accelerate launch --config_file accelerate.yaml --machine_rank "
            f"{rank} --main_process_ip node1 train.py --vllm-server-host node0 ")
    assert plan.count("vllm.entrypoints") == 1   # one server, on node 0
    acc = yaml.safe_load((run / "accelerate.yaml").read_text())
    assert (acc["num_machines"], acc["num_processes"], acc["main_process_port"]) == (2, 16, 29500)


def test_one_node_server_layout_is_unchanged(workspace):
    """One node of 8: GPUs 0-1 serve (tensor parallel 2, as before), 2-7 train; no role or address to set."""
    run = server_run(workspace, {"accelerator": "gpu", "num_gpus": 8, "vllm_gpus": 2})
    out = dry(run)
    assert out.returncode == 0 and "NODE_ROLE" not in (run / "launch.sh").read_text()
    lines = out.stdout.splitlines()
    assert "--tensor-parallel-size 2 --weight-transfer-config" in lines[0] and "--data-parallel-size" not in lines[0]
    assert lines[-1] == ("CUDA_VISIBLE_DEVICES=2,3,4,5,6,7 accelerate launch --config_file accelerate.yaml train.py "
                         "--vllm-server-host 127.0.0.1 ")


def test_dry_run_with_signals_ignored_and_no_python_on_path(workspace, tmp_path):
    """Started as a background job of a script (SIGINT ignored on entry, as in CI's background lanes) on a box
    whose PATH has bash and coreutils but no `python`: launch.sh starts itself again with the signals at their
    defaults without needing a Python, and prints the plan. (It used to re-exec through `python` and failed
    with `exec: python: not found`, CI's py314 lane from a fresh root.)"""
    import shutil

    run = server_run(workspace, {"accelerator": "gpu", "num_gpus": 8, "vllm_gpus": 2})
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "env", "awk", "dirname", "cat"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    res = subprocess.run(["bash", str(run / "launch.sh")], capture_output=True, text=True,
                         env={"PATH": str(bin_dir), "GRPO_RLVR_DRY_RUN": "1"},
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    assert res.returncode == 0, res.stderr
    assert "python: not found" not in res.stderr
    assert "CUDA_VISIBLE_DEVICES=2,3,4,5,6,7 accelerate launch --config_file accelerate.yaml train.py" in res.stdout


def launch(run, standins, port, ignore_sigint=False, command=None, **env):
    # a free port for this test, rendered from the brief (launch.sh refuses rendered files edited afterwards)
    assert f"VLLM_PORT={port}" in (run / "launch.sh").read_text()
    # the stand-ins first, then this venv's python (as on a training box with the venv activated)
    full = {**os.environ, "PATH": f"{standins}:{os.path.dirname(sys.executable)}:{os.environ['PATH']}",
            "PYTHONPATH": str(standins / "pkgs"), "STANDIN_DIR": str(standins),
            "VLLM_HEALTH_TIMEOUT_S": "20", **env}
    # ignore_sigint: start the launcher as `nohup` or a background job of a script would, with SIGINT ignored
    # (bash cannot trap a signal ignored on entry; launch.sh must start itself again to get it back)
    pre = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignore_sigint else None
    return subprocess.Popen(command or ["bash", str(run / "launch.sh")], env=full, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True, preexec_fn=pre)


@pytest.fixture
def cpu_hog():
    """Busy loops on every core for the test's duration: teardown must hold on a loaded machine too."""
    code = "import time\nend = time.monotonic() + 300\nwhile time.monotonic() < end: pass"
    hogs = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(os.cpu_count() or 2)]
    yield
    for h in hogs:
        h.kill()
        h.wait()


def gone(probe, timeout_s) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            probe()
        except ProcessLookupError:
            return True
        time.sleep(0.2)
    return False


def server_gone(standins, timeout_s=30.0) -> bool:
    pid = int((standins / "vllm.pid").read_text())
    return gone(lambda: os.kill(pid, 0), timeout_s)


def trainer_gone(standins, timeout_s=30.0) -> bool:
    """The stand-in trainer and everything it started (its `sleep`): its whole process group."""
    pgid = int((standins / "train.pid").read_text())
    return gone(lambda: os.killpg(pgid, 0), timeout_s)


def wait_for(path: Path, timeout_s=30.0):
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.1)


@pytest.mark.parametrize("behaviour,expect_rc", [("ok", 0), ("fail", 3)])
def test_server_lifecycle_success_and_failure(workspace, standins, behaviour, expect_rc):
    port = free_port()
    run = server_run(workspace, {"accelerator": "gpu", "num_gpus": 8, "vllm_gpus": 2}, port=port)
    p = launch(run, standins, port, TRAIN_BEHAVIOUR=behaviour)
    out, _ = p.communicate(timeout=60)
    assert p.returncode == expect_rc, out
    assert "vLLM is healthy" in out and "stopping the vLLM server" in out
    assert (standins / "train.args").read_text().startswith("2,3,4,5,6,7 launch --config_file accelerate.yaml")
    assert server_gone(standins)


@pytest.mark.parametrize("through", ["grpo-rlvr train", "bash launch.sh"])
def test_the_gate_is_checked_once_before_the_server_starts(workspace, standins, tmp_path, through):
    """`grpo-rlvr train` checks the gate (one re-score of the review) and launch.sh does not check again; run by
    hand, launch.sh makes that check itself. (train.py's own check, the door for every other way in, is not
    reached here: the stand-in accelerate does not run it.)"""

    port = free_port()
    run = server_run(workspace, {"accelerator": "gpu", "num_gpus": 8, "vllm_gpus": 2}, port=port)
    trace = tmp_path / "trace.jsonl"
    command = [sys.executable, "-m", "grpo_rlvr", "train", str(run)] if through == "grpo-rlvr train" else None
    p = launch(run, standins, port, command=command, GRPO_RLVR_TRACE=str(trace))
    out, _ = p.communicate(timeout=120)
    assert p.returncode == 0 and "vLLM is healthy" in out, out
    events = [json.loads(x) for x in trace.read_text().splitlines()]
    rescores = [e for e in events if e["event"] == "gate_rescore"]
    assert len(rescores) == 1, events
    started_by = " ".join(rescores[0]["parent_argv"])
    assert ("grpo_rlvr train" in started_by) == (through == "grpo-rlvr train"), started_by
    assert "GRPO_RLVR_LAUNCHER_CHECKED" not in (standins / "train.env").read_text()


@pytest.mark.parametrize("moment", ["training", "waiting for health"])
@pytest.mark.parametrize("sig, ignore_sigint", [(signal.SIGINT, False), (signal.SIGINT, True),
                                                (signal.SIGTERM, False), (signal.SIGKILL, False)])
def test_server_torn_down_when_launcher_is_interrupted_or_killed(workspace, standins, cpu_hog, sig, ignore_sigint,
                                                                 moment):
    port = free_port()
    run = server_run(workspace, {"accelerator": "gpu", "num_gpus": 8, "vllm_gpus": 2}, port=port)
    healthy_after = "0.5" if moment == "training" else "999"
    p = launch(run, standins, port, ignore_sigint=ignore_sigint, TRAIN_BEHAVIOUR="hang",
               HEALTHY_AFTER_S=healthy_after, VLLM_HEALTH_TIMEOUT_S="600")
    wait_for(standins / ("train.args" if moment == "training" else "vllm.pid"), timeout_s=120)
    os.kill(p.pid, sig)  # the launcher only (bash), as Ctrl-C / kill would
    try:
        p.wait(timeout=120)
        assert server_gone(standins, timeout_s=60), f"vLLM stand-in survived {sig.name} while {moment}"
        if moment == "training":
            assert trainer_gone(standins, timeout_s=60), f"the trainer survived {sig.name}"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)


def test_unreviewed_run_starts_no_server(workspace, standins):
    port = free_port()
    run = server_run(workspace, {"accelerator": "gpu", "num_gpus": 8, "vllm_gpus": 2}, reviewed=None, port=port)
    p = launch(run, standins, port)
    out, _ = p.communicate(timeout=120)
    assert p.returncode == 1 and "training refused (no server started" in out and "without a verdict" in out
    assert not (standins / "vllm.pid").exists() and not (standins / "train.args").exists()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_grpo_rlvr_train_passes_a_stop_on_and_waits_for_the_teardown(workspace, standins, sig):
    """Ctrl-C or SIGTERM to `grpo-rlvr train` alone: the launcher is told, and given time to stop its trainer
    and server (it is not killed 0.25 s later, as subprocess.run would)."""
    port = free_port()
    run = server_run(workspace, {"accelerator": "gpu", "num_gpus": 8, "vllm_gpus": 2}, port=port)
    p = launch(run, standins, port, command=[sys.executable, "-m", "grpo_rlvr", "train", str(run)],
               TRAIN_BEHAVIOUR="hang")
    try:
        wait_for(standins / "train.args", timeout_s=120)
        os.kill(p.pid, sig)  # the Python launcher only
        out, _ = p.communicate(timeout=120)
        assert p.returncode == (130 if sig == signal.SIGINT else 128 + sig), out
        assert "Traceback" not in out and "stopping the vLLM server" in out, out
        assert server_gone(standins) and trainer_gone(standins)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)


def test_health_deadline(workspace, standins):
    port = free_port()
    run = server_run(workspace, {"accelerator": "gpu", "num_gpus": 8, "vllm_gpus": 2}, port=port)
    p = launch(run, standins, port, HEALTHY_AFTER_S="999", VLLM_HEALTH_TIMEOUT_S="3")
    out, _ = p.communicate(timeout=60)
    assert p.returncode == 1 and "not healthy after 3s" in out
    assert not (standins / "train.args").exists() and server_gone(standins)


def test_red_team_a_grpo_rlvr_folder_in_the_run_cannot_answer_launch_shs_check(workspace, standins):
    """launch.sh checks the gate with `python -m grpo_rlvr...` from the run folder; without -I that folder is first
    on the module path, and a package placed there answered "may train" and started the server."""
    port = free_port()
    run = server_run(workspace, {"accelerator": "gpu", "num_gpus": 8, "vllm_gpus": 2}, reviewed=None, port=port)
    fake = run / "grpo_rlvr" / "runtime"
    fake.mkdir(parents=True)
    (run / "grpo_rlvr" / "__init__.py").write_text("")
    (fake / "__init__.py").write_text("")
    (fake / "run_guard.py").write_text("raise SystemExit(0)\n")
    p = launch(run, standins, port)
    out, _ = p.communicate(timeout=120)
    assert p.returncode == 1 and "training refused (no server started" in out and "without a verdict" in out, out
    assert not (standins / "vllm.pid").exists() and not (standins / "train.args").exists()


def said_until(proc, text: str, timeout_s: float) -> str:
    """What ``proc`` wrote to its stdout pipe until ``text`` appeared (or it closed, or the time ran out), read from
    the pipe itself: the training nodes can be done before node 0's own health check has passed (a SIGTERM then
    stopped node 0 before it said so: one CI run in three at 2 nodes on a loaded machine)."""
    import selectors

    fd, got, end = proc.stdout.fileno(), b"", time.monotonic() + timeout_s
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while text.encode() not in got and time.monotonic() < end and sel.select(end - time.monotonic()):
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            got += chunk
    return got.decode("utf-8", "replace")


@pytest.mark.parametrize("nodes", [2, 3])
def test_nodes_on_one_machine_with_stand_ins(workspace, standins, nodes):
    """STAND-INS on ONE machine (no GPU, no second host here): each node is a launch.sh process with its role, every
    address loopback. The training nodes start first and wait for the generation node's health; then node 0
    (NODE_ROLE=generation) starts the stand-in server, the training nodes start the stand-in accelerate on GPUs 0-7
    with their machine ranks, and node 0 serves until SIGTERM (what slurm.sh sends when training ends), which
    tears the server down."""
    port = free_port()
    run = server_run(workspace, {"accelerator": "gpu", "num_gpus": 8, "num_nodes": nodes}, port=port)
    ranks = {} if nodes == 2 else {"MAIN_PROCESS_IP": "127.0.0.1"}
    trainers = [launch(run, standins, port, NODE_ROLE="training", VLLM_SERVER_HOST="127.0.0.1",
                       **({"MACHINE_RANK": str(r)} if ranks else {}), **ranks) for r in range(nodes - 1)]
    server = None
    try:
        time.sleep(3)
        assert all(t.poll() is None for t in trainers) and not (standins / "train.args").exists()  # waiting
        server = launch(run, standins, port, NODE_ROLE="generation", HEALTHY_AFTER_S="1")
        for t in trainers:
            out, _ = t.communicate(timeout=120)
            assert t.returncode == 0 and "vLLM is healthy; training on GPUs 0,1,2,3,4,5,6,7" in out, out
        started = sorted((standins / "train.args.every-node").read_text().splitlines())
        gpus = "0,1,2,3,4,5,6,7 launch --config_file accelerate.yaml"
        if nodes == 2:
            assert started == [f"{gpus} train.py --vllm-server-host 127.0.0.1"]
        else:
            assert started == [f"{gpus} --machine_rank {r} --main_process_ip 127.0.0.1 train.py --vllm-server-host "
                               "127.0.0.1" for r in range(nodes - 1)]
        assert server.poll() is None   # the generation node serves until it is stopped
        said = said_until(server, "vLLM is healthy on port", timeout_s=120)   # its own health check, not only theirs
        os.kill(server.pid, signal.SIGTERM)
        out, _ = server.communicate(timeout=120)
        out = said + out
        assert server.returncode == 143 and "vLLM is healthy on port" in out and "stopping the vLLM server" in out, out
        assert server_gone(standins)
    finally:
        for p in [*trainers, server]:
            if p is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGKILL)


def test_a_training_node_gives_up_on_a_server_that_never_answers(workspace, standins):
    port = free_port()
    run = server_run(workspace, {"accelerator": "gpu", "num_gpus": 8, "num_nodes": 2}, port=port)
    p = launch(run, standins, port, NODE_ROLE="training", VLLM_SERVER_HOST="127.0.0.1", VLLM_HEALTH_TIMEOUT_S="3")
    out, _ = p.communicate(timeout=60)
    assert p.returncode == 1 and f"server at http://127.0.0.1:{port}/health was not healthy after 3s" in out, out
    assert not (standins / "train.args").exists()


def test_a_generation_node_whose_server_stops_fails(workspace, standins):
    """The stand-in server is killed after it was healthy: node 0's launch.sh says so and exits 1 (slurm.sh then
    stops the training nodes)."""
    port = free_port()
    run = server_run(workspace, {"accelerator": "gpu", "num_gpus": 8, "num_nodes": 2}, port=port)
    p = launch(run, standins, port, NODE_ROLE="generation", HEALTHY_AFTER_S="0.5")
    try:
        seen = []
        while not any("vLLM is healthy on port" in line for line in seen):
            seen.append(p.stdout.readline())
            assert seen[-1], "".join(seen)   # launch.sh ended before it said the server was healthy
        os.kill(int((standins / "vllm.pid").read_text()), signal.SIGKILL)
        out, _ = p.communicate(timeout=60)
        assert p.returncode == 1 and "the vLLM server exited (status 137)" in out, "".join(seen) + out
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)
