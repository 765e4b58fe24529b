"""``SandboxLimits``: the resource limits of one sandboxed execution, validated when built.

Covered: wall time, CPU time, address space, process count and captured output size.
Not covered: disk (the working directory is a size-capped tmpfs where mounts are allowed, see ``_jail``),
GPU, and CPU contention between programs that run in parallel.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

# Below this the forked interpreter itself does not fit in its address space (it inherits the zygote's).
MIN_MEMORY_MB = 128


@dataclass(frozen=True)
class SandboxLimits:
    """Limits for one execution of a program (one process tree).

    Args:
        timeout_s: wall-clock limit of one execution, in seconds. For stdin/stdout tests each case is one
            execution; for assert tests all asserts of a program share one execution.
        cpu_s: CPU-time limit (``RLIMIT_CPU``), rounded up to whole seconds by the kernel interface.
        memory_mb: address-space limit (``RLIMIT_AS``) in MiB, at least 128.
        max_processes: process/thread limit (``RLIMIT_NPROC``), counting the program itself.
        max_output_bytes: the program is killed once its stdout + stderr (or its result channel) exceed this.

    Raises:
        ValueError: a field has the wrong type or is out of range; the message names the field.
    """

    timeout_s: float = 5.0
    cpu_s: float = 5.0
    memory_mb: int = 512
    max_processes: int = 64
    max_output_bytes: int = 1_000_000

    def __post_init__(self) -> None:
        problems = []
        for name in ("timeout_s", "cpu_s"):
            value = getattr(self, name)
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            if not ok or not math.isfinite(value) or not 0 < value <= 3600:
                problems.append(f"SandboxLimits.{name} must be a number of seconds in (0, 3600], got {value!r}")
        for name, low in (("memory_mb", MIN_MEMORY_MB), ("max_processes", 1), ("max_output_bytes", 1024)):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                problems.append(f"SandboxLimits.{name} must be an int >= {low}, got {value!r}")
        if problems:
            raise ValueError("; ".join(problems))

    def as_dict(self) -> dict:
        """The limits as plain data, to send to the zygote."""
        return asdict(self)
