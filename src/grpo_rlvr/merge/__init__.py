"""``grpo-rlvr merge``: a LoRA adapter merged into its base as one model folder."""
