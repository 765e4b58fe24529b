"""The run's own model card: base, data, rewards, review, steps and the held-out result, over TRL's stock card."""

from __future__ import annotations

import json

from grpo_rlvr.records.model_card import model_card, review_summary, write_model_card

HISTORY = [{"step": 10, "reward": 0.4, "reward_std": 0.3, "loss": 0.01},
           {"step": 10, "eval_reward": 0.35, "eval_rewards/exact_match/mean": 0.2},
           {"step": 20, "reward": 0.6, "reward_std": 0.2, "frac_reward_zero_std": 0.1}]


def _inspection(tmp_path):
    folder = tmp_path / "inspection"
    folder.mkdir()
    rows = [{"id": f"s{i}", "verdict": {"verdict": "agree" if i else "disagree", "reviewer": "ana",
                                         "reviewer_kind": "human"}} for i in range(3)]
    (folder / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def test_the_card_says_what_was_trained_on_what_behind_which_review(tmp_path):
    card = model_card("models/qwen-0.5b", {"path": "sft/adapter"}, {"path": "data/train.jsonl", "split": "train",
                      "eval": {"path": "data/held.jsonl"}}, [{"name": "format", "kind": "format"},
                      {"name": "exact_match", "kind": "correctness"}], [0.2, 1.0], review_summary(_inspection(tmp_path)),
                      20, HISTORY)
    assert card.startswith("---\nlibrary_name: transformers\n")
    for line in ("# GRPO run on models/qwen-0.5b", "- adapter continued or merged: `sft/adapter`",
                 "- source: `data/train.jsonl`, split `train`", "- held out: `data/held.jsonl`",
                 "| `format` | format | 0.2 |", "| `exact_match` | correctness | 1.0 |",
                 "- 3 samples read; verdicts: agree 2, disagree 1", "- reviewers: ana (human)", "- steps: 20",
                 '- last logged (step 20): {"reward": 0.6, "reward_std": 0.2, "frac_reward_zero_std": 0.1}',
                 '- last evaluation (step 10): {"eval_reward": 0.35, "eval_rewards/exact_match/mean": 0.2}'):
        assert line in card, line


def test_a_smoke_test_and_a_run_without_held_out_data_say_so(tmp_path):
    card = model_card("m", None, {"path": "d.jsonl"}, [{"name": "format", "kind": None}], None, None, 3,
                      HISTORY[:1], smoke_test=True)
    assert "**An unreviewed smoke test**" in card and "- not recorded (smoke test: no review)" in card
    assert "- none (the brief names no `dataset.eval_path`)" in card and "| `format` | built-in | 1.0 |" in card
    assert review_summary(tmp_path / "missing") is None


def test_the_card_replaces_trls_in_the_output_and_the_final_model(tmp_path):
    (tmp_path / "final").mkdir()
    (tmp_path / "README.md").write_text("This model is a fine-tuned version of [None](https://huggingface.co/None).")
    written = write_model_card(tmp_path, "# ours\n")
    assert written == [tmp_path / "README.md", tmp_path / "final" / "README.md"]
    assert all(p.read_text() == "# ours\n" for p in written)
