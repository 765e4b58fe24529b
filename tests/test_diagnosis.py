"""Diagnosis detectors on logged metric histories: each failure mode is named with evidence and the variant
it calls for, and a healthy history raises no alarm. (Histories here are written as TRL logs them; the e2e
demo test diagnoses a real run.)"""

from __future__ import annotations

import json

import pytest

from grpo_rlvr.diagnosis import diagnose
from grpo_rlvr.errors import ConfigError, InputFileError


def history(n=20, **series):
    """Log records for steps 5, 10, …; each series is a function of the record index 0..n-1."""
    out = []
    for i in range(n):
        rec = {"step": 5 * (i + 1), "loss": 0.01}
        for key, fn in series.items():
            rec[key.replace("__", "/")] = fn(i)
        out.append(rec)
    return out


HEALTHY = dict(reward=lambda i: 0.2 + 0.02 * i, rewards__format__mean=lambda i: 0.7 + 0.01 * i,
               rewards__exact_match__mean=lambda i: 0.1 + 0.015 * i, entropy=lambda i: 0.4 - 0.008 * i,
               frac_reward_zero_std=lambda i: 0.1, completions__mean_length=lambda i: 20.0,
               completions__clipped_ratio=lambda i: 0.02, kl=lambda i: 0.01 + 0.001 * i,
               clip_ratio__region_mean=lambda i: 0.0)


def write_state(tmp_path, records) -> str:
    p = tmp_path / "trainer_state.json"
    p.write_text(json.dumps({"log_history": records}))
    return str(p)


def ids(tmp_path, **override):
    res = diagnose(write_state(tmp_path, history(**{**HEALTHY, **override})))
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
     "reward_hacking", "dr_grpo"),
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
    from grpo_rlvr.run_dir import render

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
        diagnose(write_state(tmp_path, history(**HEALTHY)), apply_to=tmp_path / "x.yaml")


def test_no_logs_is_a_clear_error(tmp_path):
    with pytest.raises(InputFileError, match="no metrics.jsonl or trainer_state.json"):
        diagnose(tmp_path)
