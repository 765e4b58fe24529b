"""What runs beside the GPU: the modules a rendered ``train.py`` and ``launch.sh`` import at run time.

The run guard (``run.guard``, in the commands' room ``run/``; ``train.py`` imports it) refuses to train unless the
run check passes, caps and marks unreviewed smoke tests, and compares what was loaded with what was checked; the
check comes back to it as a ``checked_run.RunCheck``, this room's, and nothing here imports the guard
(tests/test_layers.py). Here: model loading for
full/LoRA/QLoRA (``model_loading``; preflight and inspection sample with the same loader), the trainer subclasses
(``trainers``; the held-out buffer in ``held_out_trainer``, dynamic sampling's row stacking and checkpoint state in
``dynamic_sampling``, its pure parts in ``group_filter``), checkpoints this run saved (``checkpoint_ledger``), a run folder holding one run (``run_outputs``), the run's own model card (``model_card``), the
vLLM CPU fixes for colocate training (``vllm_cpu``) and the logging callbacks (``training_callbacks``). The run's
lock is read and written by ``run.lock``.
"""
