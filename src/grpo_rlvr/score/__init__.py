"""``grpo-rlvr score``: completions from a file scored with a reward or a brief's composite."""
