"""Turning prompts into sampled completions with the training run's own settings."""
