"""Saving the trained model into ``output/final`` whatever the process layout.

The rendered ``accelerate.yaml`` shards FSDP2's checkpoints (``SHARDED_STATE_DICT``: each rank writes its own
part, fast, and resumes from it). transformers' ``save_model`` under FSDP saves only a ``FULL_STATE_DICT``: with
sharded state it writes nothing, so ``final/`` would be empty after a whole run. Before the final save this
switches accelerate's FSDP plugin to the full state dict (gathered to the CPU of rank 0, as accelerate provides
for "train sharded, save full"), so ``final/`` holds weights that ``from_pretrained`` loads, as on one GPU.
Checkpoints saved during training stay sharded. Single-process, DDP and DeepSpeed runs save as before.

Cost: the whole model is gathered into rank 0's host memory once, at the end (2 bytes a parameter in bf16: 140 GB
for a 70B model), also for a LoRA run, whose save then keeps only the adapter's weights. Every rank must call it:
the gather is a collective (the watchdog's stop is known on every rank, so a stopped run skips it on all of them).
"""

from __future__ import annotations

from pathlib import Path

FULL = "FULL_STATE_DICT"


def gather_for_final_save(trainer) -> bool:
    """Switch an FSDP run's state dict to the full one; True when it changed anything. Call on every rank."""
    plugin = getattr(trainer.accelerator.state, "fsdp_plugin", None)
    if not getattr(trainer, "is_fsdp_enabled", False) or plugin is None:
        return False
    if FULL in str(plugin.state_dict_type):
        return False
    plugin.set_state_dict_type(FULL)
    return True


def save_final_model(trainer, final: Path) -> None:
    """Save the model and its tokenizer into ``final`` (every rank calls it; rank 0 writes)."""
    gather_for_final_save(trainer)
    trainer.save_model(str(final))
