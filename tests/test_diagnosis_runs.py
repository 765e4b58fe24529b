"""Real tiny GRPO runs on CPU, each engineered to show one failure mode, diagnosed from the logs TRL wrote.
A healthy run is the demo's own (see test_demo.py); here each run must raise its own finding."""

from __future__ import annotations

import pytest
import yaml

from artifacts import make_artifact
from conftest import example_brief_text
from grpo_rlvr.diagnosis import diagnose
from grpo_rlvr.launch import train
from grpo_rlvr.run_dir import render

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def warm_model_dir(tmp_path_factory):
    """The demo's warmed-up tiny model (150 SFT steps with label smoothing): it succeeds sometimes."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from grpo_rlvr.demo import arithmetic_task as task
    from grpo_rlvr.demo import tiny_model
    from grpo_rlvr.demo.pipeline import WARMUP, _build_base_model
    from grpo_rlvr.demo.warmup import sft_warmup

    base = _build_base_model(seed=0, fresh=False)
    tok, model = AutoTokenizer.from_pretrained(base), AutoModelForCausalLM.from_pretrained(base)
    rows = task.make_rows(2000, seed=1)
    sft_warmup(model, tok, rows, [task.target_completion(r["answer"]) for r in rows], seed=0, **WARMUP)
    d = tmp_path_factory.mktemp("warm") / "model"
    tiny_model.save_pretrained(model, tok, d, {"kind": "warm"})
    return d


def run_case(workspace, model_dir, grpo: dict, rewards=None, steps=40):
    data = yaml.safe_load(example_brief_text())
    data["grpo"].update({"per_device_train_batch_size": 32, "logging_steps": 2, "max_steps": steps,
                         "save_steps": 1000, **grpo})
    if rewards is not None:
        data["rewards"] = rewards
    (workspace / "brief.yaml").write_text(yaml.safe_dump(data))
    (workspace / "model").unlink()
    (workspace / "model").symlink_to(model_dir, target_is_directory=True)
    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    run = render(workspace / "brief.yaml").dir
    res = train(run)
    assert res.ok, f"training failed: exit {res.returncode}"
    return diagnose(run)


def test_untrained_model_has_no_learning_signal(workspace, tiny_model_dir):
    # make_artifact's synthetic samples pass the gate; the model itself never succeeds
    diag = run_case(workspace, tiny_model_dir, {}, steps=10)
    ids = {f.id for f in diag.findings}
    assert "no_learning_signal" in ids, diag.format()


def test_reward_that_pays_for_length(workspace, warm_model_dir):
    (workspace / "pays_length.py").write_text(
        "def reward(completions, **kw):\n"
        "    return [min(len(c if isinstance(c, str) else c[0]['content']) / 60, 1.0) for c in completions]\n")
    rewards = [{"name": "format", "weight": 0.2}, {"name": "exact_match", "weight": 0.0},
               {"name": "pays_length.py", "kind": "shaping", "weight": 1.0}]
    diag = run_case(workspace, warm_model_dir, {"max_completion_length": 64, "learning_rate": 1e-4}, rewards)
    assert "length_reward_coupling" in {f.id for f in diag.findings}, diag.format()
    assert diag.data["recommended_variant"] == "dr_grpo"


@pytest.fixture(scope="module")
def format_only_model_dir(tmp_path_factory):
    """A model warmed up on the format with *random* answers: it writes <answer>N</answer> but cannot add."""
    import random

    from transformers import AutoModelForCausalLM, AutoTokenizer

    from grpo_rlvr.demo import arithmetic_task as task
    from grpo_rlvr.demo import tiny_model
    from grpo_rlvr.demo.pipeline import _build_base_model
    from grpo_rlvr.demo.warmup import sft_warmup

    base = _build_base_model(seed=0, fresh=False)
    tok, model = AutoTokenizer.from_pretrained(base), AutoModelForCausalLM.from_pretrained(base)
    rows = task.make_rows(2000, seed=1)
    rng = random.Random(0)
    sft_warmup(model, tok, rows, [task.target_completion(str(rng.randint(0, 18))) for _ in rows], seed=0,
               steps=80, lr=1e-3, batch_size=32)
    d = tmp_path_factory.mktemp("format-only") / "model"
    tiny_model.save_pretrained(model, tok, d, {"kind": "format-only"})
    return d


def test_format_rewarded_correctness_not(workspace, format_only_model_dir):
    """Only the format pays (correctness weight 0): the format part saturates while correctness stays at chance."""
    rewards = [{"name": "format", "weight": 1.0}, {"name": "exact_match", "weight": 0.0}]
    diag = run_case(workspace, format_only_model_dir, {"learning_rate": 1e-3}, rewards)
    assert "reward_hacking" in {f.id for f in diag.findings}, diag.format()
