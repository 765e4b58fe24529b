"""``SandboxLimits``: the resource limits of one sandboxed sample, validated when built.

Covered: wall time (per execution, and per sample across its executions), CPU time, memory (per process and
for the whole process tree), process count and captured output size.
Not covered: disk (the working directory is a size-capped tmpfs where mounts are allowed, see ``isolation.jail``),
GPU, and CPU contention between programs that run in parallel.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

# Below this the forked interpreter itself does not fit in its address space (it inherits the template's).
MIN_MEMORY_MB = 128


@dataclass(frozen=True)
class SandboxLimits:
    """Limits for one sample: each execution of its program (one process tree), and all of them together.

    Args:
        timeout_s: wall-clock limit of one execution, in seconds. For stdin/stdout tests each case is one
            execution; for assert tests all asserts of a program share one execution (its test bodies too). The
            5 s default is too short for some right programs (slow but correct, large inputs): they score 0 with
            "timed out". The ``unit_tests`` reward sets it from its ``timeout_s`` param (``cpu_s`` too).
        cpu_s: CPU-time limit (``RLIMIT_CPU``), rounded up to whole seconds by the kernel interface.
        memory_mb: in MiB, at least 128: the address space of each process (``RLIMIT_AS``), and the memory of
            the execution's whole process tree together (measured from outside, see ``isolation.tree``).
        max_processes: processes and threads of one execution together, counting the program itself (256: a
            real program's thread pool of 100 fits; a fork bomb is stopped here or by the memory cap).
        max_output_bytes: the program is killed once its stdout + stderr (or its result channel) exceed this
            (8 MB); for stdin/stdout cases, never below the case's expected output and some slack, so a right
            program's output always fits.
        sample_timeout_s: wall-clock budget of all the sample's executions together (default: twice
            ``timeout_s``); past it the sample scores 0.

    Raises:
        ValueError: a field has the wrong type or is out of range; the message names the field.
    """

    timeout_s: float = 5.0
    cpu_s: float = 5.0
    memory_mb: int = 512
    max_processes: int = 256
    max_output_bytes: int = 8_000_000
    sample_timeout_s: float | None = None

    def __post_init__(self) -> None:
        problems = []
        if self.sample_timeout_s is None and isinstance(self.timeout_s, (int, float)):
            object.__setattr__(self, "sample_timeout_s", 2.0 * self.timeout_s)
        for name, high in (("timeout_s", 3600), ("cpu_s", 3600), ("sample_timeout_s", 7200)):
            value = getattr(self, name)
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            if not ok or not math.isfinite(value) or not 0 < value <= high:
                problems.append(f"SandboxLimits.{name} must be a number of seconds in (0, {high}], got {value!r}")
        for name, low in (("memory_mb", MIN_MEMORY_MB), ("max_processes", 1), ("max_output_bytes", 1024)):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                problems.append(f"SandboxLimits.{name} must be an int >= {low}, got {value!r}")
        if problems:
            raise ValueError("; ".join(problems))

    def as_dict(self) -> dict:
        """The limits as plain data, to send to the supervisor."""
        return asdict(self)
