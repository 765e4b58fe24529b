"""Preflight on a real (tiny) model: pass@k, the verdict for a model that never succeeds (SFT first) and one right
only at a low temperature, the learnable subset it writes, and the signal shares it forecasts."""

from __future__ import annotations

import json

import pytest

from grpo_rlvr.preflight.success_rate import pass_at_k, preflight


def test_pass_at_k_unbiased_estimator():
    assert pass_at_k(8, 0, 8) == 0.0
    assert pass_at_k(8, 8, 1) == 1.0
    assert pass_at_k(8, 1, 1) == pytest.approx(1 / 8)
    assert pass_at_k(10, 2, 5) == pytest.approx(1 - (8 * 7 * 6 * 5 * 4) / (10 * 9 * 8 * 7 * 6))


def test_untrained_model_routes_to_sft(workspace):
    res = preflight(workspace / "brief.yaml", prompts=8, k=8)
    assert res.verdict == "sft-first" and res.pass_at_1 == 0.0
    assert "SFT first" in res.format()


def test_preflight_filter_writes_the_learnable_subset(workspace, tmp_path):
    """On the untrained model every prompt is never solved: keep-share 0 keeps none, keep-share 1 keeps all,
    and the filtered file is in the dataset's own column names, loadable as a dataset again."""
    from grpo_rlvr.dataset.rows import read_jsonl

    small = [r for r in read_jsonl(workspace / "data" / "train.jsonl")][:24]
    (workspace / "data" / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in small))
    none = preflight(workspace / "brief.yaml", k=8, filter_out=tmp_path / "none.jsonl", keep_share=0.0)
    assert none.filtered == {"path": str(tmp_path / "none.jsonl"), "rows": 0, "of": 24}
    every = preflight(workspace / "brief.yaml", k=8, filter_out=tmp_path / "all.jsonl", keep_share=1.0)
    rows = read_jsonl(tmp_path / "all.jsonl")
    assert every.filtered["rows"] == 24 and all(set(r) == {"prompt", "answer"} for r in rows)
    assert sorted(json.dumps(r, sort_keys=True) for r in rows) == sorted(json.dumps(r, sort_keys=True) for r in small)


def test_preflight_tries_a_low_temperature_before_it_says_sft_first(workspace):
    res = preflight(workspace / "brief.yaml", prompts=4, k=4)
    assert res.verdict == "sft-first" and res.low_temperature is not None
    assert res.low_temperature["temperature"] == 0.3 and res.low_temperature["pass_at_1"] == 0.0
    assert "at temperature 1, and none of 16 at 0.3" in res.format()


def test_preflight_splits_correctness_signal_from_format_signal():
    """Scored by the real rewards: a group where some answers are right carries a correctness signal; a group
    where all are wrong but some are well-formed varies only in format; a group scored alike carries none."""
    from grpo_rlvr.preflight.success_rate import signal_shares
    from grpo_rlvr.rewards import build_reward, combine

    rewards = [build_reward("format", {}), build_reward("exact_match", {})]
    groups = [["<answer>7</answer>", "<answer>6</answer>", "7", "<answer>7</answer>"],   # right and wrong
              ["<answer>5</answer>", "5", "<answer>4</answer>", "nope"],                 # wrong, format varies
              ["<answer>1</answer>"] * 4]                                               # all alike
    totals, correct = [], []
    for g in groups:
        scored = combine(rewards, [0.2, 1.0], g, answer=["7"] * len(g))
        totals.append([s["total"] for s in scored])
        correct.append([s["scores"]["exact_match"].score for s in scored])
    zero, corr, fmt = signal_shares(totals, correct)
    assert (zero, corr, fmt) == (1 / 3, 1 / 3, 1 / 3)


@pytest.mark.e2e
def test_a_model_right_only_at_low_temperature_is_not_sent_to_sft(workspace, warm_model_dir):
    """The demo's warmed-up model knows the sums (its most likely answer is right) but at temperature 3 every
    character is near chance: no sample is correct, and the low-temperature pass finds the skill."""
    import yaml

    warm = warm_model_dir
    data = yaml.safe_load((workspace / "brief.yaml").read_text())
    data["model"] = {"name_or_path": str(warm)}
    data["grpo"]["temperature"] = 3.0
    (workspace / "hot.yaml").write_text(yaml.safe_dump(data))
    res = preflight(workspace / "hot.yaml", prompts=16, k=8)
    assert res.pass_at_1 == 0.0 and res.verdict == "lower-temperature", res.format()
    assert res.low_temperature["pass_at_1"] > 0 and "Set grpo.temperature near 0.3" in res.format()
