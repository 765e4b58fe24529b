"""Preflight on a real (tiny) model: pass@k, the verdict for a model that never succeeds (SFT first) and one right
only at a lower temperature (the ladder names a temperature it measured in the GRPO band, and preflight there says
grpo), the learnable subset it writes, and the signal shares it forecasts. The ladder's search is also checked on
the measures of the run the issue reported (sft-first at 1.0, too easy at 0.3)."""

from __future__ import annotations

import json

import pytest

from grpo_rlvr.preflight.success_rate import LADDER_PASSES, Rung, climb, pass_at_k, preflight, recommend


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
    assert res.verdict == "sft-first" and res.recommended_temperature is None
    assert [(g["temperature"], g["pass_at_1"], g["verdict"]) for g in res.ladder] == [(0.3, 0.0, "sft-first")]
    assert "0 of 16 samples solved the task at temperature 1, and none at 0.3" in res.format()


def _measured_as(table: dict[float, tuple[float, float]]):
    """A ladder's ``measure`` over fixed measures, temperature -> (pass@1, share always solved), recording calls."""
    calls = []

    def measure(t: float) -> Rung:
        calls.append(t)
        p1, always = table[t]
        verdict = "sft-first" if p1 == 0 else "too-easy" if always >= 0.9 else "grpo"
        return Rung(t, p1, 0, always, 0.5 if verdict == "grpo" else 0.0, verdict)
    return measure, calls


def test_the_ladder_never_recommends_a_temperature_it_measured_too_easy():
    """The run the issue reported: nothing correct at 1.0, every prompt always solved at 0.3 (preflight said 'near
    0.3', then too-easy there), 0.85 worked. The ladder halves between them and names the in-band rung."""
    measure, calls = _measured_as({0.3: (1.0, 1.0), 0.65: (0.98, 0.95), 0.82: (0.125, 0.05)})
    rungs = climb(1.0, Rung(1.0, 0.0, 0, 0.0, 0.0, "sft-first"), measure)
    assert calls == [0.3, 0.65, 0.82] and len(calls) <= LADDER_PASSES
    assert recommend(1.0, rungs) == 0.82 and [r.verdict for r in rungs] == ["too-easy", "too-easy", "grpo"]
    # from the other side: too easy at 0.3; the ladder climbs to 1.0 and halves back towards 0.3
    measure, calls = _measured_as({1.0: (0.0, 0.0), 0.65: (0.98, 0.95), 0.82: (0.125, 0.05)})
    rungs = climb(0.3, Rung(0.3, 1.0, 64, 1.0, 0.0, "too-easy"), measure)
    assert calls == [1.0, 0.65, 0.82] and recommend(0.3, rungs) == 0.82
    # the nearest in-band rung to the brief's temperature wins; a far rung that fails the same way ends the ladder
    measure, calls = _measured_as({0.3: (0.4, 0.2), 0.65: (0.2, 0.1), 0.82: (0.0, 0.0)})
    assert recommend(1.0, climb(1.0, Rung(1.0, 0.0, 0, 0.0, 0.0, "sft-first"), measure)) == 0.65
    measure, calls = _measured_as({0.3: (0.0, 0.0)})
    assert climb(1.0, Rung(1.0, 0.0, 0, 0.0, 0.0, "sft-first"), measure) == [Rung(0.3, 0.0, 0, 0.0, 0.0, "sft-first")]
    assert calls == [0.3]
    # nothing to try: in the band already, or the brief's temperature is at the far rung or past it
    for first in (Rung(1.0, 0.2, 5, 0.1, 0.3, "grpo"), Rung(0.3, 0.0, 0, 0.0, 0.0, "sft-first"),
                  Rung(1.0, 1.0, 8, 1.0, 0.0, "too-easy")):
        measure, calls = _measured_as({})
        assert climb(first.temperature, first, measure) == [] and calls == []
    # all the rungs fail one way or the other: no recommendation
    measure, calls = _measured_as({0.3: (1.0, 1.0), 0.65: (0.0, 0.0), 0.47: (1.0, 0.95)})
    assert recommend(1.0, climb(1.0, Rung(1.0, 0.0, 0, 0.0, 0.0, "sft-first"), measure)) is None
    assert calls == [0.3, 0.65, 0.47]


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
    character is near chance: no sample is correct. The ladder finds the skill lower down and names a temperature it
    measured in the band (0.97 here: pass@1 0.109), and preflight there says grpo with the same pass@1."""
    import yaml

    warm = warm_model_dir
    data = yaml.safe_load((workspace / "brief.yaml").read_text())
    data["model"] = {"name_or_path": str(warm)}
    data["grpo"]["temperature"] = 3.0
    (workspace / "hot.yaml").write_text(yaml.safe_dump(data))
    res = preflight(workspace / "hot.yaml", prompts=16, k=8)
    assert res.pass_at_1 == 0.0 and res.verdict == "lower-temperature", res.format()
    assert res.ladder[0]["temperature"] == 0.3 and res.ladder[0]["pass_at_1"] > 0 and len(res.ladder) <= LADDER_PASSES
    rec = res.recommended_temperature
    assert rec is not None and f"set grpo.temperature to {rec:g}" in res.format(), res.format()
    rung = next(g for g in res.ladder if g["temperature"] == rec)
    assert rung["verdict"] == "grpo" and 0 < rung["pass_at_1"] and rung["always_solved"] < 0.9
    # following the advice closes the loop: preflight at that temperature draws the same samples and says grpo
    data["grpo"]["temperature"] = rec
    (workspace / "advised.yaml").write_text(yaml.safe_dump(data))
    again = preflight(workspace / "advised.yaml", prompts=16, k=8)
    assert again.verdict == "grpo" and again.pass_at_1 == rung["pass_at_1"] and again.ladder == [], again.format()
