"""The sandbox for model-written code, used by the ``unit_tests`` reward (DESIGN.md §5).

Each execution is a fresh process forked from a warm zygote, with: wall-clock and CPU limits, address-space,
process-count and file-size limits, its own empty working directory, a scrubbed environment, a network
namespace (no network), its own PID, mount and IPC namespaces, a read-only file-system jail that hides
everything but the system and Python directories, a uid of its own (when run as root), no-new-privs, and
the whole process tree killed and swept afterwards. Which of these are in effect depends on the machine:
``isolation_layers()`` says, and every verdict carries the layers of its own run.

The verdict is decided in this process. For ``assert CALL == EXPECTED`` style tests and stdin/stdout cases
the untrusted process never sees the expected values: it only returns plain-data values (or prints), so
early exits, patched builtins, always-equal objects, fake "PASSED" prints and reading the test files earn
nothing. What is covered / not covered:

- covered: the layers above; asserts of the forms ``==``, ``!=``, ``is None/True/False``, ``math.isclose``,
  bare and negated calls; stdin/stdout comparison (trailing whitespace per line ignored).
- weaker: other asserts (the whole condition is evaluated inside the sandbox) and test-code strings (run
  inside the sandbox; "no exception" passes, which a hostile program can forge).
- not covered: kernel exploits and side channels, GPU access, CPU/memory contention between programs that
  run at once, and - without root or user namespaces - the namespace, jail and uid layers.
"""

from __future__ import annotations

from ._limits import SandboxLimits
from ._run import run_unit_tests, run_unit_tests_batch
from ._verdict import UnitTestVerdict

__all__ = ["SandboxLimits", "UnitTestVerdict", "isolation_layers", "run_unit_tests", "run_unit_tests_batch"]


def isolation_layers() -> tuple[str, ...]:
    """The isolation layers in effect on this machine, found by running a trivial program in the sandbox.

    Raises:
        SandboxError: the sandbox cannot run even a trivial program correctly.
    """
    from ..errors import SandboxError

    verdict = run_unit_tests("x = 1", ["assert x == 1", "assert x != 2"])
    if verdict.passed != verdict.total:
        raise SandboxError(f"the sandbox self-check failed: {verdict.reason}")
    return verdict.layers
