"""When the sandbox is strong enough to score: the isolation it must have, and the explicit opt-out.

Scoring needs, in every mode, the seccomp filter (it denies every socket family but AF_UNIX, AF_VSOCK
included, and ptrace, the keyring, namespaces), and then either the namespace mode (a PID namespace, a
network namespace and the file-system jail) or the unprivileged layers that hold inside a default container:
Landlock for files, something that keeps the program's signals and ``/proc`` reads off the trainer (a uid of
its own, or Landlock's scoping, Linux >= 6.12), and the sweep that kills whatever the program leaves running.
Without those the sandbox refuses to score (``SandboxError``) unless the caller accepts degraded isolation
explicitly (``allow_degraded_isolation``), which the reward records in its notes and so in the inspection
artifact, where the gate shows it.
"""

from __future__ import annotations

NAMESPACE_MODE = frozenset({"pidns", "netns", "fs_jail", "seccomp"})


def isolation_problems(layers) -> list[str]:
    """What the isolation ``layers`` lack for scoring (empty: enough)."""
    have = set(layers)
    if NAMESPACE_MODE <= have:
        return []
    problems = []
    if "seccomp" not in have:
        problems.append("no seccomp filter (sockets other than AF_UNIX, AF_VSOCK included, ptrace and the keyring "
                        "stay open)")
    if "fs_jail" not in have and "landlock_fs" not in have:
        problems.append("no file-system jail and no Landlock (the program can read the tests, the data and the "
                        "trainer's files)")
    if not {"pidns", "sweep"} & have:
        problems.append("no PID namespace and no sweep of the program's processes (/proc cannot be walked): a "
                        "daemon it starts outlives it")
    if "fs_jail" not in have and "metadata_frozen" not in have:
        problems.append("no file-system jail and the mode, owner, times and extended attributes of files outside the "
                        "working directory are not frozen (the program can chmod the trainer's checkpoints)")
    if not {"uid_drop", "pidns", "landlock_scope"} & have:
        problems.append("no uid of its own, no PID namespace and no Landlock scoping (the program can signal the "
                        "trainer and read its /proc)")
    return problems


def refusal(problems: list[str], layers) -> str:
    """The SandboxError message: what is missing, what is there, and the ways out."""
    return (
        "the sandbox cannot isolate programs on this machine: " + "; ".join(problems)
        + f". Layers available here: {', '.join(layers) or 'none'}. Fix: run where unprivileged user namespaces "
        "are allowed (or as root outside a restricted container), or on Linux >= 6.12 with Landlock enabled, with "
        "libseccomp2 and pyseccomp installed; or accept degraded isolation explicitly with the unit_tests "
        "parameter allow_degraded_isolation: true (brief params, or --option allow_degraded_isolation=true), "
        "which the inspection artifact records and the gate shows"
    )
