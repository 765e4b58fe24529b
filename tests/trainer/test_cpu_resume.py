"""A rank of a multi-process CPU run loads its checkpoint with ``map_location="cpu:N"`` (transformers passes
``args.device``); torch alone cannot. The end-to-end proof is the two-process resume in
tests/run/test_launch_distributed.py."""

from __future__ import annotations

import io
import subprocess
import sys

import torch

from grpo_rlvr.trainer.cpu_resume import allow_cpu_index_locations

LOAD = ("import io, torch\nb = io.BytesIO(); torch.save({'w': torch.arange(3.0)}, b); b.seek(0)\n"
        "print(torch.load(b, map_location='cpu:1', weights_only=True)['w'].tolist())")


def test_torch_alone_cannot_load_onto_cpu_n():
    out = subprocess.run([sys.executable, "-c", LOAD], capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and "don't know how to restore data location" in out.stderr


def test_it_loads_onto_the_cpu_and_saving_is_unchanged():
    before = io.BytesIO()
    torch.save({"w": torch.arange(3.0)}, before)
    allow_cpu_index_locations()
    allow_cpu_index_locations()   # once per process, however often asked
    after = io.BytesIO()
    torch.save({"w": torch.arange(3.0)}, after)
    assert len(before.getvalue()) == len(after.getvalue())
    for where in ("cpu:1", "cpu:0", "cpu"):
        after.seek(0)
        w = torch.load(after, map_location=where, weights_only=True)["w"]
        assert w.tolist() == [0.0, 1.0, 2.0] and w.device.type == "cpu", where
