"""GPU classes and devices: usable memory and memory bandwidth.

A *GPU class* (``"24GB"``, ``"80GB"``, ``"dgx-spark"``…) is what a fit verdict is given for; its memory is
that of its smallest member, as ``nvidia-smi`` reports it. A *device* (``"h100"``) adds the bandwidth that
bounds decoding. Bandwidths are the vendors' datasheet peaks (TB/s = 1e12 bytes/s).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from grpo_rlvr.errors import ConfigError

GIB = 1024**3


@dataclass(frozen=True)
class Device:
    key: str
    name: str
    memory_gib: float      # total device memory as nvidia-smi reports it (MiB / 1024)
    bandwidth_tbs: float   # peak memory bandwidth, 1e12 bytes/s
    unified: bool = False  # memory shared with the CPU and the OS


@dataclass(frozen=True)
class GpuType:
    key: str
    memory_gib: float
    devices: tuple[str, ...]
    note: str = ""


DEVICES: dict[str, Device] = {
    "rtx4090": Device("rtx4090", "RTX 4090", 24564 / 1024, 1.0),
    "l4": Device("l4", "L4", 23034 / 1024, 0.3),
    "a100-40": Device("a100-40", "A100 40GB", 40960 / 1024, 1.55),
    "l40s": Device("l40s", "L40S", 46068 / 1024, 0.864),
    "a6000": Device("a6000", "RTX A6000", 49140 / 1024, 0.768),
    "a100-80": Device("a100-80", "A100 80GB", 81920 / 1024, 2.0),
    "h100": Device("h100", "H100 SXM 80GB", 81559 / 1024, 3.35),
    "h200": Device("h200", "H200 141GB", 143771 / 1024, 4.8),
    # 128 GB (1e9) of LPDDR5x shared by CPU and GPU; ~10 GiB is left to the OS and the host side of the run.
    "dgx-spark": Device("dgx-spark", "DGX Spark (GB10)", 128e9 / GIB - 10.0, 0.273, unified=True),
}


def _gpu_type(key: str, devices: tuple[str, ...], note: str = "") -> GpuType:
    return GpuType(key, min(DEVICES[d].memory_gib for d in devices), devices, note)


GPU_TYPES: dict[str, GpuType] = {
    "24GB": _gpu_type("24GB", ("rtx4090", "l4")),
    "40GB": _gpu_type("40GB", ("a100-40",)),
    "48GB": _gpu_type("48GB", ("l40s", "a6000")),
    "80GB": _gpu_type("80GB", ("a100-80", "h100")),
    "141GB": _gpu_type("141GB", ("h200",)),
    "dgx-spark": _gpu_type("dgx-spark", ("dgx-spark",),
                           note="unified memory: CPU offload takes from the same 128 GB, so it frees nothing"),
}


def resolve_gpu(name: str) -> GpuType:
    """A GPU class from its key (``"80GB"``) or a device key (``"h100"``, which maps to its class).

    Raises:
        ConfigError: unknown name, with the closest matches and every choice.
    """
    key = str(name).strip()
    for table in (GPU_TYPES, DEVICES):
        for k in table:
            if k.lower() == key.lower():
                if table is GPU_TYPES:
                    return GPU_TYPES[k]
                return next(g for g in GPU_TYPES.values() if k in g.devices)
    choices = list(GPU_TYPES) + list(DEVICES)
    close = difflib.get_close_matches(key, choices, n=2)
    hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    raise ConfigError(f"Unknown GPU {name!r}.{hint} Available: {', '.join(choices)}.")


def resolve_devices(name: str) -> tuple[Device, ...]:
    """The devices a name stands for: one device, or every device of a class."""
    key = str(name).strip().lower()
    if key in DEVICES:
        return (DEVICES[key],)
    return tuple(DEVICES[d] for d in resolve_gpu(name).devices)
