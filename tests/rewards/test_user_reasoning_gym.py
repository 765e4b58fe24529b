"""A verifier nobody here wrote: reasoning-gym's tasks scored by their own ``score_answer`` through a user reward
module, the data step that writes their rows, and the demo on one of them (``grpo-rlvr demo --task
spell_backward``)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from grpo_rlvr.demo import spell_backward_task as task
from grpo_rlvr.examples.reasoning_gym.data import main as data_main
from grpo_rlvr.examples.reasoning_gym.data import make_rows
from grpo_rlvr.rewards import build_reward, with_brief_format

REF = "grpo_rlvr.examples.reasoning_gym.reward:score"


def _reward():
    params, problems = with_brief_format([("format", {}), (REF, {"require_format": True})])
    assert problems == []
    return build_reward(REF, params[1], kind="correctness")


def test_the_tasks_own_verifier_scores_inside_the_tag():
    rows = make_rows("spell_backward", 2, seed=0)
    word = json.loads(rows[0]["entry"])["metadata"]["word"]
    right = word[::-1]
    texts = [f"<answer>{right}</answer>", f"<answer>{right.upper()}</answer>", f"<answer>{right[:-1]}x</answer>",
             right, f"<answer>{right}</answer> extra"]
    got = _reward().explain(texts, entry=[rows[0]["entry"]] * len(texts))
    assert [s.score for s in got[:2]] == [1.0, 1.0]  # the task's own rule: case does not matter
    assert 0 < got[2].score < 1 and got[2].reason.startswith("spell_backward.score_answer")  # a right prefix
    assert (got[3].score, got[3].reason) == (0.0, "no <answer> tag")  # the reward never ran: not well-formed
    assert got[4].score == 0.0 and "text after </answer>" in got[4].reason


def test_another_task_through_the_same_module():
    rows = make_rows("basic_arithmetic", 3, seed=1)
    entry = json.loads(rows[0]["entry"])
    got = _reward().explain([f"<answer>{entry['answer']}</answer>", "<answer>nonsense</answer>"],
                            entry=[rows[0]["entry"]] * 2)
    assert [s.score for s in got] == [1.0, 0.0]


def test_bad_entry_data_raise_and_model_output_never_does():
    r = _reward()
    # bad data raises inside the reward; the wrapper gives no score and keeps what was raised, which score and
    # inspect report (exit 2) and training leaves out of its step and counts (rewards/NAME/unscorable)
    (bad,) = r.explain(["<answer>x</answer>"], entry=['{"answer": "x"}'])
    assert bad.score is None and "ValueError" in bad.raised and "not a reasoning-gym entry" in bad.raised
    entry = make_rows("spell_backward", 1, seed=0)[0]["entry"]
    odd = ["<answer>" + "\x00" * 5000 + "</answer>", "<answer></answer>", "<answer>\ud800</answer>"]
    assert all(0.0 <= s.score <= 1.0 for s in r.explain(odd, entry=[entry] * 3))


def test_data_step_writes_rows_and_refuses_to_overwrite(tmp_path, capsys):
    out = tmp_path / "rows.jsonl"
    assert data_main(["--task", "spell_backward", "--size", "5", "--out", str(out),
                      "--config", "min_word_len=3", "--config", "max_word_len=4"]) == 0
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == 5 and set(rows[0]) == {"question", "answer", "task", "entry"}
    assert all(3 <= len(r["answer"]) <= 4 for r in rows)
    assert data_main(["--task", "spell_backward", "--size", "5", "--out", str(out)]) == 2
    assert "pass --force" in capsys.readouterr().err
    assert data_main(["--task", "no_such_task", "--size", "5", "--out", str(tmp_path / "x.jsonl")]) == 2


def test_demo_task_prompt_fits_the_tiny_alphabet_and_its_oracle_is_independent():
    from grpo_rlvr.demo.tiny_model import CHARACTERS

    rows = task.make_rows(20, seed=3)
    for r in rows:
        text = r["prompt"][0]["content"]
        assert set(text) <= set(CHARACTERS) and text.endswith(r["answer"][::-1])
        assert task.oracle_judgement(text, task.target_completion(r["answer"])) == (True, True)
        assert task.oracle_judgement(text, f"<answer>{r['answer']}x</answer>") == (True, False)
        assert task.oracle_judgement(text, r["answer"]) == (False, False)


@pytest.mark.e2e
def test_demo_on_a_reasoning_gym_task_runs_every_phase(tmp_path):
    work = tmp_path / "demo"
    out = subprocess.run([sys.executable, "-m", "grpo_rlvr", "demo", "--task", "spell_backward", "--workdir",
                          str(work), "--steps", "2", "--eval-samples", "64", "--json"],
                         capture_output=True, text=True, timeout=1200)
    assert out.returncode == 0, out.stderr[-3000:]
    s = json.loads(out.stdout)
    assert s["task"] == "spell_backward" and s["gate_passed"] and s["grpo_steps"] == 2
    assert s["preflight"]["verdict"] == "grpo" and 0 < s["accuracy_before"]["accuracy"] < 0.5
    # --eval-samples 64: 64 held-out prompts, one sample each, before and after (it was 100, without a word)
    assert s["accuracy_before"]["samples"] == s["accuracy_after"]["samples"] == 64
    assert "sampled accuracy before GRPO (64 samples)" in out.stderr and "note: --eval-samples" not in out.stderr
    samples = [json.loads(x) for x in (work / "out" / "inspection" / "samples.jsonl").read_text().splitlines()]
    assert all(set(x["scores"]) == {"format", "score"} for x in samples)
    assert any(x["scores"]["score"]["reason"].startswith("spell_backward.score_answer") for x in samples)
