"""The embedded default: the whole pipeline on CPU with a tiny model built locally (``grpo-rlvr demo``)."""
