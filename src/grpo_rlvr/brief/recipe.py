"""The skill's recipe and how a brief's GRPO settings are layered on it, each value with the layer it came from.

The layers, later over earlier: the recipe (``RECIPE``), the method's defaults (``methods.METHOD_GRPO_DEFAULTS``),
the hardware's (``hardware_defaults``), the variant's delta, the brief's own ``grpo:`` overrides, the reward
weights, and the evaluation defaults a held-out set turns on. ``validate`` prints each value's origin. The loader
checks the overrides before they are layered. Imports no torch.
"""

from __future__ import annotations

from grpo_rlvr.brief import methods
from grpo_rlvr.brief.types import Hardware, Variant
from grpo_rlvr.brief.variants import VARIANTS

# The skill's base recipe: plain GRPO (TRL 1.16 defaults loss_type to "dapo"), lr 5e-7, beta 0.01,
# num_generations 8 (a floor). Hardware-dependent keys are added by ``hardware_defaults``.
RECIPE: dict = {
    "num_generations": 8,
    "learning_rate": 5e-7,
    "beta": 0.01,
    "loss_type": "grpo",
    "per_device_train_batch_size": 8,
    "gradient_accumulation_steps": 4,
    "logging_steps": 10,
    "seed": 3407,
    "temperature": 1.0,
    "max_completion_length": 256,
    "log_completions": True,          # completions/*.parquet, read by `grpo-rlvr diagnose`
    "num_completions_to_print": 0,    # ...but no rich table on the console each log step
    "report_to": "none",
}

# What the gate asks of a rubric_judge used as the correctness reward, unless ``inspection.judge_min_kappa`` is
# set: Cohen's kappa against the reviewer's verdicts of at least this ("substantial" agreement).
DEFAULT_JUDGE_KAPPA = 0.6


def hardware_defaults(hw: Hardware) -> dict:
    """The GRPOConfig keys the hardware sets: no vLLM and no bf16 on CPU; vLLM on GPUs, in server mode when GPUs
    are set aside for it (``hardware.vllm_gpus``), else colocated with training."""
    if hw.accelerator == "cpu":
        return {"use_vllm": False, "bf16": False, "use_cpu": True, "gradient_checkpointing": False}
    mode = "server" if hw.vllm_gpus > 0 else "colocate"
    return {"use_vllm": True, "vllm_mode": mode, "bf16": True}


class Layers:
    """GRPOConfig values as they are layered, and the layer each one came from.

    ``origin`` names the layer: "recipe", "method:<name>", "hardware", "variant:<name>", "brief", "rewards" or
    "eval". A key a later layer sets keeps its first place in the order.
    """

    def __init__(self) -> None:
        self.values: dict = {}
        self.origin: dict = {}

    def put(self, source: str, values: dict) -> None:
        for key, value in values.items():
            self.values[key], self.origin[key] = value, source


def defaults(method: str, hw: Hardware, variant: Variant | None) -> Layers:
    """The layers under the brief's overrides: recipe, method, hardware, then the variant's delta."""
    layers = Layers()
    layers.put("recipe", RECIPE)
    layers.put(f"method:{method}", methods.METHOD_GRPO_DEFAULTS[method])
    layers.put("hardware", hardware_defaults(hw))
    if variant is not None:
        layers.put(f"variant:{variant.name}", VARIANTS[variant.name].delta)
    if dashboard_installed():   # trackio (pip install grpo-rlvr[dashboard]): local-first, no account
        layers.put("dashboard", {"report_to": "trackio"})
    return layers


def dashboard_installed() -> bool:
    """trackio is importable: the runs report to it unless the brief sets grpo.report_to."""
    import importlib.util

    return importlib.util.find_spec("trackio") is not None
