"""Resuming a run trained by several CPU processes.

transformers loads a distributed run's optimizer state with ``map_location=args.device``, which is ``cpu:0`` on
every rank of a multi-process CPU run (accelerate numbers CPU devices by the local rank modulo torch's CPU device
count, 1), and torch 2.13 knows no location ``cpu:N``: ``torch.load`` raises "don't know
how to restore data location ... (tagged with cpu:0)" and ``--resume`` fails on every rank. A CPU storage read for
``cpu:N`` is the CPU storage itself, so this registers that with torch's own extension point for storage
locations (``torch.serialization.register_package``). Nothing changes for ``cpu`` or GPU locations.
"""

from __future__ import annotations

import re

_CPU_INDEX = re.compile(r"cpu:\d+")
_registered = False


def _no_tag(storage) -> None:
    return None   # saving is unchanged: torch's own taggers name the location


def _cpu_index(storage, location: str):
    return storage if _CPU_INDEX.fullmatch(location) else None


def allow_cpu_index_locations() -> None:
    """Let ``torch.load(..., map_location="cpu:N")`` load onto the CPU (once per process)."""
    global _registered
    if not _registered:
        import torch.serialization

        torch.serialization.register_package(99, _no_tag, _cpu_index)
        _registered = True
