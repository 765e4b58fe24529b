"""CPU threads for torch: one per core this process may use, and OpenMP threads that sleep while they wait.

PyTorch's CPU kernels run on OpenMP (GNU libgomp in the pip wheels). By default an idle libgomp thread spins for
a while at every barrier before it sleeps; beside another busy process, a spinning thread burns the time slice
its partner needed, and a run on a shared machine slows several-fold (``benchmarks/bench_demo_load.py`` measures
it). ``OMP_WAIT_POLICY=PASSIVE`` makes waiting threads sleep at once. libgomp reads it once, when it loads with
torch, so it must be in the environment before torch is imported: the CLI sets it at start-up, and the
launcher, the rendered ``train.py`` and the demo pass it to every process they start. A value the user set
(``OMP_WAIT_POLICY``, ``OMP_NUM_THREADS``) is kept. Check it in a process with ``OMP_DISPLAY_ENV=VERBOSE``:
libgomp prints ``GOMP_SPINCOUNT = '0'`` under PASSIVE (300000 by default).
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

WAIT_POLICY = "OMP_WAIT_POLICY"


def passive_openmp(env: MutableMapping[str, str] = os.environ) -> MutableMapping[str, str]:
    """Set ``OMP_WAIT_POLICY=PASSIVE`` in ``env`` (``os.environ`` by default) unless it is set; returns ``env``."""
    env.setdefault(WAIT_POLICY, "PASSIVE")
    return env


def usable_cores() -> int:
    """Cores this process may run on (its affinity mask: ``taskset``, a container's cpuset), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # no affinity call on this platform
        return max(1, os.cpu_count() or 1)


def fit_torch_threads() -> int:
    """Give torch one intra-op thread per usable core, unless ``OMP_NUM_THREADS`` says otherwise (torchrun sets
    it to 1 per process). Returns the thread count torch now uses."""
    import torch

    if not os.environ.get("OMP_NUM_THREADS"):
        torch.set_num_threads(usable_cores())
    return torch.get_num_threads()
