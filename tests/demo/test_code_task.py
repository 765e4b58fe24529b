"""The code task and its offline brief: rows the code alphabet writes, an oracle that agrees with the real rewards
(format + unit_tests in the sandbox) without using them, and, end to end, the shipped brief from the folder
`grpo-rlvr demo --task code` leaves: validate → preflight → inspect → a review in a terminal → gate → render →
train, every command as a user types it, offline, on CPU."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from importlib import resources

import pytest

from grpo_rlvr.demo import code_task as task
from grpo_rlvr.demo.tiny_model import CODE_CHARACTERS
from grpo_rlvr.review.session import PROMPT
from terminal import Terminal

CLI = [sys.executable, "-m", "grpo_rlvr"]

# (completion, well_formed, correct) for the prompt "f(x) = 3x + 1"
JUDGED = [
    ("<answer>def f(x):\n    return 3*x + 1</answer>", True, True),
    ("<answer>def f(x):\n    return 1 + x*3</answer>", True, True),            # the same function, written otherwise
    ("  <answer>def f(y):\n    '''f'''\n    return 3*y+1</answer>\n", True, True),
    ("<answer>def f(x):\n    return 3.0*x + 1</answer>", True, True),          # 3.0*x + 1 == 7 at 2, as Python says
    ("<answer>def f(x):\n    return 2*x + 1</answer>", True, False),           # a near miss: f(0) is right
    ("<answer>def f(x):\n    return 3*x +</answer>", True, False),             # does not parse
    ("<answer>def f(x):\n  return 3*x + 1\n    return 2</answer>", True, False),  # bad indentation
    ("<answer>def g(x):\n    return 3*x + 1</answer>", True, False),           # no f
    ("<answer>def f(x):\n    return 9**9**9</answer>", True, False),           # the sandbox times out
    ("<answer>def f(x):\n    return 3*x + 1\nraise SystemExit</answer>", True, False),
    ("<answer>def f(x):\n    return 3*x + 1", False, False),                   # no closing tag
    ("def f(x):\n    return 3*x + 1", False, False),                           # no tag: not paid for
    ("<answer>def f(x):\n    return 3*x + 1</answer> done", False, False),     # text after the tag
]


def test_rows_are_written_in_the_code_alphabet_and_their_targets_pass_their_tests():
    rows = task.make_rows(50, seed=3)
    assert rows == task.make_rows(50, seed=3) and len({r["prompt"][0]["content"] for r in rows}) > 20
    for r in rows:
        text, target = r["prompt"][0]["content"], task.target_completion(r["answer"])
        assert set(text + target) <= set(CODE_CHARACTERS) and len(r["tests"]) == len(task.POINTS)
        assert task.oracle_judgement(text, target) == (True, True)


@pytest.fixture(scope="module")
def code_folder(tmp_path_factory):
    """The shipped code brief beside an untrained code-alphabet tiny model and rows, as the demo lays them out."""
    from grpo_rlvr.demo import tiny_model
    from grpo_rlvr.files import write_jsonl_atomic

    d = tmp_path_factory.mktemp("code")
    (d / "brief.yaml").write_text(resources.files("grpo_rlvr.examples.code").joinpath("brief.yaml").read_text())
    tok = tiny_model.build_tokenizer(CODE_CHARACTERS)
    tiny_model.save_pretrained(tiny_model.build_model(tok, seed=0), tok, d / "model", {"seed": 0})
    write_jsonl_atomic(d / "data" / "train.jsonl", task.make_rows(100, seed=0))
    return d


def test_the_shipped_code_brief_validates_and_renders_offline(code_folder):
    v = subprocess.run([*CLI, "validate", "brief.yaml", "--json"], cwd=code_folder, capture_output=True, text=True)
    assert v.returncode == 0, v.stdout[-2000:] + v.stderr[-2000:]
    r = subprocess.run([*CLI, "render", "brief.yaml", "--out", str(code_folder / "run"), "--json"], cwd=code_folder,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "max_completion_length: 56" in (code_folder / "run" / "grpo_config.yaml").read_text()


def test_the_oracle_agrees_with_the_briefs_rewards_run_for_real(code_folder):
    """The shipped brief's rewards (format, unit_tests in the sandbox, reading inside the tag) score each completion
    as the oracle judges it: well-formed exactly when format is 1, correct exactly when every test passes."""
    from grpo_rlvr.brief import load_brief
    from grpo_rlvr.rewards import combine, from_brief

    brief = load_brief(code_folder / "brief.yaml")
    tests = [f"assert f({x}) == {3 * x + 1}" for x in task.POINTS]
    scored = combine(from_brief(brief), brief.reward_weights, [c for c, _, _ in JUDGED], tests=[tests] * len(JUDGED))
    for (completion, well_formed, correct), s in zip(JUDGED, scored, strict=True):
        assert task.oracle_judgement("f(x) = 3x + 1", completion) == (well_formed, correct), completion
        assert (s["scores"]["format"].score == 1.0) == well_formed, (completion, s["scores"]["format"])
        assert (s["scores"]["unit_tests"].score == 1.0) == correct, (completion, s["scores"]["unit_tests"])
    assert 0 < scored[4]["scores"]["unit_tests"].score < 1       # the near miss earns part of the reward


def _review_with_the_oracle(insp) -> None:
    """`grpo-rlvr review` in a pty, a key for each sample: agree when the oracle judges the sample as the rewards
    scored it, else disagree. Over half the samples are read for more than a second, as the gate's rule wants."""
    from grpo_rlvr.messages import final_text, last_user_text

    samples = {s["id"]: s for s in map(json.loads, (insp / "samples.jsonl").read_text().splitlines())}
    t = Terminal([*CLI, "review", str(insp), "--reviewer", "tester"])
    for k in range(len(samples)):
        screen = t.expect(PROMPT)
        sid = screen[screen.index("Sample "):].split("(", 1)[1].split(",", 1)[0]
        s = samples[sid]
        well_formed, correct = task.oracle_judgement(last_user_text(s["prompt"]), final_text(s["completion"]))
        agree = well_formed == (s["scores"]["format"]["score"] == 1.0) and \
            correct == (s["scores"]["unit_tests"]["score"] == 1.0)
        time.sleep(1.0 if k <= len(samples) // 2 else 0.0)
        t.send("a" if agree else "d")
        if not agree:
            t.expect("> ")
            t.send("the oracle judges it otherwise")
            t.expect("> ")
            t.send("")
    t.expect("Review complete")
    assert t.wait() == 0


@pytest.mark.e2e
def test_the_offline_code_brief_runs_every_phase_by_hand(tmp_path):
    work = tmp_path / "code"
    demo = subprocess.run([*CLI, "demo", "--task", "code", "--workdir", str(work), "--steps", "2",
                           "--eval-samples", "100", "--json"], capture_output=True, text=True, timeout=3600)
    assert demo.returncode == 0, demo.stderr[-3000:]
    s = json.loads(demo.stdout)
    assert s["task"] == "code" and s["correctness_reward"] == "unit_tests" and s["gate_passed"]
    assert s["preflight_untrained"] == "sft-first" and s["preflight"]["verdict"] == "grpo"
    assert 0 < s["accuracy_before"]["accuracy"] < 1
    shipped = resources.files("grpo_rlvr.examples.code").joinpath("brief.yaml").read_text()
    assert (work / "brief.yaml").read_text() == shipped and (work / "model" / "tokenizer.json").is_file()

    def run(*args, timeout=1800):
        return subprocess.run([*CLI, *args], cwd=work, capture_output=True, text=True, timeout=timeout)

    assert run("validate", "brief.yaml").returncode == 0
    pre = run("preflight", "brief.yaml", "--json")
    assert pre.returncode == 0 and json.loads(pre.stdout)["verdict"] == "grpo", pre.stdout[-2000:]
    ins = run("inspect", "brief.yaml", "--force")    # replaces the demo oracle's inspection (kept as a backup)
    assert ins.returncode == 0, ins.stderr[-2000:]
    insp = work / "out" / "inspection"
    samples = [json.loads(x) for x in (insp / "samples.jsonl").read_text().splitlines()]
    assert len(samples) == 64 and not any(x["verdict"] for x in samples)
    assert {x["scores"]["unit_tests"]["score"] for x in samples} > {0.0, 1.0}   # partial credit too
    _review_with_the_oracle(insp)
    gate = run("gate", str(insp))
    assert gate.returncode == 0, gate.stdout[-3000:]
    rendered = run("render", "brief.yaml", "--out", "out/mine", "--json")   # out/run holds the demo's run
    assert rendered.returncode == 0, rendered.stderr[-2000:]
    assert (work / "out" / "mine" / "train.py").is_file() and (work / "out" / "run" / "output").is_dir()
    train = run("train", "out/mine", "--max-steps", "4")
    assert train.returncode == 0, (train.stdout + train.stderr)[-3000:]
    metrics = [json.loads(x) for x in (work / "out" / "mine" / "output" / "metrics.jsonl").read_text().splitlines()]
    assert any("rewards/unit_tests/mean" in m for m in metrics)
    assert json.loads((work / "out" / "mine" / "output" / "provenance.json").read_text())
