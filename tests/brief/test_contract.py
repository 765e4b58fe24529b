"""The example contract: every brief in examples/ carries answers written as its own system prompt asks
(``prompt.examples``), and its own rewards rank them correct > well-formed wrong > malformed. ``validate`` runs
the same check on any brief that has examples, and fails naming the example and the fix."""

from __future__ import annotations

import subprocess

import pytest
import yaml

from grpo_rlvr.brief import load_brief
from grpo_rlvr.brief.contract import KINDS, check_contract
from grpo_rlvr.errors import ConfigError
from grpo_rlvr.validate.report import validate_report
from paths import CLI, REPO

EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))


@pytest.fixture(autouse=True)
def _offline(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_ranks_its_own_examples(path):
    data = yaml.safe_load(path.read_text())
    assert (data.get("prompt") or {}).get("examples"), f"{path.name}: add prompt.examples (correct, wrong, malformed)"
    results = check_contract(load_brief(path))
    assert results and all(not isinstance(r, str) for r in results), results
    for r in results:
        t = r.totals
        assert t["correct"] > t["wrong"] > t["malformed"], (path.name, r.scores)
        # correctness never pays for the malformed one, and does pay for the correct one
        specs = load_brief(path).rewards  # in the order the scores are (no judge among the examples' rewards)
        for spec, (name, (score, reason)) in zip(specs, r.scores["malformed"].items(), strict=True):
            if spec.params.get("format"):
                assert score == 0.0, (path.name, name, reason)
        assert all(s == 1.0 for s, _ in r.scores["correct"].values()), (path.name, r.scores["correct"])


def _brief(tmp_path, fmt_params: dict, correct: str, malformed: str = "The answer is 7.") -> str:
    (tmp_path / "data.jsonl").write_text('{"question": "3+4?", "answer": "7"}\n')
    brief = {"name": "contract", "model": {"name_or_path": "Qwen/Qwen2.5-0.5B-Instruct", "params": "0.5B"},
             "dataset": {"path": "./data.jsonl"},
             "prompt": {"system": "Reason step by step, then give the number inside <answer></answer>.",
                        "template": "{{ question }}",
                        "examples": [{"correct": correct, "wrong": "3 + 4 = 8.\n<answer>8</answer>",
                                      "malformed": malformed}]},
             "rewards": [{"name": "format", "weight": 0.2, "params": fmt_params},
                         {"name": "exact_match", "weight": 1.0}],
             "hardware": {"accelerator": "gpu", "num_gpus": 1, "gpu_type": "80GB"}}
    p = tmp_path / "brief.yaml"
    p.write_text(yaml.safe_dump(brief, sort_keys=False))
    return str(p)


def test_validate_fails_a_user_brief_whose_format_refuses_what_its_prompt_asks(tmp_path):
    path = _brief(tmp_path, {}, "3 + 4 = 7.\n<answer>7</answer>")
    with pytest.raises(ConfigError) as e:
        validate_report(path)
    msg = str(e.value)
    assert "prompt.examples[0]" in msg and "correct 0" not in msg
    assert "the correct example scores 0.000, not above the wrong one's 0.000" in msg
    assert "text before <answer>: '3 + 4 = 7.'" in msg and "allow_text_before" in msg
    out = subprocess.run([*CLI, "validate", path], capture_output=True, text=True)
    assert out.returncode == 2 and "prompt.examples[0]" in out.stderr and "Traceback" not in out.stderr
    # the fix the message names: reasoning may come first
    fixed = _brief(tmp_path, {"allow_text_before": True}, "3 + 4 = 7.\n<answer>7</answer>")
    report = validate_report(fixed)
    assert [c["totals"] for c in report["contract"]] == [{"correct": 1.2, "wrong": 0.2, "malformed": 0.0}]


def test_validate_fails_when_the_malformed_example_outscores_the_wrong_one(tmp_path):
    """A correctness reward that opted out of the format (require_format: false) pays for the untagged answer."""
    path = _brief(tmp_path, {"allow_text_before": True}, "3 + 4 = 7.\n<answer>7</answer>")
    text = open(path).read().replace("- name: exact_match\n  weight: 1.0",
                                     "- name: exact_match\n  weight: 1.0\n  params:\n    require_format: false")
    open(path, "w").write(text)
    with pytest.raises(ConfigError, match=r"the malformed example scores 1\.000, not below the wrong one's 0\.200"):
        validate_report(path)


def test_an_example_row_index_outside_the_data_is_named(tmp_path):
    path = _brief(tmp_path, {"allow_text_before": True}, "<answer>7</answer>")
    open(path, "a").write("")
    data = yaml.safe_load(open(path))
    data["prompt"]["examples"][0]["row"] = 5
    open(path, "w").write(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match=r"prompt.examples\[0\].row: 5 is not a row index of data.jsonl \(1 rows\)"):
        validate_report(path)
    assert KINDS == ("correct", "wrong", "malformed")
