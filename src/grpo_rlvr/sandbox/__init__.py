"""The sandbox for model-written code, used by the ``unit_tests`` reward (DESIGN.md §5).

Each execution is a fresh process forked from a warm zygote (no Python start-up per program), with:
wall-clock and CPU limits; address-space, process-count and file-size limits; its own empty working
directory; a scrubbed environment; a network namespace (no network); its own PID and IPC namespaces; a
read-only file-system jail that shows only the system and Python directories (no home, no datasets, no
``/proc``); a uid of its own (when run as root); no-new-privs; and the whole process tree killed and swept
afterwards. Which layers are in effect depends on the machine: ``isolation_layers()`` says, and every
verdict carries the layers of its own run. Layer names: process, pidns, netns, ipcns, fs_jail, tmpdir,
env_scrubbed, uid_drop, no_new_privs, rlimit_cpu, rlimit_as, rlimit_nproc, rlimit_fsize, pgroup_kill, sweep.

The verdict is decided in this process. For ``assert CALL == EXPECTED`` style tests and stdin/stdout cases
the untrusted process never sees the expected values: it only returns plain-data values (or prints), so
early exits, patched builtins, always-equal objects, fake "PASSED" prints and reading the test files earn
nothing. What is covered / not covered:

- covered: the layers above; asserts of the forms ``==``, ``!=``, ``is None/True/False``, ``math.isclose``,
  bare and negated calls (types compared strictly: ``True != 1``, ``1 != 1.0``, numpy scalars are not plain
  data); stdin/stdout comparison (trailing whitespace per line ignored, exit code 0 required).
- weaker: other asserts (the whole condition is evaluated inside the sandbox, which can read it) and
  test-code strings (run inside the sandbox; "no exception" passes, which a hostile program can forge).
- not covered: kernel exploits and side channels, GPU access, CPU/memory contention between programs that
  run at once, the test data itself (``tests`` are trusted), and - on machines without root or user
  namespaces, or other than Linux - the namespace, jail and uid layers (then reported missing).
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
