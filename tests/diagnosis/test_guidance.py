"""What the commands tell a person to do next is true of the run in front of them: a learning rate too high to learn
at is named before "SFT first"; no variant from a log too short to judge; a log without a reward says n/a, not
None; ``--apply`` says what it wrote; a smoke test logs each step it prints; ``watch`` counts to the steps the
trainer runs (``train --max-steps`` included) and says what its seconds measure; the gate ends with the next
command and a disagreement has a path for a bad data row; the demo's summary points to the pipeline by hand."""

from __future__ import annotations

import json
from pathlib import Path

from artifacts import make_artifact
from grpo_rlvr.diagnosis import diagnose
from grpo_rlvr.gate.check import check_gate
from grpo_rlvr.records.watch_log import write_plan
from grpo_rlvr.run.guard import smoke_config
from grpo_rlvr.watch.view import Watcher, format_view
from histories import HEALTHY, STEPS, history, write_completions, write_state

FLAT_WRONG = [("<answer>3</answer>", 0.0, 0.0)] * 8
FORMAT_ONLY = [("<answer>3</answer>" if k % 2 else "3", 0.0, 1.0 if k % 2 else -1.0) for k in range(8)]


def never_right(tmp_path, lr):
    """A run whose correctness is 0 throughout (6 of 10 groups all wrong), trained at ``lr`` (its brief lock)."""
    (tmp_path / "brief.lock.json").write_text(json.dumps({"grpo_config": {"learning_rate": lr}}))
    write_completions(tmp_path, STEPS, lambda i, g: FLAT_WRONG if g < 6 else FORMAT_ONLY, groups_per_step=10)
    res = diagnose(write_state(tmp_path, history(**{**HEALTHY, "rewards__exact_match__mean": lambda i: 0.0})),
                   out_dir=tmp_path)
    return next(f for f in res.findings if f.id == "no_learning_signal")


def test_a_learning_rate_too_high_to_learn_at_is_the_first_remedy_not_sft(tmp_path):
    f = never_right(tmp_path, 1e-2)
    assert f.cause == "learning_rate" and f.title.startswith("No learning signal: the learning rate 0.01 is too high")
    assert f.recommendation.startswith("Lower the learning rate first") and f.brief_change == {
        "grpo": {"learning_rate": 1e-5}}


def test_at_the_recipes_rate_a_model_that_never_succeeds_still_gets_sft_first(tmp_path):
    f = never_right(tmp_path, 5e-7)
    assert f.cause == "too_hard" and "SFT first" in f.recommendation


def test_no_variant_from_a_log_too_short_to_judge(tmp_path):
    # entropy collapsing over 4 records: the finding stands as evidence, but 4 records are too few for a variant
    series = {**HEALTHY, "entropy": lambda i: 0.5 * 0.5 ** i, "reward": lambda i: 0.3,
              "rewards__exact_match__mean": lambda i: 0.1}
    res = diagnose(write_state(tmp_path, history(n=4, **series)), out_dir=tmp_path)
    assert "too_few_records" in {f.id for f in res.findings}, res.format()
    assert res.data["recommended_variant"] is None and "recommended variant" not in res.format()


def test_a_log_without_a_reward_says_na_never_none(tmp_path):
    res = diagnose(write_state(tmp_path, history(n=12, loss=lambda i: 0.1)), out_dir=tmp_path)
    assert "reward n/a → n/a" in res.format() and "None" not in res.format()
    md = (tmp_path / "diagnosis.md").read_text()
    assert "Reward n/a → n/a." in md and "None" not in md


def test_apply_says_which_brief_it_wrote(workspace):
    from grpo_rlvr.run.render import render

    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    run = render(workspace / "brief.yaml").dir
    (run / "output").mkdir()
    recs = history(**{**HEALTHY, "entropy": lambda i: 0.5 * 0.8 ** i, "reward": lambda i: 0.3,
                      "rewards__exact_match__mean": lambda i: 0.1})
    (run / "output" / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    new = workspace / "brief-dapo.yaml"
    said = diagnose(run, apply_to=new).format()
    assert new.is_file() and f"wrote the new brief {new} (--apply); next: grpo-rlvr validate {new}" in said, said


def test_a_smoke_test_logs_every_step_it_prints():
    cfg = smoke_config({"max_steps": 200, "logging_steps": 10, "save_strategy": "steps"}, 3)
    assert cfg["max_steps"] == 3 and cfg["logging_steps"] == 1 and cfg["save_strategy"] == "no"


def test_watch_counts_to_the_steps_the_trainer_runs_and_says_what_its_seconds_are(tmp_path):
    run = tmp_path / "run"
    (run / "output").mkdir(parents=True)
    (run / "brief.lock.json").write_text(json.dumps({"grpo_config": {"max_steps": 100}}))
    write_plan(run / "output", 15)   # `train RUN --max-steps 15`: what the trainer writes as it starts
    recs = [{"step": 5, "loss": 0.1, "reward": 0.2}, {"step": 15, "loss": 0.1, "reward": 0.4},
            {"step": 15, "train_runtime": 13.8}]
    (run / "output" / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    w = Watcher(run)
    w.poll()
    said = format_view(w.view)
    assert "step 15/15 (100%)" in said and "/100" not in said, said
    assert "its steps took 13.800 s, TRL's train_runtime: without start-up and model loading" in said, said


def test_the_gate_ends_with_the_next_command(workspace):
    passed = check_gate(make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection"))
    assert passed.passed and passed.format().splitlines()[-1].startswith(
        f"Next: grpo-rlvr render {workspace / 'brief.yaml'}"), passed.format()
    assert passed.to_dict()["next"].startswith("grpo-rlvr render")


def test_a_disagreement_has_a_path_for_a_bad_data_row(workspace):
    art = make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection", verdict="disagree")
    res = check_gate(art)
    rule = next(r for r in res.rules if r.id == 2)
    assert not rule.passed and "the reward or the sample's data row is wrong" in rule.fix, rule.fix
    assert "fix or drop that row in the data" in rule.fix and "data rows 0, 1" in rule.fix, rule.fix
    assert res.format().splitlines()[-1] == f"Next: make each fix above, then grpo-rlvr gate {art}"


def test_the_demo_summary_points_to_the_pipeline_by_hand():
    from grpo_rlvr.demo.pipeline import BY_HAND

    readme = (Path(__file__).parents[2] / "README.md").read_text()
    for heading in ("The pipeline, by hand", "Start from an example"):
        assert f'"{heading}"' in BY_HAND and f"## {heading}\n" in readme
