"""``grpo-rlvr review``: a person reads every inspected sample and records a verdict."""
