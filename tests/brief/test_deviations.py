"""`grpo-rlvr validate` marks every departure from the skill's recipe, says what grounds it, and warns when a
training setting changes before a stable, inspected base run; a ``grpo:`` override that sets a variant's values
is reported as that variant and needs that variant's diagnosis. Diagnoses here are written by the real
``grpo_rlvr.diagnosis.diagnose`` from TRL-shaped logs; the CLI runs as a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from briefs import example_brief_text, shipped_example_text
from grpo_rlvr.brief import load_brief
from grpo_rlvr.brief.variants import VARIANTS, signature, variants_in
from grpo_rlvr.diagnosis import diagnose
from grpo_rlvr.errors import ConfigError
from grpo_rlvr.run.guard import SMOKE_MARKER


def validate(brief, *extra) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grpo_rlvr", "validate", str(brief), *extra],
                          capture_output=True, text=True)


def brief_with(workspace, name, grpo=None, **sections):
    data = yaml.safe_load(example_brief_text())
    data["grpo"] = {k: v for k, v in data["grpo"].items() if k not in ("learning_rate", "lr_scheduler_type")}
    data["grpo"].update(grpo or {})
    data.pop("deviations")                 # the demo's reasons are for the two settings removed above
    data.update(sections)
    p = workspace / name
    p.write_text(yaml.safe_dump(data))
    return p


def logged_run(folder, n=20, **series) -> dict:
    """Records for steps 5, 10, … as TRL's trainer_state.json keeps them; ``series``: key -> f(record index)."""
    base = dict(reward=lambda i: 0.2 + 0.02 * i, entropy=lambda i: 0.4 - 0.008 * i,
                frac_reward_zero_std=lambda i: 0.1, completions__mean_length=lambda i: 20.0,
                completions__clipped_ratio=lambda i: 0.02, kl=lambda i: 0.01,
                rewards__format__mean=lambda i: 0.7 + 0.01 * i,
                rewards__exact_match__mean=lambda i: 0.1 + 0.015 * i)
    base.update(series)
    folder.mkdir(parents=True, exist_ok=True)
    records = [{"step": 5 * (i + 1), "loss": 0.01, **{k.replace("__", "/"): f(i) for k, f in base.items()}}
               for i in range(n)]
    (folder / "trainer_state.json").write_text(json.dumps({"log_history": records}))
    return diagnose(str(folder / "trainer_state.json"), out_dir=folder).data


def test_the_demo_brief_lists_its_departures_and_grounds_its_rate_by_its_stated_reason(workspace):
    (workspace / "brief.yaml").write_text(shipped_example_text())   # as shipped (the tests' copy loosens its audit)
    out = validate(workspace / "brief.yaml", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    devs = {d["key"]: d for d in data["recipe_deviations"]}
    lr = devs["learning_rate"]
    assert (lr["value"], lr["recipe"], lr["origin"], lr["kind"]) == (2e-4, 5e-7, "brief", "training")
    assert lr["grounded_by"].startswith("the brief's stated reason (deviations.learning_rate): the recipe's 5e-7")
    assert devs["lr_scheduler_type"]["recipe"] is None
    assert "deviations.lr_scheduler_type" in devs["lr_scheduler_type"]["grounded_by"]
    # batch split and run length are setup: marked, not warned about
    assert devs["per_device_train_batch_size"]["kind"] == "setup" and devs["per_device_train_batch_size"]["grounded_by"]
    assert devs["use_vllm"]["origin"] == "hardware" and devs["use_vllm"]["grounded_by"]  # CPU: no vLLM
    assert "num_generations" not in devs and "beta" not in devs and "loss_type" not in devs
    assert data["warnings"] == [], data["warnings"]       # the shipped demo brief does not warn about itself
    text = validate(workspace / "brief.yaml").stdout
    assert "≠ learning_rate" in text and "NOTHING YET" not in text and "Warning" not in text


def test_a_rate_changed_without_a_stated_reason_is_warned_about_with_the_three_ways_out(workspace):
    data = yaml.safe_load((workspace / "brief.yaml").read_text())
    del data["deviations"]["lr_scheduler_type"]
    (workspace / "unstated.yaml").write_text(yaml.safe_dump(data))
    out = json.loads(validate(workspace / "unstated.yaml", "--json").stdout)
    devs = {d["key"]: d for d in out["recipe_deviations"]}
    assert devs["lr_scheduler_type"]["grounded_by"] is None and devs["learning_rate"]["grounded_by"]
    warning = next(w for w in out["warnings"] if "before a stable, inspected base run" in w)
    assert "lr_scheduler_type 'constant'" in warning and "learning_rate" not in warning
    assert "base_run.diagnosis" in warning and "deviations: {lr_scheduler_type: <a sentence saying why>}" in warning
    text = validate(workspace / "unstated.yaml").stdout
    assert "NOTHING YET: before a stable, inspected base run" in text


def test_a_stated_reason_must_say_why_and_one_for_an_unchanged_setting_is_warned_about(workspace):
    data = yaml.safe_load((workspace / "brief.yaml").read_text())
    data["deviations"]["learning_rate"] = "tiny model"
    (workspace / "short.yaml").write_text(yaml.safe_dump(data))
    out = validate(workspace / "short.yaml")
    assert out.returncode == 2 and "deviations.learning_rate: 'tiny model' is too short to say why" in out.stderr
    with pytest.raises(ConfigError, match="deviations.learning_rate"):
        load_brief(workspace / "short.yaml")
    data["deviations"] = {"beta": "the KL term is kept stronger because this reward is easy to game"}
    (workspace / "stale.yaml").write_text(yaml.safe_dump(data))
    out = json.loads(validate(workspace / "stale.yaml", "--json").stdout)
    assert any(w.startswith("deviations.beta: the brief's grpo: section does not set beta") for w in out["warnings"])


def test_a_stated_reason_never_stands_in_for_a_variants_diagnosis(workspace):
    p = brief_with(workspace, "v.yaml", {"loss_type": "dr_grpo"},
                   deviations={"loss_type": "we believe Dr.GRPO suits this data better than plain GRPO"})
    out = validate(p)
    assert out.returncode == 2 and "'dr_grpo' variant set by hand" in out.stderr, out.stderr


def test_the_plain_recipe_has_no_training_departure(workspace):
    out = validate(brief_with(workspace, "plain.yaml"), "--json")
    data = json.loads(out.stdout)
    assert [d for d in data["recipe_deviations"] if d["kind"] == "training"] == []
    assert not any("before a stable" in w for w in data["warnings"])
    assert data["variant"] is None


@pytest.mark.parametrize("grpo,key,recipe", [
    ({"learning_rate": 1.0e-6}, "learning_rate", 5e-7),
    ({"beta": 0.04}, "beta", 0.01),
    ({"num_generations": 16, "per_device_train_batch_size": 16}, "num_generations", 8),
    ({"loss_type": "bnpo"}, "loss_type", "grpo"),
    ({"temperature": 0.7}, "temperature", 1.0),
])
def test_each_recipe_setting_changed_by_hand_is_warned_about(workspace, grpo, key, recipe):
    data = json.loads(validate(brief_with(workspace, "b.yaml", grpo), "--json").stdout)
    dev = next(d for d in data["recipe_deviations"] if d["key"] == key)
    assert dev["recipe"] == recipe and dev["kind"] == "training" and dev["grounded_by"] is None
    assert any(f"{key} " in w and "before a stable, inspected base run" in w for w in data["warnings"])


def test_a_diagnosed_base_run_grounds_the_change(workspace):
    diag = logged_run(workspace / "base" / "output", kl=lambda i: 0.01 * 1.4 ** i)  # KL blows up
    assert "kl_blowup" in {f["id"] for f in diag["findings"]}
    p = brief_with(workspace, "b.yaml", {"learning_rate": 2.5e-7},
                   base_run={"diagnosis": "base/output/diagnosis.json"})
    data = json.loads(validate(p, "--json").stdout)
    lr = next(d for d in data["recipe_deviations"] if d["key"] == "learning_rate")
    assert lr["grounded_by"] == f"the base run's diagnosis {workspace / 'base/output/diagnosis.json'}"
    assert not any("before a stable" in w for w in data["warnings"])


def test_a_smoke_test_or_a_missing_diagnosis_grounds_nothing(workspace):
    smoke = workspace / "smoke" / "output"
    smoke.mkdir(parents=True)
    (smoke / SMOKE_MARKER).write_text("{}")
    logged_run(smoke)
    for diag, why in (("smoke/output/diagnosis.json", "unreviewed smoke test"),
                      ("nowhere/diagnosis.json", "does not exist")):
        p = brief_with(workspace, "b.yaml", {"beta": 0.0}, base_run={"diagnosis": diag})
        data = json.loads(validate(p, "--json").stdout)
        warning = next(w for w in data["warnings"] if "before a stable, inspected base run" in w)
        assert why in warning


def test_variant_signatures_come_from_the_table():
    assert signature("dr_grpo") == {"loss_type": "dr_grpo", "scale_rewards": "none"}
    assert "beta" not in signature("dapo") and "loss_type" not in signature("gspo")  # shared / the recipe's own
    for name, spec in VARIANTS.items():
        assert signature(name), f"{name} has no value that marks it"
        assert set(variants_in({k: v for k, v in spec.delta.items() if not isinstance(v, dict)})) == {name}
    assert variants_in({"beta": 0.0, "loss_type": "grpo"}) == {}


def test_a_hand_set_variant_needs_its_diagnosis(workspace):
    out = validate(brief_with(workspace, "dr.yaml", {"loss_type": "dr_grpo"}))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "grpo: loss_type: 'dr_grpo' is the 'dr_grpo' variant set by hand" in out.stderr
    assert "variant: {name: dr_grpo, diagnosis: <diagnosis.json>}" in out.stderr
    # a diagnosis that shows another failure mode does not do either
    logged_run(workspace / "healthy")
    p = brief_with(workspace, "dr2.yaml", {"loss_type": "dr_grpo"}, base_run={"diagnosis": "healthy/diagnosis.json"})
    with pytest.raises(ConfigError, match=r"\(the 'dr_grpo' variant\): diagnosis.json shows no failure mode"):
        load_brief(p)


def test_a_hand_set_variant_with_its_diagnosis_is_reported_as_that_variant(workspace):
    logged_run(workspace / "base", completions__mean_length=lambda i: 20 + 3 * i,
               rewards__exact_match__mean=lambda i: 0.1)
    p = brief_with(workspace, "dr.yaml", {"loss_type": "dr_grpo"}, base_run={"diagnosis": "base/diagnosis.json"})
    out = validate(p, "--json")
    assert out.returncode == 0, out.stderr
    v = json.loads(out.stdout)["variant"]
    assert v["name"] == "dr_grpo" and not v["declared"] and v["set_by"] == {"loss_type": "dr_grpo"}
    assert v["missing"] == {"scale_rewards": "none"}
    text = validate(p).stdout
    assert "variant      dr_grpo set by hand through grpo: loss_type='dr_grpo'" in text
    assert "scale_rewards='none', which this brief does not set" in text


def test_a_declared_variant_plus_another_variants_values_needs_both(workspace):
    logged_run(workspace / "base", entropy=lambda i: 0.5 * 0.8 ** i, reward=lambda i: 0.3,
               rewards__exact_match__mean=lambda i: 0.1)  # entropy collapse: DAPO, not Dr.GRPO
    p = brief_with(workspace, "v.yaml", {"scale_rewards": "none"},
                   variant={"name": "dapo", "diagnosis": "base/diagnosis.json"})
    with pytest.raises(ConfigError, match=r"grpo: scale_rewards: 'none' \(the 'dr_grpo' variant\)"):
        load_brief(p)
    p = brief_with(workspace, "v2.yaml", {}, variant={"name": "dapo", "diagnosis": "base/diagnosis.json"})
    data = json.loads(validate(p, "--json").stdout)
    assert data["variant"]["name"] == "dapo" and data["variant"]["declared"]
    eps = next(d for d in data["recipe_deviations"] if d["key"] == "epsilon_high")
    assert eps["origin"] == "variant:dapo" and "variant.diagnosis" in eps["grounded_by"]
