"""A plain TRL GRPO script, the way a user writes one without grpo-rlvr: their own reward functions (one of
which pays for length), GRPOConfig, GRPOTrainer, train. Checkpoints (with trainer_state.json) and the logged
completions go to OUTPUT_DIR.

Usage: python plain_trl_grpo.py MODEL_DIR DATA.jsonl OUTPUT_DIR [LEARNING_RATE] [SEED]
"""

import re
import sys

from datasets import load_dataset
from trl import GRPOConfig, GRPOTrainer

model_dir, data_file, output_dir = sys.argv[1:4]
learning_rate = float(sys.argv[4]) if len(sys.argv) > 4 else 1e-3
seed = int(sys.argv[5]) if len(sys.argv) > 5 else 0


def text(completion):
    return completion[0]["content"] if isinstance(completion, list) else completion


def format_reward(completions, **kwargs):
    return [1.0 if re.fullmatch(r"\s*<answer>[^<]*</answer>\s*", text(c)) else 0.0 for c in completions]


def correctness_reward(completions, answer, **kwargs):
    found = [re.search(r"<answer>\s*(-?\d+)\s*</answer>", text(c)) for c in completions]
    return [1.0 if m and m.group(1) == a else 0.0 for m, a in zip(found, answer, strict=True)]


def length_bonus(completions, **kwargs):
    return [min(len(text(c)) / 128, 1.0) for c in completions]


args = GRPOConfig(output_dir=output_dir, max_steps=10, logging_steps=1, save_steps=5, learning_rate=learning_rate,
                  per_device_train_batch_size=16, num_generations=8, max_completion_length=128,
                  log_completions=True, report_to="none", seed=seed, use_cpu=True, bf16=False,
                  dataloader_num_workers=0, save_only_model=True)
trainer = GRPOTrainer(model=model_dir, reward_funcs=[format_reward, correctness_reward, length_bonus], args=args,
                      train_dataset=load_dataset("json", data_files=data_file, split="train"))
trainer.train()
