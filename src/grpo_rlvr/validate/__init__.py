"""``grpo-rlvr validate``: a brief checked before any cost, and what it resolves to."""
