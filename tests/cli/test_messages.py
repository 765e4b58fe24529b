"""Messages that point at the right place: the folder or command a person meant, and where a user reward raised.

- ``gate`` on a brief's output folder, a run folder or a run's output folder names the inspection folder it found;
- ``train`` on a brief says to render it first;
- a user reward that raises: ``score`` and ``inspect`` exit 2 naming the sample, its data row (``FILE:LINE``, as
  training names it) and the reward's file and line;
  during training (TRL's call) the completion scores 0 with that reason, and the count is logged.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from artifacts import make_artifact
from briefs import write_brief

CLI = [sys.executable, "-m", "grpo_rlvr"]

RAISING = '''\
def reward(completions, answer, **kwargs):
    out = []
    for c, a in zip(completions, answer):
        out.append(1.0 if int(c.split("<answer>")[1][0]) == int(a) else 0.0)
    return out
'''
RAISING_LINE = 4  # the line of RAISING that fails on a completion without "<answer>"


def run(*args, cwd=None):
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, cwd=cwd)


def test_gate_on_an_output_or_run_folder_names_the_inspection_folder(workspace):
    insp = make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    run_dir = json.loads(run("render", workspace / "brief.yaml", "--json").stdout)["dir"]
    for given, what in ((workspace / "out", "an output folder"), (run_dir, "a run folder")):
        r = run("gate", given)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        assert f"is {what}, not an inspection folder" in r.stderr, r.stderr
        assert f"grpo-rlvr gate {insp.resolve()}" in r.stderr, r.stderr
    (workspace / "out" / "run" / "output").mkdir()
    r = run("gate", workspace / "out" / "run" / "output")
    assert r.returncode == 2 and "a run's output folder" in r.stderr and str(insp.resolve()) in r.stderr


def test_gate_on_an_unrelated_folder_says_it_is_not_an_inspection_folder(tmp_path):
    r = run("gate", tmp_path)
    assert r.returncode == 2 and "not an inspection folder (run `grpo-rlvr inspect`)" in r.stderr, r.stderr


def test_train_on_a_brief_says_render_it_first(workspace):
    r = run("train", workspace / "brief.yaml")
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert f"render it first: grpo-rlvr render {workspace / 'brief.yaml'}" in r.stderr, r.stderr
    assert "Not a directory" not in r.stderr


def raising_reward(folder):
    f = folder / "picky.py"
    f.write_text(RAISING)
    return f


def test_score_names_the_sample_and_line_a_user_reward_raised_on(tmp_path):
    reward = raising_reward(tmp_path)
    inp = tmp_path / "in.jsonl"
    inp.write_text("".join(json.dumps({"completion": c, "answer": "3"}) + "\n"
                           for c in ("<answer>3</answer>", "<answer>4</answer>", "three")))
    r = run("score", "--reward", reward, "--input", inp, "--json")
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert (f"reward 'picky' raised on sample 2 on the data row {inp}:3 (1 of 3 samples), completion 'three'"
            in r.stderr), r.stderr
    assert f"{reward}:{RAISING_LINE}: IndexError" in r.stderr and "return 0" in r.stderr, r.stderr
    assert json.loads(r.stdout.splitlines()[-1])["exit_code"] == 2


def test_a_user_reward_that_returns_no_number_is_named_not_a_traceback(tmp_path):
    (tmp_path / "wordy.py").write_text("def reward(completions, **kw):\n    return ['high' for _ in completions]\n")
    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps({"completion": "x", "answer": "1"}) + "\n")
    r = run("score", "--reward", tmp_path / "wordy.py", "--input", inp)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "user reward 'wordy' returned 'high' (str) for a completion; return a number, None" in r.stderr, r.stderr


def test_inspect_stops_on_a_user_reward_that_raises(workspace):
    reward = raising_reward(workspace)
    p = write_brief(workspace, "b.yaml", rewards=[{"name": "format", "weight": 0.2},
                                                  {"name": str(reward), "kind": "correctness", "weight": 1.0}])
    r = run("inspect", p, "--samples", "50")
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert "raised on sample" in r.stderr and f"picky.py:{RAISING_LINE}" in r.stderr, r.stderr[-2000:]
    said = " ".join(r.stderr.split())   # the row as training names it: the data file and its line
    assert f"on the data row {workspace / 'data' / 'train.jsonl'}:" in said, said[-2000:]
    assert not (workspace / "out" / "inspection").exists()


def test_in_training_a_raising_completion_is_left_unscored_and_counted(tmp_path):
    """The call TRL 1.16 makes (keyword arguments, trainer_state, log_metric): no exception reaches the trainer,
    and no made-up 0 either: the completion it raised on gets None, and where it raised is kept (by batch
    position) for the trainer to leave the sample out and name its row (records/unscorable.py)."""
    from grpo_rlvr.rewards import build_reward

    reward = build_reward(str(raising_reward(tmp_path)), {}, base_dir=tmp_path, kind="correctness")
    logged = []
    scores = reward(prompts=["1+2="] * 3, completions=["<answer>3</answer>", "no tag", "<answer>5</answer>"],
                    completion_ids=[[1], [2], [3]], answer=["3", "3", "3"], trainer_state=None,
                    log_extra=lambda *a: None, log_metric=lambda name, value: logged.append((name, value)))
    assert scores == [1.0, None, 0.0]
    assert logged == [("rewards/picky/unscorable", 1 / 3)]
    assert [i for i, _ in reward.unscorable] == [1]
    assert reward.unscorable[0][1].startswith(f"{tmp_path / 'picky.py'}:{RAISING_LINE}: IndexError")
    why = reward.explain(["no tag"], answer=["3"])[0]
    assert why.score is None and why.raised.startswith(f"{tmp_path / 'picky.py'}:{RAISING_LINE}: IndexError")
    clean = []
    reward(prompts=["x"], completions=["<answer>3</answer>"], answer=["3"], log_metric=lambda *a: clean.append(a))
    assert clean == [("rewards/picky/unscorable", 0.0)] and reward.unscorable == []   # a rate, every call


ODD_CHARACTER_RAISE = '''\
ALLOWED = set("<>/answer0123456789")
def reward(completions, **kwargs):
    out = []
    for c in completions:
        if set(c) - ALLOWED:
            raise ValueError(f"unexpected character {sorted(set(c) - ALLOWED)[0]!r}")
        out.append(0.0)
    return out
'''


@pytest.mark.e2e
def test_training_survives_a_user_reward_that_raises_and_logs_it(workspace):
    """Real GRPOTrainer on CPU, 2 steps. The user reward raises on any character outside the answer format: the
    inspected samples have none, the untrained model's completions are full of them. Training finishes, the
    raising completions are left unscored (no made-up 0), metrics.jsonl logs the share per step
    (rewards/flaky/unscorable), and the console names the dataset rows and where the reward raised."""
    from grpo_rlvr.run.render import render

    (workspace / "flaky.py").write_text(ODD_CHARACTER_RAISE)
    p = write_brief(workspace, "b.yaml", rewards=[{"name": "format", "weight": 0.2},
                                                  {"name": "exact_match", "weight": 1.0},
                                                  {"name": "flaky.py", "kind": "shaping", "weight": 0.1}])
    data = yaml.safe_load(p.read_text())
    data["grpo"].update({"per_device_train_batch_size": 16, "logging_steps": 1, "save_steps": 50})
    p.write_text(yaml.safe_dump(data))
    make_artifact(p, workspace / "out" / "inspection")
    run_dir = render(p).dir
    out = subprocess.run([*CLI, "train", str(run_dir), "--max-steps", "2"], capture_output=True, text=True,
                         timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    logs = [json.loads(line) for line in (run_dir / "output" / "metrics.jsonl").read_text().splitlines()]
    share = [r["rewards/flaky/unscorable"] for r in logs if "rewards/flaky/unscorable" in r]
    assert len(share) == 2 and all(0 <= x <= 1 for x in share) and sum(share) > 0, logs
    assert "unscorable: dataset row " in out.stderr, out.stderr[-3000:]
    assert "reward 'flaky': " in out.stderr and "flaky.py:6: ValueError: unexpected character" in out.stderr
    tally = json.loads((run_dir / "output" / "unscorable.json").read_text())
    assert tally["seen"] == 32 and tally["unscorable"] == round(sum(share) * 16), tally
