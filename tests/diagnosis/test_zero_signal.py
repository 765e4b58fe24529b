"""Diagnosis of zero-signal groups: when it recommends dynamic sampling (with the exact brief change), when the
offline filter or SFT first instead, and what it says about a run whose dynamic sampling ran out of refill rounds.
Histories and completions here are written as TRL (and trainer/dynamic_sampling.py) log them; the e2e
tests/diagnosis/test_runs.py::test_saturated_dataset checks the same recommendation on a real run."""

from __future__ import annotations

import json

import pytest

from grpo_rlvr.diagnosis import diagnose
from grpo_rlvr.diagnosis.zero_signal import DS_MAX_SHARE, max_rounds_for, snippet
from histories import HEALTHY, STEPS, history, write_completions, write_state

FLAT_WRONG = [("<answer>3</answer>", 0.0, 0.0)] * 8
FLAT_SOLVED = [("<answer>7</answer>", 1.0, 0.0)] * 8
MIXED = [(f"<answer>{k}</answer>", float(k % 2), 1.0 if k % 2 else -1.0) for k in range(8)]


def flat_share(share_of_10: int, flat=FLAT_WRONG):
    """make_group for write_completions: of 10 groups a step, the first ``share_of_10`` have equal rewards."""
    return lambda i, g: flat if g < share_of_10 else MIXED


def finding(res, fid="no_learning_signal"):
    return next((f for f in res.findings if f.id == fid), None)


def run_with(tmp_path, share_of_10, flat=FLAT_WRONG, **series):
    write_completions(tmp_path, STEPS, flat_share(share_of_10, flat), groups_per_step=10)
    return diagnose(write_state(tmp_path, history(**{**HEALTHY, **series})), out_dir=tmp_path)


@pytest.mark.parametrize("share,rounds", [(0.0, 3), (0.5, 3), (0.6, 4), (0.75, 7), (0.8, 9), (0.88, 16),
                                          (DS_MAX_SHARE, 16), (0.89, None), (1.0, None)])
def test_max_rounds_allows_twice_the_rounds_a_batch_needs(share, rounds):
    assert max_rounds_for(share) == rounds
    if rounds is not None and share >= 0.6:   # above the default's floor: (rounds + 1) ≥ 2 / (1 - share)
        assert rounds + 1 >= 2 / (1 - share) - 1e-9 and rounds < 2 / (1 - share)


def test_polarised_run_gets_dynamic_sampling_with_the_exact_brief_change(tmp_path):
    # 6 of 10 groups all-wrong every step; exact_match 0.1 → 0.39 (HEALTHY): polarised, a skill to sharpen
    res = run_with(tmp_path, 6)
    f = finding(res)
    assert f.cause == "polarised" and f.brief_change == {"dynamic_sampling": {"max_rounds": 4}}
    assert "`dynamic_sampling: {max_rounds: 4}`" in f.recommendation
    assert "grpo-rlvr preflight BRIEF --filter" in f.recommendation          # the offline alternative stays
    assert res.data["recommended_dynamic_sampling"] == {"max_rounds": 4}
    assert "recommended brief change: dynamic_sampling: {max_rounds: 4}" in res.format()
    md = (tmp_path / "diagnosis.md").read_text()
    assert "Recommended brief change: `dynamic_sampling: {max_rounds: 4}`" in md
    assert json.loads((tmp_path / "diagnosis.json").read_text())["recommended_dynamic_sampling"] == {"max_rounds": 4}


def test_below_half_zero_signal_is_no_finding(tmp_path):
    res = run_with(tmp_path, 4)   # 0.4 of the groups: the rest carry signal, dynamic sampling is not called for
    assert finding(res) is None and res.data["recommended_dynamic_sampling"] is None


def test_saturated_run_gets_dynamic_sampling_sized_by_the_recount_not_trls_metric(tmp_path):
    # TRL's frac_reward_zero_std says 0.0 (float32 std of equal rewards is not exactly 0); the recount says 0.7
    res = run_with(tmp_path, 7, FLAT_SOLVED, frac_reward_zero_std=lambda i: 0.0,
                   rewards__exact_match__mean=lambda i: 0.95, reward=lambda i: 1.15)
    f = finding(res)
    assert f.cause == "saturated" and f.brief_change == {"dynamic_sampling": {"max_rounds": 6}}
    assert "drops the always-solved ones" in f.recommendation


def test_share_too_high_for_any_bound_keeps_the_offline_filter(tmp_path):
    res = run_with(tmp_path, 9)   # 0.9 > 0.88: sixteen extra rounds do not allow twice the need
    f = finding(res)
    assert f.brief_change == {"dataset": {"path": "DATA.learnable.jsonl"}}
    assert "Dynamic sampling does not fit here" in f.recommendation and "10.0×" in f.recommendation
    assert res.data["recommended_dynamic_sampling"] is None


def test_zero_base_rate_means_sft_first_not_dynamic_sampling(tmp_path):
    # 6 of 10 groups equal, the rest differ only in format: correctness is never above zero
    format_only = [("<answer>3</answer>" if k % 2 else "3", 0.0, 1.0 if k % 2 else -1.0) for k in range(8)]
    write_completions(tmp_path, STEPS, lambda i, g: FLAT_WRONG if g < 6 else format_only, groups_per_step=10)
    res = diagnose(write_state(tmp_path, history(**{**HEALTHY, "rewards__exact_match__mean": lambda i: 0.0})),
                   out_dir=tmp_path)
    f = finding(res)
    assert f.cause == "too_hard" and "SFT first" in f.recommendation
    assert "Dynamic sampling cannot help" in f.recommendation and "dynamic_sampling" not in f.brief_change


def test_rare_success_with_room_gets_dynamic_sampling(tmp_path):
    res = run_with(tmp_path, 7, rewards__exact_match__mean=lambda i: 0.05)   # too hard, but not a zero base rate
    f = finding(res)
    assert f.cause == "too_hard" and f.brief_change == {"dynamic_sampling": {"max_rounds": 6}}


def ds_metrics(filler, zero_frac, rounds=3.0):
    return {"dynamic_sampling__filler_groups": filler, "dynamic_sampling__zero_signal_frac": lambda i: zero_frac,
            "dynamic_sampling__rounds_used": lambda i: rounds, "dynamic_sampling__groups_dropped": lambda i: 10.0,
            "dynamic_sampling__generations_spent": lambda i: 256.0}


def test_run_with_dynamic_sampling_is_not_told_to_turn_it_on(tmp_path):
    # its trained batches are 6/10 filler (the completions log holds the trained batch); refill ran out every step
    res = run_with(tmp_path, 6, **ds_metrics(lambda i: 6.0, 0.7))
    f = finding(res)
    assert f is not None and "already samples dynamically" in f.recommendation
    assert "dynamic_sampling" not in f.brief_change
    r = finding(res, "refill_exhausted")
    assert r is not None and r.brief_change == {"dynamic_sampling": {"max_rounds": 6}}
    assert "ran out of rounds in 20 of 20 logs" in r.evidence[0]
    assert "`dynamic_sampling: {max_rounds: 6}`" in r.recommendation
    assert res.data["recommended_dynamic_sampling"] == {"max_rounds": 6}


def test_run_with_dynamic_sampling_and_no_completions_is_judged_by_its_refill(tmp_path):
    # TRL's frac_reward_zero_std counts every round sampled (0.7 here); the refill filled every batch
    recs = history(**{**HEALTHY, "frac_reward_zero_std": lambda i: 0.7, **ds_metrics(lambda i: 0.0, 0.7)})
    res = diagnose(write_state(tmp_path, recs), out_dir=tmp_path)
    assert res.healthy, res.format()


def test_occasional_short_batch_is_not_flagged(tmp_path):
    recs = history(**{**HEALTHY, **ds_metrics(lambda i: 2.0 if i % 3 == 0 else 0.0, 0.6)})   # 7 of 20 logs
    assert finding(diagnose(write_state(tmp_path, recs), out_dir=tmp_path), "refill_exhausted") is None


def test_refill_out_of_rounds_beyond_any_bound_asks_for_a_harder_mix(tmp_path):
    # 95% of all generated groups are all-solved: no max_rounds fills the batch; the data is too easy
    res = run_with(tmp_path, 9, FLAT_SOLVED, rewards__exact_match__mean=lambda i: 0.95, reward=lambda i: 1.15,
                   **ds_metrics(lambda i: 9.0, 0.95, rounds=16.0))
    r = finding(res, "refill_exhausted")
    assert r is not None and "add harder prompts" in r.recommendation and "More rounds would not do" in r.recommendation
    assert r.brief_change == {"dataset": {"path": "DATA.learnable.jsonl"}}
    assert any("100% are all solved" in e for e in r.evidence), r.evidence


def test_refill_out_of_rounds_on_failures_asks_for_an_easier_mix(tmp_path):
    res = run_with(tmp_path, 9, rewards__exact_match__mean=lambda i: 0.05, **ds_metrics(lambda i: 8.0, 0.95))
    r = finding(res, "refill_exhausted")
    assert "add easier prompts" in r.recommendation and "SFT first" in r.recommendation


def test_snippet_is_the_one_line_yaml_a_person_pastes():
    import yaml

    text = snippet({"dynamic_sampling": {"max_rounds": 5}})
    assert text == "dynamic_sampling: {max_rounds: 5}"
    assert yaml.safe_load(text) == {"dynamic_sampling": {"max_rounds": 5}}


def test_apply_writes_the_recommended_section_and_the_real_loader_takes_it(workspace):
    from artifacts import make_artifact, proven_start
    from grpo_rlvr.brief import load_brief
    from grpo_rlvr.run.render import render

    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    run = render(workspace / "brief.yaml").dir
    out = run / "output"
    out.mkdir()
    proven_start(run)
    write_completions(out, STEPS, flat_share(7), groups_per_step=10)
    (out / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in history(**HEALTHY)))
    res = diagnose(run, apply_to=workspace / "brief-ds.yaml")
    assert res.data["recommended_dynamic_sampling"] == {"max_rounds": 6} and res.data["recommended_variant"] is None
    b = load_brief(workspace / "brief-ds.yaml")
    assert b.dynamic_sampling.max_rounds == 6 and b.dynamic_sampling.tolerance == 1e-6
    assert b.output_dir.name == "out-dynamic-sampling"
    again = render(workspace / "brief-ds.yaml").dir        # and it renders the dynamic-sampling trainer
    assert "'dynamic_sampling': {'max_rounds': 6, 'tolerance': 1e-06}" in (again / "train.py").read_text()
    lock = json.loads((again / "brief.lock.json").read_text())
    assert lock["dynamic_sampling"]["max_rounds"] == 6


def test_a_prompt_drawn_twice_in_one_step_counts_as_two_groups():
    """A refill (or a dataset with duplicates) can put one prompt in two groups of a step. With the run's
    num_generations from its lock, the rows split in logged order: one flat group and one with signal give a
    share of 0.5, not one merged group of 16 that looks like signal."""
    from types import SimpleNamespace

    from grpo_rlvr.diagnosis.zero_signal import zero_signal_by_step

    def rows(group):
        return [{"step": 4, "prompt": "2+3=", "completion": c, "exact_match": r, "advantage": a} for c, r, a in group]

    logs = SimpleNamespace(completions=rows(FLAT_WRONG) + rows(MIXED), brief_lock={"grpo_config": {"num_generations": 8}})
    assert zero_signal_by_step(logs) == [(4, 0.5)]
    logs.brief_lock = None    # a plain TRL run: no lock, so the prompt's 16 rows are one group
    assert zero_signal_by_step(logs) == [(4, 0.0)]


def test_the_kept_groupings_follow_the_rows_they_were_made_from():
    """groups_by_step and the zero-signal shares are kept for the rows list they were made from (the watchdog
    asks about one list many times); another list, or the same list grown, is grouped afresh."""
    from grpo_rlvr.diagnosis.completions import groups_by_step
    from grpo_rlvr.diagnosis.metrics import RunLogs
    from grpo_rlvr.diagnosis.zero_signal import zero_signal_by_step

    def rows(step, adv):
        return [{"step": step, "prompt": "p", "completion": "c", "advantage": adv} for _ in range(4)]

    a = rows(1, 0.0) + rows(2, 0.0)
    logs = RunLogs(None, None, a, None, None, [])
    assert zero_signal_by_step(logs) == [(1, 1.0), (2, 1.0)]
    assert groups_by_step(a) is groups_by_step(a)
    b = rows(1, 0.0) + rows(2, 0.0)                       # equal content, another list
    assert groups_by_step(b) is not groups_by_step(a) and groups_by_step(b) == groups_by_step(a)
    a.extend(rows(3, 1.0))                                # the same list, grown
    assert sorted(groups_by_step(a)) == [1, 2, 3]
    assert zero_signal_by_step(logs) == [(1, 1.0), (2, 1.0), (3, 0.0)]
    assert zero_signal_by_step(RunLogs(None, None, rows(7, 1.0), None, None, [])) == [(7, 0.0)]
