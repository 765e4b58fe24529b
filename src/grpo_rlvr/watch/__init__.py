"""``grpo-rlvr watch``: a training run seen from another terminal."""
