"""Diagnosis detectors on logged metric histories: each failure mode is named with evidence and the variant
it calls for, and a healthy history raises no alarm. (Histories here are written as TRL logs them; the e2e
demo test diagnoses a real run.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from artifacts import proven_start
from briefs import example_brief_text
from grpo_rlvr.diagnosis import diagnose
from grpo_rlvr.errors import ConfigError, InputFileError
from histories import HEALTHY, STEPS, history, write_completions, write_state


def ids(tmp_path, **override):
    res = diagnose(write_state(tmp_path, history(**{**HEALTHY, **override})), out_dir=tmp_path)
    return {f.id for f in res.findings}, res


def test_healthy_run_has_no_alarm(tmp_path):
    found, res = ids(tmp_path)
    assert found == set() and res.healthy
    assert "Healthy" in (tmp_path / "diagnosis.md").read_text()
    assert {"rewards.png", "entropy.png"} <= set(res.data["plots"])


@pytest.mark.parametrize("override,finding,variant", [
    ({"frac_reward_zero_std": lambda i: 0.9}, "no_learning_signal", None),
    ({"entropy": lambda i: 0.5 * 0.8 ** i, "reward": lambda i: 0.3,
      "rewards__exact_match__mean": lambda i: 0.1}, "entropy_collapse", "dapo"),
    ({"completions__mean_length": lambda i: 20 + 3 * i, "rewards__exact_match__mean": lambda i: 0.1},
     "length_reward_coupling", "dr_grpo"),
    ({"rewards__format__mean": lambda i: min(1.0, 0.5 + 0.05 * i), "rewards__exact_match__mean": lambda i: 0.1},
     "reward_hacking", None),   # a broken reward is fixed in the reward, not by a variant
    ({"completions__clipped_ratio": lambda i: 0.4}, "truncation", "dapo"),
    ({"kl": lambda i: 0.01 * 1.4 ** i}, "kl_blowup", None),
    ({"clip_ratio__region_mean": lambda i: 0.3}, "clipping_saturation", None),
])
def test_each_failure_mode_is_named(tmp_path, override, finding, variant):
    found, res = ids(tmp_path, **override)
    assert finding in found
    f = next(x for x in res.findings if x.id == finding)
    assert f.evidence and f.recommendation
    assert f.variant == variant
    data = json.loads((tmp_path / "diagnosis.json").read_text())
    assert finding in {x["id"] for x in data["findings"]}


def test_apply_writes_a_brief_that_loads_with_the_variant(workspace):
    from artifacts import make_artifact
    from grpo_rlvr.brief import load_brief
    from grpo_rlvr.run.render import render

    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    run = render(workspace / "brief.yaml").dir
    out = run / "output"
    out.mkdir()
    recs = history(**{**HEALTHY, "entropy": lambda i: 0.5 * 0.8 ** i, "reward": lambda i: 0.3,
                      "rewards__exact_match__mean": lambda i: 0.1})
    (out / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    res = diagnose(run, apply_to=workspace / "brief-dapo.yaml")
    assert res.data["recommended_variant"] == "dapo"
    b = load_brief(workspace / "brief-dapo.yaml")
    assert b.variant.name == "dapo" and b.grpo["epsilon_high"] == 0.28


def test_apply_without_recommendation_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match="recommends no variant"):
        diagnose(write_state(tmp_path, history(**HEALTHY)), apply_to=tmp_path / "x.yaml", out_dir=tmp_path)


def test_no_logs_is_a_clear_error(tmp_path):
    with pytest.raises(InputFileError, match="no metrics.jsonl or trainer_state.json"):
        diagnose(tmp_path)


# --- evidence from the logged completions and the held-out evaluations ------------------------------------------

def test_saturated_groups_are_found_even_when_trl_misses_them(tmp_path):
    # TRL 1.16 logs frac_reward_zero_std 0 here: eight rewards of 1.2 have a float32 std of ~1e-7, not 0
    write_completions(tmp_path, STEPS, lambda i, g: [("<answer>3</answer>", 1.0, 0.001)] * 8)
    found, res = ids(tmp_path, frac_reward_zero_std=lambda i: 0.0, rewards__exact_match__mean=lambda i: 1.0,
                     reward=lambda i: 1.2)
    f = next(x for x in res.findings if x.id == "no_learning_signal")
    assert f.cause == "saturated" and "too easy" in f.title
    assert any("frac_reward_zero_std averaged 0.00" in e for e in f.evidence)
    assert f.brief_change == {"dataset": {"path": "DATA.learnable.jsonl"}}


def test_never_solved_is_too_hard(tmp_path):
    found, res = ids(tmp_path, frac_reward_zero_std=lambda i: 1.0, rewards__exact_match__mean=lambda i: 0.0,
                     reward=lambda i: 0.0)
    f = next(x for x in res.findings if x.id == "no_learning_signal")
    assert f.cause == "too_hard" and "SFT first" in f.recommendation


# The last log's share of equal-reward groups: 1.0, or 0.75 (one of 4 groups held a well-formed completion: the
# collapse run on a Sapphire Rapids CPU ended so, and was read as too hard when only the last log was judged)
@pytest.mark.parametrize("last_share", [1.0, 0.75])
def test_signal_lost_mid_run_is_a_collapse_with_an_exact_learning_rate(workspace, last_share):
    from artifacts import make_artifact
    from grpo_rlvr.run.render import render

    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    run = render(workspace / "brief.yaml").dir          # the example brief trains at lr 2e-4
    (run / "output").mkdir()
    recs = history(**{**HEALTHY, "frac_reward_zero_std": lambda i: 0.1 if i < 3 else last_share if i == 19 else 1.0,
                      "rewards__exact_match__mean": lambda i: 0.1 if i < 3 else 0.0})
    (run / "output" / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    res = diagnose(run)
    f = next(x for x in res.findings if x.id == "no_learning_signal")
    assert f.cause == "collapsed"
    assert f.brief_change == {"grpo": {"learning_rate": 2e-5}}


def test_entropy_collapse_cites_the_completions(tmp_path):
    early = [(f"<answer>{k}</answer>", 0.0, 0.3) for k in range(8)]
    late = [("<answer></awer></answer>", 0.0, 0.001)] * 8
    write_completions(tmp_path, STEPS, lambda i, g: early if i < 3 else late)
    found, res = ids(tmp_path, entropy=lambda i: 0.5 * 0.8 ** i, reward=lambda i: 0.2,
                     rewards__exact_match__mean=lambda i: 0.0)
    f = next(x for x in res.findings if x.id == "entropy_collapse")
    assert any("distinct completions per group: 100% → 12%" in e for e in f.evidence), f.evidence
    assert f.brief_change["variant"]["name"] == "dapo"


def test_degenerate_repetition_in_long_completions(tmp_path):
    words = "let us think step by step about the sum of the two numbers given here".split()
    fresh = [(" ".join(words[k:] + words[:k]) * 3, 0.0, 0.1 * k) for k in range(8)]
    loop = [("the answer is the answer is " * 12 + str(k), 0.0, 0.1 * k) for k in range(8)]
    write_completions(tmp_path, STEPS, lambda i, g: fresh if i < 3 else loop)
    found, res = ids(tmp_path, rewards__exact_match__mean=lambda i: 0.1)
    f = next(x for x in res.findings if x.id == "degenerate_length")
    assert f.variant == "dapo" and any("repeated 4-grams" in e for e in f.evidence)


def test_short_repetitive_answers_are_not_degenerate(tmp_path):
    write_completions(tmp_path, STEPS, lambda i, g: [("<answer>7</answer>" * 2, 0.0, 0.0)] * 8)
    found, _ = ids(tmp_path, rewards__exact_match__mean=lambda i: 0.1)
    assert "degenerate_length" not in found


def test_length_coupling_from_within_group_correlation(tmp_path):
    # +20% length (below the +30% rule alone) but inside every group the longest completion is the rewarded one
    write_completions(tmp_path, STEPS, lambda i, g: [("x" * (10 + k), 0.0, -1.0 + 0.25 * k) for k in range(8)])
    found, res = ids(tmp_path, completions__mean_length=lambda i: 20 + 0.25 * i,
                     rewards__exact_match__mean=lambda i: 0.1)
    f = next(x for x in res.findings if x.id == "length_reward_coupling")
    assert any("correlation of length and advantage at the end: +1.00" in e for e in f.evidence), f.evidence


def with_evals(records, held_out):
    """Add held-out evaluation records (at steps 0, 25, 50, 75, 100) as TRL logs them."""
    evals = [{"step": 25 * j, "eval_reward": 0.2 + v, "eval_rewards/exact_match/mean": v, "eval_loss": 0.0}
             for j, v in enumerate(held_out)]
    return sorted(records + evals, key=lambda r: r["step"])


def test_training_reward_rising_without_held_out_gain(tmp_path):
    recs = with_evals(history(**HEALTHY), [0.05, 0.06, 0.05, 0.04, 0.05])
    res = diagnose(write_state(tmp_path, recs), out_dir=tmp_path)
    f = next(x for x in res.findings if x.id == "reward_hacking")
    assert f.cause == "held_out_gap" and f.variant is None
    assert any("held-out exact_match 0.050 at step 0" in e for e in f.evidence), f.evidence
    assert res.data["held_out"]["rewards/exact_match/mean"] == {"first": 0.05, "last": 0.05}


def test_held_out_rising_with_training_is_healthy(tmp_path):
    recs = with_evals(history(**HEALTHY), [0.05, 0.12, 0.2, 0.28, 0.35])
    res = diagnose(write_state(tmp_path, recs), out_dir=tmp_path)
    assert res.healthy, res.format()
    assert "held-out (5 evaluations" in res.format()
    assert "| rewards/exact_match/mean | 0.05 | 0.35 |" in (tmp_path / "diagnosis.md").read_text()


def test_an_evaluation_at_a_logging_step_does_not_replace_the_training_record(tmp_path):
    from grpo_rlvr.diagnosis import load_run_logs

    recs = with_evals(history(**HEALTHY), [0.05, 0.12, 0.2, 0.28, 0.35])  # steps 25, 50, … are logging steps too
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    logs = load_run_logs(tmp_path / "metrics.jsonl")
    assert len(logs.history) == 20 and len(logs.eval_history) == 5


def test_apply_keeps_relative_paths_working_from_another_folder(workspace, tmp_path_factory):
    from artifacts import make_artifact
    from grpo_rlvr.brief import load_brief
    from grpo_rlvr.run.render import render

    (workspace / "pays.py").write_text("def reward(completions, **kw):\n    return [0.0 for _ in completions]\n")
    data = yaml.safe_load(example_brief_text())
    data["rewards"].append({"name": "pays.py", "kind": "shaping", "weight": 0.1})
    data["dataset"]["eval_path"] = "data/train.jsonl"          # relative without "./"
    (workspace / "brief.yaml").write_text(yaml.safe_dump(data))
    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    run = render(workspace / "brief.yaml").dir
    (run / "output").mkdir()
    proven_start(run)
    recs = history(**{**HEALTHY, "entropy": lambda i: 0.5 * 0.8 ** i, "reward": lambda i: 0.3,
                      "rewards__exact_match__mean": lambda i: 0.1})
    (run / "output" / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "brief-dapo.yaml"
    diagnose(run, apply_to=elsewhere)
    b = load_brief(elsewhere)                                   # every path still resolves
    assert b.variant.name == "dapo" and b.dataset.eval_is_local
    assert b.output_dir == (workspace / "out").resolve().with_name("out-dapo")
    assert b.rewards[-1].name == str((workspace / "pays.py").resolve())


def test_moe_model_trained_without_gspo(tmp_path, tiny_model_dir):
    """A run trained outside grpo-rlvr's render (which applies GSPO to MoE models and refuses to drop it), with
    a lock that names an MoE model and token-level ratios."""
    import shutil

    moe = tmp_path / "moe"
    shutil.copytree(tiny_model_dir, moe)
    cfg = json.loads((moe / "config.json").read_text())
    (moe / "config.json").write_text(json.dumps({**cfg, "num_experts": 8}))
    run = tmp_path / "run"
    (run / "output").mkdir(parents=True)
    (run / "brief.lock.json").write_text(json.dumps({"brief": str(tmp_path / "b.yaml"),
                                                     "resolved": {"model": {"name_or_path": str(moe)}},
                                                     "grpo_config": {"importance_sampling_level": "token"}}))
    (run / "output" / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in history(**HEALTHY)))
    unproven = diagnose(run)       # logs no start of the run check vouches for: flagged first, the rest still read
    assert [f.id for f in unproven.findings] == ["unproven_run", "moe_without_gspo"]
    proven_start(run)
    res = diagnose(run)
    assert [f.id for f in res.findings] == ["moe_without_gspo"] and res.data["recommended_variant"] == "gspo"
    (run / "brief.lock.json").write_text(json.dumps({"brief": str(tmp_path / "b.yaml"),
                                                     "resolved": {"model": {"name_or_path": str(moe)}},
                                                     "grpo_config": {"importance_sampling_level": "sequence"}}))
    assert diagnose(run).healthy


def test_rising_format_is_cleared_by_rising_held_out_correctness(tmp_path):
    hack = {"rewards__format__mean": lambda i: min(1.0, 0.5 + 0.05 * i), "rewards__exact_match__mean": lambda i: 0.1}
    assert "reward_hacking" in ids(tmp_path, **hack)[0]
    recs = with_evals(history(**{**HEALTHY, **hack}), [0.05, 0.08, 0.1, 0.12, 0.14])
    res = diagnose(write_state(tmp_path, recs), out_dir=tmp_path)
    assert "reward_hacking" not in {f.id for f in res.findings}, res.format()


def test_moderate_kl_that_bought_quality_is_not_a_blowup(tmp_path):
    grows = {"kl": lambda i: 0.01 * 1.18 ** i}                  # 0.01 → 0.17: ≥ 10×, above 0.1
    assert "kl_blowup" in ids(tmp_path, **grows, rewards__exact_match__mean=lambda i: 0.1)[0]
    assert "kl_blowup" not in ids(tmp_path, **grows)[0]          # HEALTHY: exact_match 0.1 → 0.35
    assert "kl_blowup" in ids(tmp_path, kl=lambda i: 0.01 * 1.4 ** i)[0]   # → 5.9: too far whatever it bought


def test_hub_dataset_gets_a_local_filter_path(workspace):
    from artifacts import make_artifact
    from grpo_rlvr.run.render import render

    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    run = render(workspace / "brief.yaml").dir
    lock = json.loads((run / "brief.lock.json").read_text())
    lock["resolved"]["dataset"]["path"] = "openai/gsm8k"
    (run / "brief.lock.json").write_text(json.dumps(lock))
    (run / "output").mkdir()
    recs = history(**{**HEALTHY, "frac_reward_zero_std": lambda i: 1.0, "rewards__exact_match__mean": lambda i: 0.0})
    (run / "output" / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    f = next(x for x in diagnose(run).findings if x.id == "no_learning_signal")
    assert f.brief_change == {"dataset": {"path": "./openai_gsm8k.learnable.jsonl"}}


@pytest.mark.parametrize("override, finding", [
    ({"tools__call_frequency": lambda i: 0.0, "tools__failure_frequency": lambda i: 0.0}, "tools_never_called"),
    ({"tools__call_frequency": lambda i: 1.2, "tools__failure_frequency": lambda i: 0.05 * i}, "tool_errors_rising"),
    ({"tools__call_frequency": lambda i: 1.2, "tools__failure_frequency": lambda i: 0.0,
      "tools__unavailable": lambda i: 3.0}, "tool_errors_rising"),
])
def test_tool_use_findings(tmp_path, override, finding):
    found, res = ids(tmp_path, **override)
    assert found == {finding}, found
    f = next(f for f in res.findings if f.id == finding)
    assert f.severity == "warning" and f.recommendation


# The tool demo at seed 2 before its warmup was fixed (runs/demo-tool/out/run/output/metrics.jsonl, 20 logs):
# tools/call_frequency 0.25 → 0.02, exact_match 0.078 → 0.034, format 0.70 → 0.93; tools_never_called (under 0.02 over
# the last quarter) missed it and the run was called healthy.
SEED_2_TOOLS = [0.25, 0.24, 0.22, 0.2, 0.17, 0.15, 0.12, 0.1, 0.08, 0.07, 0.06, 0.05, 0.05, 0.04, 0.04, 0.03, 0.03,
                0.02, 0.02, 0.022]
SEED_2_EXACT = [0.0781, 0.0719, 0.0781, 0.0625, 0.0563, 0.0469, 0.05, 0.0531, 0.0344, 0.0375, 0.0344, 0.0563, 0.0437,
                0.0531, 0.0688, 0.0375, 0.0344, 0.0281, 0.0219, 0.05]
SEED_2_FORMAT = [0.7, 0.7531, 0.7656, 0.7031, 0.7219, 0.7719, 0.825, 0.8406, 0.8594, 0.8562, 0.8438, 0.9, 0.8875, 0.8719,
                 0.8625, 0.8969, 0.8812, 0.8906, 0.9094, 0.9281]


def test_a_policy_that_trains_its_tool_calls_away_is_a_finding(tmp_path):
    found, res = ids(tmp_path, tools__call_frequency=SEED_2_TOOLS.__getitem__,
                     rewards__exact_match__mean=SEED_2_EXACT.__getitem__,
                     rewards__format__mean=SEED_2_FORMAT.__getitem__, tools__failure_frequency=lambda i: 0.1)
    assert "tools_abandoned" in found and "tools_never_called" not in found, found
    f = next(f for f in res.findings if f.id == "tools_abandoned")
    assert f.severity == "warning" and not res.healthy, res.format()
    assert f.evidence[0].startswith("tools/call_frequency 0.237 → 0.024"), f.evidence
    assert any("exact_match mean 0.076 → 0.034" in e for e in f.evidence), f.evidence
    assert any(e.startswith("format mean 0.740 → 0.901") for e in f.evidence), f.evidence


@pytest.mark.parametrize("tools, exact", [
    (lambda i: 0.6 - 0.03 * i, lambda i: 0.1 + 0.015 * i),   # fewer calls, better answers: it needs the tool less
    (lambda i: 0.08 - 0.004 * i, lambda i: 0.1),             # it never called them much (tools_never_called's case)
    (lambda i: 0.4 - 0.005 * i, lambda i: 0.1),              # 0.4 → 0.31: down, not given up
])
def test_fewer_tool_calls_are_not_abandonment_unless_given_up_for_nothing(tmp_path, tools, exact):
    found, _ = ids(tmp_path, tools__call_frequency=tools, rewards__exact_match__mean=exact,
                   tools__failure_frequency=lambda i: 0.0)
    assert "tools_abandoned" not in found, found


def test_a_run_that_calls_its_tools_and_learns_them_raises_no_tool_alarm(tmp_path):
    found, _ = ids(tmp_path, tools__call_frequency=lambda i: 0.5 + 0.05 * i,
                   tools__failure_frequency=lambda i: max(0.0, 0.3 - 0.02 * i), tools__unavailable=lambda i: 0.0)
    assert found == set(), found


# --- a destroyed policy on a short run: facts from the first logs, no trend window --------------------------------

def short_run(tmp_path, batch=64, logging_steps=2, **series):
    """A run folder with six records logged every ``logging_steps`` steps (two short of a trend window) and a lock
    saying ``batch`` completions a step."""
    records = [{**r, "step": logging_steps * (i + 1)} for i, r in enumerate(history(6, **{**HEALTHY, **series}))]
    (tmp_path / "output").mkdir(exist_ok=True)
    (tmp_path / "brief.lock.json").write_text(json.dumps({"grpo_config": {
        "per_device_train_batch_size": batch, "gradient_accumulation_steps": 1, "logging_steps": logging_steps,
        "learning_rate": 2e-4}}))
    (tmp_path / "output" / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return diagnose(tmp_path)


def test_correctness_that_falls_to_zero_on_a_short_run_is_a_finding(tmp_path):
    """The issue's run: correctness 0.083 then nothing by step 10, six records, KL up. At 64 completions a step
    and a log every 2 steps, four logs of 128 samples all wrong at a start of 0.067 have a chance of 1e-15."""
    from grpo_rlvr.diagnosis import load_run_logs
    from grpo_rlvr.diagnosis.detectors import correctness_collapsed
    from grpo_rlvr.diagnosis.roles import infer_roles

    res = short_run(tmp_path, rewards__exact_match__mean=lambda i: [0.083, 0.05, 0.0, 0.0, 0.0, 0.0][i],
                    kl=lambda i: [0.01, 0.21, 0.5, 0.6, 0.6, 0.7][i])
    f = next((x for x in res.findings if x.id == "correctness_collapsed"), None)
    assert f is not None and f.severity == "critical", res.format()
    assert f.evidence[0] == "exact_match mean 0.067 at the start (step 2), 0 in each of the last 4 logs (from step 6 to 12)"
    assert "kl to the reference 0.0100 (step 2) → 0.7000 (step 12)" in f.evidence
    assert f.brief_change == {"grpo": {"learning_rate": 2e-5}}
    assert {x.id for x in res.findings} >= {"correctness_collapsed", "too_few_records"}

    logs = load_run_logs(tmp_path)
    logs.roles = infer_roles(logs, {})
    logs.brief_lock = None   # a bare log: each record one group of 8; four zero logs of 8 at 0.067 are chance (0.1)
    assert correctness_collapsed(logs) is None


@pytest.mark.parametrize("q", [
    [0.1, 0.12, 0.15, 0.14, 0.2, 0.0],       # one zero log: chance on a healthy run
    [0.03, 0.0, 0.03, 0.0, 0.0, 0.0],        # a low rate: three zero logs of 32 samples at 0.03 have a chance of 5%
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],          # never above zero: too hard, not a fall (no_learning_signal's)
])
def test_zeros_that_chance_or_a_zero_start_explain_are_not_a_collapse(tmp_path, q):
    res = short_run(tmp_path, batch=32, logging_steps=1, rewards__exact_match__mean=lambda i: q[i])
    assert "correctness_collapsed" not in {f.id for f in res.findings}, res.format()


def test_nothing_paying_for_correctness_is_not_a_destroyed_policy(tmp_path):
    (tmp_path / "output").mkdir()
    res = short_run(tmp_path, rewards__exact_match__mean=lambda i: [0.1, 0.1, 0.0, 0.0, 0.0, 0.0][i])
    assert "correctness_collapsed" in {f.id for f in res.findings}
    lock = json.loads((tmp_path / "brief.lock.json").read_text())
    lock["resolved"] = {"rewards": [{"name": "format", "weight": 1.0}, {"name": "exact_match", "weight": 0.0}]}
    (tmp_path / "brief.lock.json").write_text(json.dumps(lock))
    assert "correctness_collapsed" not in {f.id for f in diagnose(tmp_path).findings}


def test_a_kl_jump_in_the_first_logs_is_reported_and_the_healthy_demos_kl_is_not(tmp_path):
    res = short_run(tmp_path, kl=lambda i: [0.0, 2.62, 2.68, 3.0, 1.9, 2.3][i])
    f = next(x for x in res.findings if x.id == "kl_jump")
    assert f.severity == "warning" and f.evidence[0].startswith("kl 2.300 at step 12 (threshold 1 nat per token); "
                                                                "first above it at step 4 (2.620)")
    demo = json.loads((Path(__file__).parents[1] / "data" / "demo_trainer_state.json").read_text())
    res = diagnose(write_state(tmp_path, demo["log_history"]), out_dir=tmp_path)   # a real healthy demo run
    assert not {"kl_jump", "correctness_collapsed"} & {x.id for x in res.findings}, res.format()


def _unscored(n, scored_from=None):
    """A tool run whose environment could not start: every rollout unscored, rewards null, every group equal."""
    recs = history(n=n, **HEALTHY)
    for i, r in enumerate(recs):
        if scored_from is None or i < scored_from:
            r.update({"unscorable/frac": 1.0, "tools/unavailable": 16.0, "reward": None, "reward_std": 0.0,
                      "rewards/exact_match/mean": None, "rewards/format/mean": None, "frac_reward_zero_std": 1.0,
                      "tools/call_frequency": 0.0})
        else:
            r.update({"unscorable/frac": 0.0, "tools/unavailable": 0.0, "tools/call_frequency": 0.5})
    return recs


def test_a_run_that_scored_nothing_is_told_so_not_blamed_on_the_learning_rate(tmp_path):
    """An environment whose reset() raises leaves every rollout unscored: the findings were "NaN metrics: lower the
    learning rate" and "no learning signal: SFT first". It is one finding, with the tool evidence and the fix."""
    for n in (3, 20):
        res = diagnose(write_state(tmp_path, _unscored(n)), out_dir=tmp_path / "d")
        ids = [f.id for f in res.findings]
        assert "nothing_scored" in ids and "non_finite_metrics" not in ids and "no_learning_signal" not in ids, ids
        f = next(x for x in res.findings if x.id == "nothing_scored")
        assert f.severity == "critical" and f"all {n} logged steps" in f.evidence[0]
        assert "tools/unavailable 16 rollouts a step" in f.evidence[1] and "grpo-rlvr preflight BRIEF" in f.recommendation


def test_a_run_that_scored_some_steps_is_judged_as_before(tmp_path):
    res = diagnose(write_state(tmp_path, _unscored(20, scored_from=5)), out_dir=tmp_path / "d")
    ids = [f.id for f in res.findings]
    assert "nothing_scored" not in ids and "non_finite_metrics" in ids, ids


def test_a_reward_that_scored_nothing_points_at_the_rows(tmp_path):
    recs = _unscored(10)
    for r in recs:
        del r["tools/unavailable"], r["tools/call_frequency"]
    res = diagnose(write_state(tmp_path, recs), out_dir=tmp_path / "d")
    f = next(x for x in res.findings if x.id == "nothing_scored")
    assert len(f.evidence) == 1 and "output/unscorable.json" in f.recommendation
