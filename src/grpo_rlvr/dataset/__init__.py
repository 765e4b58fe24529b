"""The brief's dataset: rows read, columns mapped, prompts built, for every phase and the rendered train.py."""
