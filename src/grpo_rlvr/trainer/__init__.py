"""The TRL adapters: what a rendered ``train.py`` builds its trainer from, and the only room that names a private
attribute of TRL's trainers (tests/test_layers.py holds the rule; ``trl_seams`` lists each such name with the TRL
version it was read from, and the build refuses a TRL that lacks one).

Here: model loading for full/LoRA/QLoRA (``model_loading``; preflight and inspection sample with the same loader),
the one builder (``trainer_build``), the trainer subclasses (``trainers``; the held-out buffer in
``held_out_buffer``, dynamic sampling's row stacking and checkpoint state in ``dynamic_sampling``, its pure parts in
``group_filter``; ``rollout_trainer`` generates for the rollout road; ``concurrent_tool_calls`` starts a turn's tool
calls together), the callbacks (``training_callbacks``), TRL's refusals read ahead (``trl_refusals``), the final
save (``final_model``), resuming on CPU (``cpu_resume``) and the vLLM CPU fixes for colocate training
(``vllm_cpu``). It imports only the ground floor, ``identity`` and the run's records (``grpo_rlvr.records``); the
run guard (``run.guard``) hands it the run check as a ``records.checked_run.RunCheck``.
"""
