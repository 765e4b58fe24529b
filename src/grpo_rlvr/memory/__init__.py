"""GRPO memory model: peak GPU memory per device for a TRL GRPO run, fit verdicts, tactics, decode time.

Pure Python (no torch import). Sizes are GiB (2**30 bytes). Use::

    from grpo_rlvr.memory import MemoryInputs, estimate_memory, memory_report, format_memory_report
    print(format_memory_report(memory_report(MemoryInputs(size="7B", method="lora"), "80GB")))

Modules: ``shapes`` (size classes; a shape and its config.json reader are ``grpo_rlvr.model_shape``'s),
``hardware`` (GPU classes, bandwidths), ``estimate`` (the terms), ``tactics`` (what makes it fit), ``decode``
(bandwidth-bound generation time), ``report`` (CLI report and tables), ``anchors`` (published figures compared
with ours).
See references/grpo-memory.md for the assumptions and the comparison with Unsloth and verl.
"""

from grpo_rlvr.memory.anchors import ANCHORS, compare_anchors
from grpo_rlvr.memory.decode import decode_time
from grpo_rlvr.memory.estimate import MemoryEstimate, MemoryInputs, estimate_memory, param_counts
from grpo_rlvr.memory.hardware import DEVICES, GPU_TYPES, resolve_gpu
from grpo_rlvr.memory.report import (
    brief_memory,
    format_memory_report,
    inputs_from_brief,
    memory_report,
    memory_table,
    render_table_markdown,
)
from grpo_rlvr.memory.shapes import SIZE_CLASSES
from grpo_rlvr.memory.tactics import Tactic, fit_tactics
from grpo_rlvr.model_shape import ModelShape, shape_from_config

__all__ = [
    "ANCHORS",
    "DEVICES",
    "GPU_TYPES",
    "SIZE_CLASSES",
    "MemoryEstimate",
    "MemoryInputs",
    "ModelShape",
    "Tactic",
    "brief_memory",
    "compare_anchors",
    "decode_time",
    "estimate_memory",
    "fit_tactics",
    "format_memory_report",
    "inputs_from_brief",
    "memory_report",
    "memory_table",
    "param_counts",
    "render_table_markdown",
    "resolve_gpu",
    "shape_from_config",
]
