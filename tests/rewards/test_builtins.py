"""The built-in rewards: TRL's calling contract, reasons, composition, robustness on arbitrary output."""

from __future__ import annotations

import math
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzz_profile import fuzz_settings
from grpo_rlvr.errors import RewardError
from grpo_rlvr.rewards import REGISTRY, build_reward, combine

CONV = lambda text: [{"role": "assistant", "content": text}]  # noqa: E731 - a conversational completion


def test_format_scores_structure_with_reasons():
    r = build_reward("format")
    got = r.explain(["<answer>7</answer>", "7", "<answer>7", "<answer>1</answer><answer>2</answer>", "x <answer>7</answer>",
                     "<think>a</think>\n<answer>7</answer>", "<answer>7</answer> so 7", "</answer>7<answer>"])
    assert [s.score for s in got] == [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0]
    assert got[1].reason == "no <answer> tag"
    assert got[2].reason == "no </answer> closing tag"
    assert "2 <answer> tags" in got[3].reason
    assert got[4].reason == "text before <answer>: 'x'"
    assert got[6].reason == "text after </answer>: 'so 7'"
    assert got[7].reason == "</answer> before <answer>"


def test_format_allows_reasoning_before_the_tag_when_asked():
    """A prompt that says "reason step by step, then give the answer inside <answer></answer>"."""
    r = build_reward("format", {"allow_text_before": True})
    got = r.explain(["Step 1: 3+4 = 7.\n<answer>7</answer>", "<answer>7</answer>", "Step 1.\n<answer>7</answer> ok",
                     "Step 1: 7"])
    assert [s.score for s in got] == [1.0, 1.0, 0.0, 0.0]
    assert got[2].reason == "text after </answer>: 'ok'" and got[3].reason == "no <answer> tag"
    custom = build_reward("format", {"pattern": r"<answer>\d+</answer>", "allow_text_before": True})
    assert custom(completions=["So:\n<answer>7</answer>", "So:\n<answer>x</answer>"]) == [1.0, 0.0]
    with pytest.raises(RewardError, match="allow_text_before"):
        build_reward("format", {"allow_text_before": "yes"})


def test_exact_match_normalizes_and_explains():
    r = build_reward("exact_match", {"extract": "tag"})
    got = r.explain(["<answer> 7.0 </answer>", "<answer>12</answer>", "no tag", "<answer>Paris.</answer>"],
                    answer=["7", "13", "1", "paris"])
    assert [s.score for s in got] == [1.0, 0.0, 0.0, 1.0]
    assert got[1].reason == "answer 12 ≠ 13"
    assert got[2].reason == "no <answer> tag"


def test_trl_calling_contract_plain_and_conversational():
    r = build_reward("exact_match")
    kwargs = {"prompts": ["1+1=", [{"role": "user", "content": "1+1="}]], "completion_ids": [[1, 2], [3]],
              "answer": ["2", "2"], "trainer_state": object(), "log_extra": print, "log_metric": print}
    out = r(completions=["<answer>2</answer>", CONV("<answer>3</answer>")], **kwargs)
    assert out == [1.0, 0.0]
    assert r.__name__ == "exact_match"  # TRL logs rewards/<__name__>/mean


def test_missing_ground_truth_column_is_a_config_error_not_a_score():
    """Outside training a missing column is bad input; in TRL's call it is no score (None), named for the trainer,
    and counted: never a made-up 0."""
    reward = build_reward("exact_match")
    with pytest.raises(RewardError, match="needs the dataset column 'answer'"):
        reward.explain(["<answer>1</answer>"])
    logged = []
    out = reward(completions=["<answer>1</answer>", "<answer>2</answer>"], answer=["1", None],
                 log_metric=lambda name, value: logged.append((name, value)))
    assert out == [1.0, None]
    assert reward.unscorable == [(1, "reward 'exact_match': the dataset column 'answer' holds no answer (None); give "
                                     "the row its ground truth, or drop the row")]
    assert logged == [("rewards/exact_match/unscorable", 0.5)]
    assert reward(completions=["<answer>1</answer>"]) == [None]


def test_correctness_does_not_pay_for_malformed_output():
    """Found by the demo's review: "<answer>3</answer> garbage" must not earn correctness, else a malformed
    completion (total 1.0) outscores a well-formed wrong one (0.2)."""
    for name in ("exact_match", "math"):  # extract: tag checks the tag as a brief's format reward does
        got = build_reward(name, {"extract": "tag"}).explain(["<answer>3</answer>\n</ans", "<answer>3</answer>"],
                                                             answer=["3", "3"])
        assert [s.score for s in got] == [0.0, 1.0]
        assert got[0].reason == "malformed, answer not counted: text after </answer>: '</ans'"
        loose = build_reward(name, {"extract": "tag", "require_format": False}).explain(["<answer>3</answer>\n</ans"],
                                                                                      answer=["3"])
        assert loose[0].score == 1.0


def test_math_reward_equivalence_and_reasons():
    r = build_reward("math", {"extract": "tag"})
    got = r.explain(["<answer>\\frac{1}{2}</answer>", "<answer>0.4</answer>", "<answer>2x+x</answer>", "none"],
                    answer=["0.5", "0.5", "3x", "1"])
    assert [s.score for s in got] == [1.0, 0.0, 1.0, 0.0]
    assert "≠" in got[1].reason and got[3].reason == "no <answer> tag"


def test_math_timeout_holds_off_the_main_thread():
    """A pathological expression scored from a worker thread (as TRL may) ends within the timeout."""
    r = build_reward("math", {"timeout_s": 1})
    out: list = []
    evil = "<answer>2^{2^{2^{2^{2^{2^{99}}}}}}</answer>"
    t = threading.Thread(target=lambda: out.extend(r.explain([evil], answer=["4"])))
    t.start()
    t.join(timeout=60)
    assert not t.is_alive(), "math reward hung off the main thread"
    assert out[0].score == 0.0


def test_unknown_reward_suggests():
    with pytest.raises(RewardError, match="Did you mean 'exact_match'"):
        build_reward("exact_mach")
    with pytest.raises(RewardError, match="unknown params bogus"):
        build_reward("format", {"bogus": 1})
    with pytest.raises(RewardError, match="not a valid regular expression"):
        build_reward("format", {"pattern": "("})


def test_user_reward_from_file_with_reasons(tmp_path):
    (tmp_path / "my_reward.py").write_text(
        "def reward(completions, answer, **kw):\n"
        "    return [(1.0, 'yes') if a in c else (0.0, 'no') for c, a in zip(completions, answer)]\n")
    r = build_reward("my_reward.py", base_dir=tmp_path, kind="correctness")
    got = r.explain(["abc", "xyz"], answer=["b", "b"])
    assert [(s.score, s.reason) for s in got] == [(1.0, "yes"), (0.0, "no")]
    assert r.kind == "correctness"


def test_composite_well_formed_wrong_outscores_malformed():
    fmt, em = build_reward("format"), build_reward("exact_match")
    res = combine([fmt, em], [0.2, 1.0], ["<answer>8</answer>", "8", "<answer>7</answer>"], answer=["7"] * 3)
    totals = [r["total"] for r in res]
    assert totals[2] > totals[0] > totals[1]


_text = st.one_of(st.text(max_size=300), st.text(alphabet="<>/answer{}\\$0123456789.+-", max_size=80))


@fuzz_settings(150)
@given(texts=st.lists(_text, min_size=1, max_size=6), conv=st.booleans())
def test_fuzz_rewards_never_raise_and_return_one_finite_score_each(texts, conv):
    completions = [CONV(t) if conv else t for t in texts]
    for name in ("format", "exact_match"):
        out = build_reward(name)(completions=completions, answer=["7"] * len(texts))
        assert len(out) == len(texts)
        assert all(v is None or math.isfinite(v) for v in out)


@fuzz_settings(25)
@given(texts=st.lists(_text, min_size=1, max_size=4))
def test_fuzz_math_reward(texts):
    out = _MATH(completions=texts, answer=["7"] * len(texts))
    assert len(out) == len(texts) and all(v is None or math.isfinite(v) for v in out)


_MATH = build_reward("math", {"timeout_s": 2})


def test_registry_lists_only_working_rewards():
    needs = {"rubric_judge": {"base_url": "http://127.0.0.1:9/v1", "model": "judge", "rubric": "Is it right?"}}
    for name, entry in REGISTRY.items():
        assert build_reward(name, needs.get(name)).name == name
        assert entry.summary


def test_unit_tests_reward_scores_share_passed_and_reports_isolation():
    r = build_reward("unit_tests", {"timeout_s": 2})
    tests = ["assert add(1, 2) == 3", "assert add(0, 0) == 0"]
    got = r.explain(["```python\ndef add(a, b):\n    return a + b\n```", "def add(a, b):\n    return a - b",
                     "import sys; sys.exit(0)", "no code at all"], tests=[tests] * 4)
    assert [s.score for s in got] == [1.0, 0.5, 0.0, 0.0]
    assert "returned -1, expected 3" in got[1].reason
    assert "process" in r.notes["isolation_layers"]
    binary = build_reward("unit_tests", {"threshold": 1.0})
    assert binary(completions=["def add(a, b):\n    return a - b"], tests=[tests]) == [0.0]


def test_unit_tests_reward_rejects_bad_params_and_bad_test_data():
    with pytest.raises(RewardError, match="threshold"):
        build_reward("unit_tests", {"threshold": 2})
    with pytest.raises(RewardError, match="memory_mb"):
        build_reward("unit_tests", {"memory_mb": 1})
    with pytest.raises(RewardError, match="column 'tests'"):
        build_reward("unit_tests").explain(["x = 1"], tests=[42])
    reward = build_reward("unit_tests")   # in training: that sample unscored and named, the rest scored
    assert reward(completions=["x = 1", "x = 1"], tests=[42, ["assert x == 1"]]) == [None, 1.0]
    assert [(i, why.split(":")[1].strip()) for i, why in reward.unscorable] == [(0, "column 'tests'")]


def test_length_penalty_soft_overlong_and_linear():
    soft = build_reward("length_penalty", {"reward": "format", "budget": 20, "cache": 5, "unit": "chars"})
    ok, ramp, over = "<answer>7</answer>"[:15], "<answer>77</answer>", "<answer>" + "7" * 30 + "</answer>"
    got = soft.explain([ok, ramp, over])
    assert got[0].score == 0.0  # malformed, short: no penalty beyond the inner score
    assert 0 < 1.0 - got[1].score < 1.0 and got[2].score == 0.0
    assert "length 19 chars" in got[1].reason
    lin = build_reward("length_penalty", {"reward": "format", "budget": 20, "unit": "chars", "mode": "linear"})
    assert lin.explain([over])[0].score == pytest.approx(1.0 - 1.0)
    assert lin.kind == "format"
    tok_ids = build_reward("length_penalty", {"reward": "format", "budget": 4, "cache": 2})
    assert tok_ids(completions=["<answer>1</answer>"], completion_ids=[[1, 2, 3]]) == [0.5]
    with pytest.raises(RewardError, match="needs completion_ids"):
        tok_ids(completions=["<answer>1</answer>"])
    with pytest.raises(RewardError, match="params.mode"):
        build_reward("length_penalty", {"mode": "cubic"})


def test_trl_cli_offers_every_registry_reward_that_builds_without_parameters():
    """The names TRL's own command line resolves (``module.attribute``) come from the registry, not a list."""
    import importlib

    from grpo_rlvr.rewards import REGISTRY, trl_cli

    offered = set(trl_cli.__all__)
    assert offered | {"rubric_judge"} == set(REGISTRY) and "rubric_judge" not in offered  # it needs a rubric, a URL
    module_path, attr = "grpo_rlvr.rewards.trl_cli.exact_match".rsplit(".", 1)  # as trl/scripts/grpo.py does
    reward = getattr(importlib.import_module(module_path), attr)
    assert reward.__name__ == "exact_match" and reward is trl_cli.exact_match
    assert reward(completions=["<answer>4</answer>", "<answer>5</answer>"], answer=["4", "4"]) == [1.0, 0.0]
    with pytest.raises(AttributeError, match="rubric_judge"):
        trl_cli.rubric_judge  # noqa: B018 - the attribute access is the test
