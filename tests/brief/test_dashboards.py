"""``grpo.report_to`` is checked against the dashboards transformers' Trainer knows: an unknown name is refused by
validate (transformers would refuse it only once the model has loaded), a dashboard not installed here is a warning
(the run may train elsewhere), and the rendered train.py asks transformers itself before the model loads."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest
import yaml

from artifacts import make_artifact
from briefs import example_brief_text
from grpo_rlvr.brief.dashboards import INTEGRATIONS, check_report_to
from grpo_rlvr.brief.loader import load_brief
from grpo_rlvr.errors import ConfigError


def test_the_names_are_transformers_own():
    from transformers.integrations.integration_utils import INTEGRATION_TO_CALLBACK

    assert set(INTEGRATIONS) == set(INTEGRATION_TO_CALLBACK)


def test_a_missing_package_is_one_transformers_cannot_start_without(monkeypatch):
    """Hide the modules our table names for a dashboard installed here: transformers' own callback refuses to
    start, so the warning is about what the Trainer really needs."""
    from transformers.integrations.integration_utils import INTEGRATION_TO_CALLBACK

    checked = 0
    real = importlib.util.find_spec
    for name, modules in INTEGRATIONS.items():
        if not modules or not any(real(m) for m in modules):
            continue
        with monkeypatch.context() as m:
            m.setattr(importlib.util, "find_spec", lambda mod, *a, _h=modules: None if mod in _h else real(mod, *a))
            with pytest.raises(RuntimeError, match="requires"):
                INTEGRATION_TO_CALLBACK[name]()
            assert check_report_to(name)[1], name
        INTEGRATION_TO_CALLBACK[name]()   # and starts with them
        checked += 1
    assert checked >= 2   # trackio and tensorboard, both in the tested stack


REFUSE_EACH = """
import json, sys
from types import SimpleNamespace
from grpo_rlvr.errors import MachineError
from grpo_rlvr.run.guard import refuse_missing_dashboards
said = {}
for name in sys.argv[1:]:
    try:
        refuse_missing_dashboards(SimpleNamespace(report_to=[name]))
        said[name] = None
    except MachineError as e:
        said[name] = str(e)
print(json.dumps(said))
"""


def test_train_py_refuses_every_dashboard_that_cannot_start_here_with_a_message():
    """Each integration transformers knows that cannot start here (its package missing; kubeflow's server unset) is
    a MachineError naming it and the fix, whatever the integration raises (neptune raises ValueError), and the
    half-built callbacks' own complaints (neptune's and mlflow's ``__del__``) print no traceback."""
    import os

    missing = [n for n, mods in INTEGRATIONS.items()
               if (mods is None and "KUBEFLOW_TRAINER_SERVER_URL" not in os.environ)
               or (mods and not any(importlib.util.find_spec(m) for m in mods))]
    assert {"neptune", "mlflow", "kubeflow"} <= set(missing)   # the ones that raise otherwise, or complain
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", REFUSE_EACH, *missing], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr[-3000:]
    said = json.loads(out.stdout)
    for name in missing:
        assert said[name] and said[name].startswith("grpo.report_to: ") and "cannot start on this machine" in said[name]
        assert said[name].endswith("or set grpo.report_to: none in the brief and render again"), said[name]


def brief_with(workspace, report_to):
    data = yaml.safe_load(example_brief_text())
    data["grpo"]["report_to"] = report_to
    p = workspace / "dash.yaml"
    p.write_text(yaml.safe_dump(data))
    return p


@pytest.mark.parametrize("value,said", [
    ("tensorbord", "unknown dashboard 'tensorbord'. Did you mean 'tensorboard'? Available: azure_ml"),
    (["trackio", "none"], "'none' stands alone"),
    (3, "is neither a dashboard's name nor a list of names"),
    ({"wandb": True}, "is neither a dashboard's name nor a list of names"),
])
def test_a_value_transformers_would_refuse_is_refused_by_validate(workspace, value, said):
    with pytest.raises(ConfigError) as e:
        load_brief(brief_with(workspace, value))
    assert any(p.startswith("grpo.report_to: ") and said in p for p in e.value.problems), e.value.problems
    out = subprocess.run([sys.executable, "-m", "grpo_rlvr", "validate", str(workspace / "dash.yaml")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 2 and said in out.stderr and "Traceback" not in out.stderr, out.stderr


@pytest.mark.parametrize("value", ["none", "all", "tensorboard", ["trackio", "tensorboard"]])
def test_installed_dashboards_pass_quietly(workspace, value):
    b = load_brief(brief_with(workspace, value))
    assert b.grpo["report_to"] == value and not [w for w in b.warnings if "report_to" in w]


def test_a_dashboard_not_installed_here_is_a_warning(workspace):
    if importlib.util.find_spec("swanlab") is not None:
        pytest.skip("swanlab is installed here")
    b = load_brief(brief_with(workspace, ["tensorboard", "swanlab"]))
    said = [w for w in b.warnings if w.startswith("grpo.report_to: ")]
    assert len(said) == 1 and "'swanlab' needs the swanlab package" in said[0] and "pip install swanlab" in said[0]


@pytest.mark.e2e
def test_train_stops_before_the_model_loads_when_a_dashboard_cannot_start(workspace):
    """The run was rendered where swanlab is installed (hidden here from validate with a warning); the training
    machine has none: train.py says so and exits 2 (bad input for this machine), before any model loads, instead of
    a traceback after; ``grpo-rlvr train`` exits 1 (training failed) and reports train.py's code."""
    if importlib.util.find_spec("swanlab") is not None:
        pytest.skip("swanlab is installed here")
    from grpo_rlvr.run.render import render

    brief = brief_with(workspace, "swanlab")
    make_artifact(brief, workspace / "out" / "inspection")
    run = render(brief).dir
    out = subprocess.run([sys.executable, "-m", "grpo_rlvr", "train", str(run), "--json"], capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 1, out.stderr[-3000:]
    assert "grpo.report_to: SwanLabCallback cannot start on this machine" in out.stderr
    assert "set grpo.report_to: none in the brief and render again" in out.stderr
    assert "Traceback" not in out.stderr
    script = (run / "train.py").read_text()   # the refusal comes before the data and the model are loaded
    assert script.index("refuse_missing_dashboards(config)") < script.index("= load_split(DATASET)") \
        < script.index("trainer = build_trainer(")
    doc = json.loads(out.stdout)
    assert doc["ok"] is False and doc["returncode"] == 2


@pytest.mark.parametrize("value", ["trackio", ["trackio", "tensorboard"], "all", "tensorboard", "none"])
def test_a_trackio_run_is_filed_under_the_briefs_name(workspace, value):
    """trackio's project is TrainingArguments.project, "huggingface" unless set: grpo-rlvr sets the brief's name
    (recorded as the dashboard layer's) whatever report_to says (only trackio reads it, and a machine without
    trackio then renders the same config), and a brief's own ``grpo.project`` stands."""
    b = load_brief(brief_with(workspace, value))
    assert b.grpo.get("project") == "arithmetic-demo" and b.origin["project"] == "dashboard"
    data = yaml.safe_load((workspace / "dash.yaml").read_text())
    data["grpo"]["project"] = "mine"
    (workspace / "dash.yaml").write_text(yaml.safe_dump(data))
    assert load_brief(workspace / "dash.yaml").grpo["project"] == "mine"
