"""Dynamic sampling without a training run: the group-signal test against float noise and None rewards, the
refill stream, the batch plan across ranks, row stacking, and the brief's ``dynamic_sampling`` section
(validation errors, DAPO's delta, validate's report, the rendered files). The runs are in
tests/trainer/test_dynamic_sampling_runs.py."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys

import pytest
import torch
import yaml

from briefs import example_brief_text
from grpo_rlvr.brief import load_brief
from grpo_rlvr.errors import ConfigError
from grpo_rlvr.trainer.dynamic_sampling import stack_rows
from grpo_rlvr.trainer.group_filter import (
    RefillStream,
    assign_rows,
    choose_groups,
    groups_with_signal,
    rows_for_rank,
)

NAN = float("nan")


def signal(rows, weights=(1.0,), gens=None, tolerance=1e-6, aggregation="sum_then_normalize"):
    t = torch.tensor(rows, dtype=torch.float32)
    return groups_with_signal(t, list(weights), gens or len(rows), tolerance, aggregation).tolist()


# --- the group-signal test --------------------------------------------------------------------------------
def test_equal_rewards_with_float32_noise_carry_no_signal_where_trl_std_says_otherwise():
    from trl.trainer.utils import nanstd

    rows = [[1.0, 1.0]] * 8                              # format 1 × 0.2 + exact 1 × 1.0 for all eight
    combined = (torch.tensor(rows) * torch.tensor([0.2, 1.0])).nansum(dim=1)
    trl_std = nanstd(combined.view(1, 8), dim=1)
    assert not torch.isclose(trl_std, torch.zeros(1)).item()       # TRL 1.16 counts this group as signal…
    assert signal(rows, (0.2, 1.0)) == [False]                     # …it has none


def test_tolerance_separates_noise_from_real_differences():
    assert signal([[0.5]] * 7 + [[0.5 + 1e-7]]) == [False]
    assert signal([[0.5]] * 7 + [[0.501]]) == [True]
    assert signal([[0.5]] * 7 + [[0.501]], tolerance=0.01) == [False]
    assert signal([[0.0]] * 4 + [[1.0]] * 4 + [[1.0]] * 8, gens=8) == [True, False]


def test_none_rewards_are_handled_as_trl_does():
    assert signal([[NAN, NAN]] * 8, (1.0, 1.0)) == [False]                    # nothing scored
    assert signal([[NAN, NAN]] * 7 + [[1.0, 0.0]], (1.0, 1.0)) == [False]     # one scored completion
    # one function not applicable to half the completions: TRL's nansum counts it 0, so the totals differ
    assert signal([[1.0, 1.0]] * 4 + [[NAN, 1.0]] * 4, (1.0, 1.0)) == [True]
    assert signal([[1.0, NAN]] * 4 + [[NAN, NAN]] * 4, (1.0, 1.0)) == [False]  # the unscored ones left out
    assert signal([[float("inf")]] + [[2.0]] * 7) == [False]                   # non-finite values left out


def test_normalize_then_sum_asks_each_weighted_function():
    rows = [[1.0, float(i)] for i in range(8)]      # the first constant, the second varies
    assert signal(rows, (1.0, 1.0), aggregation="normalize_then_sum") == [True]
    assert signal(rows, (1.0, 0.0), aggregation="normalize_then_sum") == [False]
    with pytest.raises(ValueError, match="groups of 8"):
        signal([[1.0]] * 6, gens=8)


# --- the refill stream and the plan ---------------------------------------------------------------------
def test_refill_stream_is_deterministic_covers_each_pass_and_resumes():
    a, b = RefillStream(10, seed=3), RefillStream(10, seed=3)
    first = a.draw(7) + a.draw(7)                       # crosses into the second pass
    assert first == b.draw(14) and a.position == 14
    assert sorted(first[:10]) == list(range(10))        # one pass: every row once
    assert first[:10] != list(range(10))                # shuffled
    resumed = RefillStream(10, seed=3, position=a.state()["position"])
    assert resumed.draw(5) == a.draw(5)                 # a checkpoint's position continues the same stream
    assert RefillStream(10, seed=4).draw(10) != RefillStream(10, seed=3).draw(10)
    gen = torch.Generator().manual_seed(3)
    assert RefillStream(10, seed=3).draw(10) != torch.randperm(10, generator=gen).tolist()  # not TRL's order


def test_rows_for_rank_matches_the_repeat_sampler_layout():
    assert rows_for_rank([7, 9], 4, 0, 4) == [7, 7, 7, 7]
    assert rows_for_rank([7, 9], 4, 1, 4) == [9, 9, 9, 9]
    assert rows_for_rank([7, 9, 5], 2, 1, 3) == [9, 5, 5]   # a group split across ranks


def test_choose_groups_fills_then_pads_with_filler():
    chosen, filler, surplus = choose_groups([[True, False, False, True], [False, True, True, True]], 4)
    assert chosen == [(0, 0), (0, 3), (1, 1), (1, 2)] and filler == 0 and surplus == 1
    chosen, filler, surplus = choose_groups([[False, True], [False, False]], 2)
    assert chosen == [(0, 1), (0, 0)] and filler == 1 and surplus == 0


def test_assign_rows_gives_every_rank_its_share_and_moves_few():
    # rank 0 generated rows 0..3 of each round, rank 1 rows 4..7; rank 1's round-0 rows were dropped
    rows = [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0), (1, 1), (1, 4), (1, 5)]
    plan = assign_rows(rows, 4, 2)
    assert plan[0] == [(0, 0), (0, 1), (0, 2), (0, 3)]
    assert sorted(plan[1]) == [(1, 0), (1, 1), (1, 4), (1, 5)]
    assert sorted(plan[0] + plan[1]) == sorted(rows)
    with pytest.raises(ValueError):
        assign_rows(rows[:-1], 4, 2)


def test_stack_rows_pads_prompts_left_and_completions_right():
    a = {"prompt_ids": torch.tensor([5, 6]), "prompt_mask": torch.tensor([1, 1]),
         "completion_ids": torch.tensor([7]), "completion_mask": torch.tensor([1]), "advantages": torch.tensor(0.5)}
    b = {"prompt_ids": torch.tensor([0, 4, 5]), "prompt_mask": torch.tensor([0, 1, 1]),
         "completion_ids": torch.tensor([8, 9, 0]), "completion_mask": torch.tensor([1, 1, 0]),
         "advantages": torch.tensor(-0.5)}
    out = stack_rows([a, b], pad_token_id=0, device="cpu")
    assert out["prompt_ids"].tolist() == [[0, 5, 6], [0, 4, 5]]
    assert out["prompt_mask"].tolist() == [[0, 1, 1], [0, 1, 1]]
    assert out["completion_ids"].tolist() == [[7, 0, 0], [8, 9, 0]]
    assert out["completion_mask"].tolist() == [[1, 0, 0], [1, 1, 0]]
    assert out["advantages"].tolist() == [0.5, -0.5]



def test_stack_rows_pads_as_trl_does_ratios_to_one_and_widths_to_the_multiple():
    """TRL pads to pad_to_multiple_of, and its token-level importance ratio is exactly 1 where nothing was
    generated (VESPO adds its log unmasked, so a 0 there would zero the row's weight)."""
    a = {"completion_ids": torch.tensor([7]), "completion_mask": torch.tensor([1]),
         "importance_sampling_ratio": torch.tensor([0.9]), "old_per_token_logps": torch.tensor([-1.0])}
    b = {"completion_ids": torch.tensor([8, 9, 3]), "completion_mask": torch.tensor([1, 1, 1]),
         "importance_sampling_ratio": torch.tensor([1.1, 1.0, 0.8]),
         "old_per_token_logps": torch.tensor([-1.0, -2.0, -3.0])}
    out = stack_rows([a, b], pad_token_id=0, device="cpu", multiple=4)
    assert out["completion_ids"].shape == (2, 4) and out["old_per_token_logps"].shape == (2, 4)
    assert out["importance_sampling_ratio"][0].tolist() == pytest.approx([0.9, 1.0, 1.0, 1.0])
    seq = stack_rows([{"importance_sampling_ratio": torch.tensor([0.9])},
                      {"importance_sampling_ratio": torch.tensor([1.2])}], 0, "cpu", multiple=4)
    assert seq["importance_sampling_ratio"].shape == (2, 1)   # one ratio per sequence stays one

# --- the brief section ----------------------------------------------------------------------------------
def _with(workspace, name="ds.yaml", **sections):
    data = yaml.safe_load(example_brief_text())
    data.update(sections)
    p = workspace / name
    p.write_text(yaml.safe_dump(data))
    return p


BAD = [
    ({"max_rounds": 0}, "dynamic_sampling.max_rounds: 0 is out of range; use a value from 1 to 16"),
    ({"max_rounds": 17}, "dynamic_sampling.max_rounds: 17 is out of range; use a value from 1 to 16"),
    ({"max_rounds": 2.5}, "dynamic_sampling.max_rounds: expected integer, got float 2.5"),
    ({"max_rounds": "three"}, "dynamic_sampling.max_rounds: expected integer, got str 'three'"),
    ({"max_rounds": "3"}, "dynamic_sampling.max_rounds: '3' is text, not a number"),
    ({"tolerance": 0}, "dynamic_sampling.tolerance: 0 is out of range; use a value > 0 and ≤ 1"),
    ({"tolerance": -1e-6}, "dynamic_sampling.tolerance: -1e-06 is out of range"),
    ({"tolerance": "1e-6"}, "dynamic_sampling.tolerance: '1e-6' is text, not a number"),
    ({"max_round": 3}, "dynamic_sampling.max_round: unknown key; did you mean 'max_rounds'?"),
    (True, "dynamic_sampling: expected object or null, got bool True"),
    ([3], "dynamic_sampling: expected object or null, got list"),
]


@pytest.mark.parametrize("section,expect", BAD, ids=[str(b[0]) for b in BAD])
def test_bad_dynamic_sampling_names_the_field_and_the_fix(workspace, section, expect):
    with pytest.raises(ConfigError) as e:
        load_brief(_with(workspace, dynamic_sampling=section))
    assert expect in str(e.value)


def test_bad_section_exits_2_from_validate(workspace):
    p = _with(workspace, dynamic_sampling={"max_rounds": 0})
    res = subprocess.run([sys.executable, "-m", "grpo_rlvr", "validate", str(p)], capture_output=True, text=True)
    assert res.returncode == 2 and "dynamic_sampling.max_rounds" in res.stderr and "Traceback" not in res.stderr


def test_absent_is_off_empty_is_defaults_null_is_off_with_a_warning(workspace):
    assert load_brief(workspace / "brief.yaml").dynamic_sampling is None
    ds = load_brief(_with(workspace, dynamic_sampling={})).dynamic_sampling
    assert (ds.max_rounds, ds.tolerance, ds.origin) == (3, 1e-6, "brief")
    ds = load_brief(_with(workspace, dynamic_sampling={"max_rounds": 5, "tolerance": 1.0e-4})).dynamic_sampling
    assert (ds.max_rounds, ds.tolerance) == (5, 1e-4)
    b = load_brief(_with(workspace, dynamic_sampling=None))
    assert b.dynamic_sampling is None and any("dynamic_sampling: null" in w for w in b.warnings)
    b = load_brief(_with(workspace, dynamic_sampling={"tolerance": 0.05}))
    assert any("dynamic_sampling.tolerance: 0.05 also drops" in w for w in b.warnings)


def test_dapo_variant_brings_dynamic_sampling_and_the_brief_can_change_or_drop_it(workspace):
    (workspace / "diagnosis.json").write_text('{"findings": [{"id": "entropy_collapse"}]}')
    dapo = {"name": "dapo", "diagnosis": "diagnosis.json"}
    ds = load_brief(_with(workspace, variant=dapo)).dynamic_sampling
    assert (ds.max_rounds, ds.tolerance, ds.origin) == (3, 1e-6, "variant:dapo")
    ds = load_brief(_with(workspace, variant=dapo, dynamic_sampling={"max_rounds": 1})).dynamic_sampling
    assert (ds.max_rounds, ds.origin) == (1, "brief")
    b = load_brief(_with(workspace, variant=dapo, dynamic_sampling=None))
    assert b.dynamic_sampling is None and any("turns off the dynamic sampling the 'dapo'" in w for w in b.warnings)


def test_validate_reports_it_and_render_wires_it_only_when_on(workspace):
    from grpo_rlvr.cli.validate import format_validate_report
    from grpo_rlvr.run.render import render
    from grpo_rlvr.validate.report import validate_report

    p = _with(workspace, dynamic_sampling={"max_rounds": 2})
    report = validate_report(p)
    assert report["dynamic_sampling"] == {"max_rounds": 2, "tolerance": 1e-6, "from": "brief"}
    assert "up to 2 refill round(s), tolerance 1e-06 ← brief" in format_validate_report(report)
    assert validate_report(workspace / "brief.yaml")["dynamic_sampling"] is None

    on = render(p, out=workspace / "run-ds").dir
    lock = json.loads((on / "brief.lock.json").read_text())
    assert lock["dynamic_sampling"] == {"max_rounds": 2, "tolerance": 1e-6, "from": "brief"}
    train_py = (on / "train.py").read_text()
    assert "'dynamic_sampling': {'max_rounds': 2, 'tolerance': 1e-06}" in train_py
    compile(train_py, "train.py", "exec")

    off = render(workspace / "brief.yaml", out=workspace / "run-plain").dir
    plain = (off / "train.py").read_text()
    assert "'dynamic_sampling': None" in plain
    assert "dynamic_sampling" not in json.loads((off / "brief.lock.json").read_text())


def test_checkpoint_stream_state_read_missing_and_corrupt(tmp_path):
    from grpo_rlvr.trainer.dynamic_sampling import STATE_FILE, _read_stream_state

    assert _read_stream_state(tmp_path, 200) == (None, None)            # a checkpoint of a plain run
    (tmp_path / STATE_FILE).write_text(json.dumps(RefillStream(200, 1, position=37).state()))
    assert _read_stream_state(tmp_path, 200) == (37, None)
    (tmp_path / STATE_FILE).write_text("{not json")
    position, error = _read_stream_state(tmp_path, 200)
    assert position is None and STATE_FILE in error and "resume from another checkpoint" in error


def test_trainer_extends_the_held_out_trainer_and_keeps_its_settings():
    from trl import GRPOTrainer

    from grpo_rlvr.trainer.trainers import GRPOTrainerWithDynamicSampling, GRPOTrainerWithHeldOut

    cls = GRPOTrainerWithDynamicSampling   # what the rendered train.py builds, with the section's settings
    assert cls.__mro__[:3] == (GRPOTrainerWithDynamicSampling, GRPOTrainerWithHeldOut, GRPOTrainer)
    assert "evaluate" not in vars(cls)   # evaluation: the held-out one's
    keywords = inspect.signature(cls.__init__).parameters
    assert keywords["max_rounds"].kind is keywords["tolerance"].kind is inspect.Parameter.KEYWORD_ONLY
