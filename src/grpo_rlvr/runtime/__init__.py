"""What runs beside the GPU: the modules a rendered ``train.py`` and ``launch.sh`` import at run time.

The gate re-check and rendered-file hashes (``run_guard``), model loading for full/LoRA/QLoRA
(``model_loading``), the trainer subclasses (``trainers``; the held-out buffer in ``held_out_trainer``, dynamic
sampling's row stacking and checkpoint state in ``dynamic_sampling``, its pure parts in ``group_filter``) and the
logging callbacks
(``training_callbacks``). The desk side borrows two pieces: ``model_loading`` (preflight and
inspection sample with the same loader) and ``run_guard``'s read-only helpers (``read_lock`` and friends).
"""
