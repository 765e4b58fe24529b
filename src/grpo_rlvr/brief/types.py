"""The typed, frozen Brief that every phase after ``load_brief`` takes."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from grpo_rlvr.records.unscorable import DEFAULT_MAX_UNSCORABLE


@dataclass(frozen=True)
class ModelSpec:
    name_or_path: str        # as written in the brief
    resolved: str            # an absolute path for local models, the hub id otherwise
    is_local: bool
    revision: str | None
    dtype: str | None        # as written (None: not set); training and sampling load with grpo.model_init_kwargs
    trust_remote_code: bool
    is_moe: bool
    context_length: int | None
    facts: Any = None        # brief.model_probe.ModelFacts: size, MoE, vision and where each came from
    adapter_base: Any = None  # brief.model_probe.AdapterBase when ``resolved`` is a PEFT adapter folder, else None
    attn_implementation: str | None = None  # as written; it reaches from_pretrained through grpo.model_init_kwargs

    @property
    def base_path(self) -> str:
        """What ``from_pretrained`` loads first: the adapter's base for an adapter folder, else ``resolved``."""
        return self.adapter_base.resolved if self.adapter_base else self.resolved

    @property
    def base_revision(self) -> str | None:
        """The revision of ``base_path``: the one adapter_config.json names for an adapter's hub base."""
        return self.adapter_base.revision if self.adapter_base else self.revision


@dataclass(frozen=True)
class DatasetSpec:
    path: str
    resolved: str
    is_local: bool
    split: str
    prompt_column: str
    columns: MappingProxyType     # reward argument -> dataset column
    eval_path: str | None         # held-out prompts, as written in the brief (None: no evaluation)
    eval_resolved: str | None
    eval_is_local: bool
    eval_split: str               # the split of a hub eval dataset
    prompt: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))  # system / template
    subset: str | None = None     # a hub dataset's configuration name (train and eval)
    revision: str | None = None   # a hub dataset's branch, tag or commit (None: main, pinned at inspect)


@dataclass(frozen=True)
class RewardSpec:
    name: str
    weight: float
    kind: str | None
    params: MappingProxyType


@dataclass(frozen=True)
class Hardware:
    """The machines a run uses (``brief.layout`` resolves the defaults and refuses idle GPUs).

    One node: GPUs 0..vllm_gpus-1 serve vLLM (server mode), the rest train. Several nodes with ``vllm_gpus`` (server
    mode): node 0 is the generation node, its ``vllm_gpus`` (all its GPUs) serve vLLM, and nodes 1.. train on every
    GPU. Several nodes without: every node trains on every GPU."""

    accelerator: str   # "cpu" | "gpu"
    num_gpus: int      # GPUs per node, all of them (0 on CPU)
    num_nodes: int     # all nodes, the generation node included
    vllm_gpus: int     # GPUs of the vLLM server (server mode; 0 otherwise): on node 0, GPUs 0..vllm_gpus-1
    gpu_type: str | None
    sharding: str      # none | ddp | zero2 | zero3 | fsdp2
    cpu_processes: int = 1  # training processes on CPU (DDP over gloo)
    vllm_tensor_parallel: int = 1  # the server's split: tensor parallel × data parallel = vllm_gpus
    vllm_data_parallel: int = 1

    @property
    def generation_node(self) -> bool:
        """Node 0 only generates (``vllm serve``) and the other nodes train: server mode on several nodes."""
        return self.accelerator == "gpu" and self.num_nodes > 1 and self.vllm_gpus > 0

    @property
    def training_nodes(self) -> int:
        return self.num_nodes - 1 if self.generation_node else self.num_nodes

    @property
    def training_gpus_per_node(self) -> int:
        """GPUs that train on each training node (accelerate wants the same count on every machine)."""
        if self.accelerator == "cpu":
            return 0
        return self.num_gpus if self.generation_node else self.num_gpus - self.vllm_gpus

    @property
    def num_processes(self) -> int:
        """Training processes across all nodes, the training world size (one per training GPU; on CPU as set)."""
        if self.accelerator == "cpu":
            return self.cpu_processes
        return self.training_gpus_per_node * self.training_nodes


@dataclass(frozen=True)
class Variant:
    name: str
    diagnosis: str | None
    automatic: bool      # applied by the toolkit (GSPO for MoE), not asked for


@dataclass(frozen=True)
class InspectionSpec:
    """How ``inspect`` draws the samples a person reviews, and what the gate asks of that review."""

    samples: int                    # 50..100 samples in the artifact
    prompts: int                    # distinct prompts drawn from the dataset
    judge_min_kappa: float          # a rubric_judge used as correctness must agree with the person this well
    allowed_signers: Path | None    # ``inspection.signing.allowed_signers`` resolved; None: signing not asked


@dataclass(frozen=True)
class PreflightSpec:
    """How ``preflight`` measures the base success rate: k samples on each of ``prompts`` prompts."""

    prompts: int
    k: int                          # num_generations unless ``preflight.k`` is set
    seed: int


DYNAMIC_SAMPLING_DEFAULTS = {"max_rounds": 3, "tolerance": 1e-6}  # what `dynamic_sampling: {}` means


@dataclass(frozen=True)
class ToolsSpec:
    """The tools the model may call during its rollouts (TRL's ``tools=`` and ``environment_factory=``)."""

    functions: tuple[str, ...] = ()        # user functions: ``module:function`` or ``file.py:function``
    environment: str | None = None         # a class with TRL's environment contract: ``module:Class``, ``file.py:Class``
    python: dict | None = None             # the built-in sandboxed ``python`` tool's limits; None: not offered
    call_timeout_s: float | None = 30.0    # a call past this is the machinery's failure: the rollout is not scored
    concurrency: int = 16                  # rollouts whose calls run at once in a turn (trainer.concurrent_tool_calls)

    def to_dict(self) -> dict:
        return {"functions": list(self.functions), "environment": self.environment,
                "python": None if self.python is None else dict(self.python), "call_timeout_s": self.call_timeout_s,
                "concurrency": self.concurrency}


@dataclass(frozen=True)
class DynamicSampling:
    """DAPO's dynamic sampling (brief section ``dynamic_sampling``; see ``trainer/dynamic_sampling.py``)."""

    max_rounds: int      # extra generation rounds per generation batch spent refilling dropped groups
    tolerance: float     # a group whose combined rewards all lie within this of each other carries no signal
    origin: str          # "brief" | "variant:<name>"

    def to_dict(self) -> dict:
        return {"max_rounds": self.max_rounds, "tolerance": self.tolerance}


WATCH_DEFAULTS = {"stop_on": "critical", "every": 1, "window": 3,   # the brief's ``watch`` section when absent
                  "max_unscorable": DEFAULT_MAX_UNSCORABLE}


@dataclass(frozen=True)
class ReviewAuditSpec:
    """The review audit inside training (brief section ``audit``; see ``audit/live.py``): its family-wise
    false-alarm rate, whether a divergence stops the run, how many first generation batches it compares."""

    alpha: float = 1e-3
    stop_on: str = "diverged"
    batches: int = 1
    origin: str = "recipe"      # "brief" when the brief has an ``audit`` section

    def to_dict(self) -> dict:
        return {"alpha": self.alpha, "stop_on": self.stop_on, "batches": self.batches, "origin": self.origin}

    def bound(self) -> dict | None:
        """What the review is bound to: the section as resolved when the brief has one (None: the defaults)."""
        return None if self.origin == "recipe" else {k: v for k, v in self.to_dict().items() if k != "origin"}


@dataclass(frozen=True)
class Watch:
    """The watchdog inside training (brief section ``watch``; see ``diagnosis/watchdog.py``)."""

    stop_on: str = "critical"   # "critical": stop on a persistent stopping finding; "never": only record it
    every: int = 1              # check every this many training logs
    window: int = 3             # consecutive checks a stopping finding must be present at
    max_unscorable: float = DEFAULT_MAX_UNSCORABLE  # share of training samples left unscored above which it stops

    def to_dict(self) -> dict:
        return {"stop_on": self.stop_on, "every": self.every, "window": self.window,
                "max_unscorable": self.max_unscorable}


@dataclass(frozen=True)
class Brief:
    """A validated brief. ``grpo`` holds the resolved GRPOConfig kwargs (TRL field names)."""

    path: Path
    base_dir: Path
    name: str
    model: ModelSpec
    dataset: DatasetSpec
    rewards: tuple[RewardSpec, ...]
    hardware: Hardware
    method: str
    lora: MappingProxyType
    grpo: MappingProxyType
    origin: MappingProxyType         # GRPOConfig key -> "recipe" | "hardware" | "variant:<name>" | "brief"
    variant: Variant | None
    inspection: InspectionSpec
    preflight: PreflightSpec
    output_dir: Path
    fingerprint: str                 # identity: model, dataset, rewards, sampling
    warnings: tuple[str, ...] = ()   # non-fatal findings (validate prints them)
    lora_origin: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))  # lora key -> origin
    # The YAML as the user wrote it, recorded verbatim in brief.lock.json ("resolved"): no phase reads settings from
    # the Brief's copy, only the lock writer does (tests/test_layers.py); diagnose reads the lock's copy of a run.
    as_written: MappingProxyType = field(repr=False, default_factory=lambda: MappingProxyType({}))
    dynamic_sampling: DynamicSampling | None = None  # None: off (plain TRL sampling)
    sampling_engine: str = "auto"    # preflight/inspect/evaluation: auto | vllm | transformers (rollout/road.py)
    prompt_examples: tuple = ()      # ``prompt.examples``: {row, correct, wrong, malformed} that validate scores
    base_run_diagnosis: str | None = None  # ``base_run.diagnosis`` as written (relative to base_dir)
    lora_section: bool = False       # the brief has a ``lora:`` section (even an empty one)
    # ``deviations:``: grpo key -> the brief's stated reason for departing from the recipe before a base run
    stated_deviations: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    watch: Watch = Watch()           # the watchdog inside training
    tools: ToolsSpec | None = None   # tools the model calls during rollouts (None: a single turn, no tools)
    audit: ReviewAuditSpec = ReviewAuditSpec()   # the review audit inside training

    @property
    def overrides(self) -> dict[str, Any]:
        """The GRPOConfig values the brief's ``grpo:`` section sets itself."""
        return {k: v for k, v in self.grpo.items() if self.origin.get(k) == "brief"}


    @property
    def reward_weights(self) -> list[float]:
        return [r.weight for r in self.rewards]

    @property
    def vllm_mode(self) -> str | None:
        """How training generates: ``"colocate"`` (TRL's default), ``"server"``, or None without vLLM."""
        return self.grpo.get("vllm_mode", "colocate") if self.grpo.get("use_vllm") else None

    def sampling(self) -> dict[str, Any]:
        """The sampling parameters training uses (inspection and preflight sample the same way)."""
        g = self.grpo
        return {"temperature": g.get("temperature", 1.0), "top_p": g.get("top_p", 1.0),
                "max_completion_length": g.get("max_completion_length", 256)}
