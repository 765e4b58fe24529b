"""vLLM server mode with a real server, up to the CUDA boundary.

A GPU server-mode brief (2 GPUs: one serves vLLM, one trains) is rendered here, where vLLM's CPU build ignores
``CUDA_VISIBLE_DEVICES``. Its server command (the one launch.sh runs) becomes healthy and TRL's own client
generates from it; the one step that needs CUDA is the trainer joining the server's NCCL weight-transfer group,
and there the run stops with a message naming the fix. launch.sh tears the real server down (its API process and
vLLM's engine process) when the trainer fails, and on SIGINT or SIGTERM while the server is still starting.

On CPU the server's KV cache is set explicitly (``VLLM_CPU_KVCACHE_SPACE=1``, GiB): its default reserves 90% of the
machine's RAM, which a shared CI box does not have free.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from artifacts import make_artifact
from grpo_rlvr.run.plan import shell_join
from vllm_lane.conftest import make_workspace

HEALTH_DEADLINE_S = 600   # a ceiling for a loaded CI box, not a timing assumption: the waits poll a condition
SERVER_ENV = {"VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_LOGGING_LEVEL": "WARNING"}


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_run(root: Path, model: Path) -> tuple[Path, int]:
    """A rendered, gated server-mode run whose server listens on a free port (the brief's vllm_server_port)."""
    from grpo_rlvr.run.render import render

    port = free_port()
    ws = make_workspace(root, model, hardware={"accelerator": "gpu", "num_gpus": 2, "vllm_gpus": 1},
                        grpo={"max_steps": 3, "per_device_train_batch_size": 16, "vllm_server_port": port,
                              "bf16": False})  # a GPU brief whose trainer runs here, on CPU
    make_artifact(ws / "brief.yaml", ws / "out" / "inspection")
    run = render(ws / "brief.yaml").dir
    assert f"VLLM_PORT={port}" in (run / "launch.sh").read_text()
    return run, port


def healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def group_members(pgid: int) -> list[int]:
    """Live processes whose process group is ``pgid`` (from /proc)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                out.append(int(stat.parent.name))
    return out


def wait_until(condition, what: str, deadline_s: float = HEALTH_DEADLINE_S, poll_s: float = 0.5):
    end = time.monotonic() + deadline_s
    while not condition():
        assert time.monotonic() < end, f"gave up waiting: {what}"
        time.sleep(poll_s)


@pytest.fixture(scope="module")
def run_and_port(tmp_path_factory, warm_model_dir):
    return server_run(tmp_path_factory.mktemp("server"), warm_model_dir)


@pytest.fixture(scope="module")
def server(run_and_port):
    """One real server for the client tests, started with the command launch.sh runs (from the run's lock)."""
    run, port = run_and_port
    plan = json.loads((run / "brief.lock.json").read_text())["launch"]
    cmd = f"{shell_join(plan['vllm_argv'])} --port {port}"
    log = (run / "test_server.log").open("w")
    env = {**os.environ, **SERVER_ENV, "PATH": f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}"}
    p = subprocess.Popen(["bash", "-c", cmd], stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        wait_until(lambda: healthy(port) or p.poll() is not None, "the vLLM server to become healthy")
        assert p.poll() is None, (run / "test_server.log").read_text()[-3000:]
        yield f"http://127.0.0.1:{port}"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            p.wait(timeout=30)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)
        log.close()


@pytest.mark.e2e
def test_trl_client_generates_from_the_rendered_server_command(server, warm_model_dir):
    from transformers import AutoTokenizer
    from trl.generation.vllm_client import VLLMClient

    tok = AutoTokenizer.from_pretrained(warm_model_dir)
    prompts = [tok.apply_chat_template([{"role": "user", "content": f"{a}+{b}="}], add_generation_prompt=True,
                                       tokenize=True) for a, b in ((2, 3), (4, 4))]
    prompts = [list(p["input_ids"] if hasattr(p, "keys") else p) for p in prompts]
    client = VLLMClient(base_url=server, connection_timeout=60)
    out = client.generate(prompts, n=4, max_tokens=16, temperature=1.0)
    assert len(out["completion_ids"]) == 8 and out["prompt_ids"] == prompts
    assert all(1 <= len(c) <= 16 for c in out["completion_ids"])
    assert [len(lp) for lp in out["logprobs"]] == [len(c) for c in out["completion_ids"]]
    assert all(v[0] <= 0.0 for lp in out["logprobs"] for v in lp), "log-probabilities are ≤ 0"
    texts = [tok.decode(c, skip_special_tokens=True) for c in out["completion_ids"]]
    assert sum("<answer>" in t for t in texts) >= 1, texts   # the warmed-up model writes the format, sometimes


@pytest.mark.e2e
def test_weight_sync_is_the_one_step_that_needs_cuda(server):
    """The client reaches the server and reads its weight-transfer setup (the rendered --weight-transfer-config
    holds); only joining the NCCL group fails, and that refusal becomes a message naming the fix."""
    from trl.generation.vllm_client import VLLMClient

    from grpo_rlvr.trainer.vllm_cpu import refusal_message

    client = VLLMClient(base_url=server, connection_timeout=60)
    assert client.get_server_info()["weight_transfer_config"] is not None
    assert client.get_world_size() == 1
    with pytest.raises(NotImplementedError) as err:
        client.init_communicator(device="cpu")
    message, code = refusal_message(err.value)
    assert "vllm_mode: colocate" in message and "NCCL" in message and code == 1


def launcher(run: Path, command: list[str]) -> subprocess.Popen:
    env = {**os.environ, **SERVER_ENV, "PATH": f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}",
           "VLLM_HEALTH_TIMEOUT_S": str(HEALTH_DEADLINE_S)}
    return subprocess.Popen(command, cwd=run, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


@pytest.mark.e2e
def test_grpo_rlvr_train_stops_at_weight_sync_with_the_fix_and_tears_the_server_down(tmp_path, warm_model_dir):
    run, _ = server_run(tmp_path, warm_model_dir)
    p = launcher(run, [sys.executable, "-m", "grpo_rlvr", "train", str(run)])
    try:
        out, _ = p.communicate(timeout=2 * HEALTH_DEADLINE_S)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)
    assert "launch.sh: vLLM is healthy" in out, out[-4000:]
    assert "Error: vLLM server mode: the server is up and generates, but the trainer cannot send it new weights" \
        in out, out[-4000:]
    assert "Traceback" not in out, out[-4000:]
    assert p.returncode == 1
    stopped = re.search(r"stopping the vLLM server \(process group (\d+)\)", out)
    assert stopped, out[-2000:]
    wait_until(lambda: not group_members(int(stopped.group(1))), "the server's processes to exit", 60)


@pytest.mark.e2e
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_launch_sh_stops_a_starting_server_on_a_signal(tmp_path, warm_model_dir, sig):
    """While the real server is still starting (its API process and vLLM's engine process both up), a signal to
    launch.sh alone stops every process of the server."""
    run, port = server_run(tmp_path, warm_model_dir)
    p = launcher(run, ["bash", str(run / "launch.sh")])
    try:
        def server_group() -> int | None:
            for child in subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True).stdout.split():
                with contextlib.suppress(OSError):
                    if b"vllm.entrypoints" in Path(f"/proc/{child}/cmdline").read_bytes():
                        return os.getpgid(int(child))
            return None

        wait_until(lambda: server_group() is not None, "launch.sh to start the server")
        pgid = server_group()
        wait_until(lambda: len(group_members(pgid)) >= 2 or healthy(port), "vLLM's engine process to start")
        os.kill(p.pid, sig)
        p.wait(timeout=120)
        wait_until(lambda: not group_members(pgid), f"the server's processes to exit after {sig.name}", 60)
        assert p.returncode == (130 if sig == signal.SIGINT else 143)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)


@pytest.mark.e2e  # its fixture renders the run for the warmed model (tests/conftest.py: TRAINING_FIXTURES)
def test_rendered_server_command_is_the_module_entry_point(run_and_port):
    """vLLM's CPU build has no `vllm serve` that starts (its console script looks up a package named `vllm`);
    the module entry point works with both builds, and is what launch.sh runs."""
    run, _ = run_and_port
    plan = json.loads((run / "brief.lock.json").read_text())["launch"]
    assert "python -m vllm.entrypoints.openai.api_server --model " in shell_join(plan["vllm_argv"])
    assert "vllm serve" not in (run / "launch.sh").read_text()
    assert yaml.safe_load((run / "grpo_config.yaml").read_text())["vllm_mode"] == "server"
