"""Real tiny GRPO runs on CPU, each engineered to show one failure mode, diagnosed from the logs TRL wrote.
A healthy run is the demo's own (see tests/demo/test_pipeline.py); here each run must raise its own finding.

The tests marked ``training_outcome`` assert an outcome of training, so none may rest on one seed's path on
one CPU's arithmetic (``tests/outcome_seeds.py``): CI runs each at its seed with the machine's CPU kernels and
(scripts/test-avx2.sh) with AVX2 held. A test's docstring records the sweep its settings were checked with
(``python benchmarks/outcome_sweep.py -k NAME``: seeds × default and AVX2 kernels) and, where a first version
rested on one CPU's path, how it was made robust. Warmed-up models are fixtures built once at seed 0 (the sweeps' own, ``warm_model_dir``, is shared: tests/conftest.py).
Other numbers in the docstrings were measured on the 2-core CI machine (AVX-512); the assertions check the
diagnosis, not them.
"""

from __future__ import annotations

import statistics
import subprocess
import sys

import pytest
import yaml

from artifacts import make_artifact
from briefs import example_brief_text
from grpo_rlvr.demo import arithmetic_task as task
from grpo_rlvr.diagnosis import diagnose
from grpo_rlvr.files import write_jsonl_atomic
from grpo_rlvr.run.launch import train
from grpo_rlvr.run.render import render
from outcome_seeds import SWEPT_LEARNING_RATE, training_outcome
from tiny_runs import answers, warmed_model

pytestmark = pytest.mark.e2e


def run_case(workspace, model_dir, grpo: dict, seed: int, rewards=None, steps=40, train_rows=None, eval_rows=None,
             sections: dict | None = None):
    """Train to the end and diagnose. The watchdog only records (``watch.stop_on: never``): these runs show each
    failure mode over the whole run; test_watchdog_stops_a_run_without_signal lets it stop one."""
    run = prepare_run(workspace, model_dir, grpo, seed, rewards, steps, train_rows, eval_rows,
                      {"watch": {"stop_on": "never"}, **(sections or {})})
    res = train(run)
    assert res.ok, f"training failed: exit {res.returncode}"
    return diagnose(run)


def watch_events(diag) -> list[dict]:
    """The watchdog's events in the run's watch.jsonl."""
    import json

    p = diag.out_dir / "watch.jsonl"
    return [json.loads(x) for x in p.read_text().splitlines()] if p.is_file() else []


def would_stop(diag) -> dict | None:
    """The watchdog's ``would_stop`` event (run_case trains with stop_on: never): where it would have stopped."""
    return next((e for e in watch_events(diag) if e["event"] == "would_stop" and e.get("id") != "review_audit"),
                None)   # (the review audit's own would_stop: these runs train behind synthetic inspections)


def prepare_run(workspace, model_dir, grpo: dict, seed: int, rewards=None, steps=40, train_rows=None, eval_rows=None,
                sections: dict | None = None):
    data = yaml.safe_load(example_brief_text())
    data.update(sections or {})
    data["grpo"].update({"per_device_train_batch_size": 32, "logging_steps": 2, "max_steps": steps,
                         "save_steps": 1000, "seed": seed, "learning_rate": SWEPT_LEARNING_RATE, **grpo})
    if rewards is not None:
        data["rewards"] = rewards
    if train_rows is not None:
        write_jsonl_atomic(workspace / "data" / "train.jsonl", train_rows)
    if eval_rows is not None:
        write_jsonl_atomic(workspace / "data" / "eval.jsonl", eval_rows)
        data["dataset"]["eval_path"] = "./data/eval.jsonl"
    (workspace / "brief.yaml").write_text(yaml.safe_dump(data))
    (workspace / "model").unlink()
    (workspace / "model").symlink_to(model_dir, target_is_directory=True)
    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    return render(workspace / "brief.yaml").dir


@training_outcome
def test_untrained_model_has_no_learning_signal(workspace, tiny_model_dir, seed):
    """The untrained model never succeeds, whatever the seed or kernels: robust by construction. Sweep (issue 23):
    seeds 0-1 with the default kernels and with AVX2 held, 4 of 4."""
    # make_artifact's synthetic samples pass the gate; the model itself never succeeds
    diag = run_case(workspace, tiny_model_dir, {}, seed, steps=10)
    ids = {f.id for f in diag.findings}
    assert "no_learning_signal" in ids, diag.format()


def test_watchdog_stops_a_run_without_signal(workspace, tiny_model_dir, capfd):
    """The untrained model never succeeds, so every group's rewards are equal from the first log on
    (no_learning_signal, critical): robust by construction, no seed's path. Logging every step with the default
    watch (stop_on critical, window 3), the watchdog stops the run at step 8 (the first check with the 8 records a
    trend needs, and the third in a row with the finding): checkpoint-8 saved and listed in the ledger, no final
    model, exit 1, and the console names the finding and what to run next; the resume command it names continues
    from checkpoint-8 and is stopped again at step 16."""
    import json

    from grpo_rlvr.records.checkpoint_ledger import read_ledger

    run = prepare_run(workspace, tiny_model_dir, {"logging_steps": 1, "save_steps": 1000}, 0, steps=30)
    res = train(run)
    said = capfd.readouterr()
    out = run / "output"
    assert res.returncode == 1 and not res.ok, said.err[-3000:]
    assert res.watch_stop is not None and res.watch_stop["id"] == "no_learning_signal"
    assert res.watch_stop["step"] == 8 and (out / "checkpoint-8").is_dir() and not (out / "final").exists()
    assert "checkpoint-8" in json.dumps(read_ledger(out))
    text = said.out + said.err
    assert "watch: stopped the run at step 8: [critical] No learning signal" in text
    assert f"checkpoint saved: {out / 'checkpoint-8'}" in text and "next: " in text
    assert "Training STOPPED by the watchdog at step 8" in res.format()
    assert json.loads((out / "train_summary.json").read_text())["global_step"] == 8
    report = json.loads((out / "report.json").read_text())   # the run's report, written as the stop ended it
    assert report["state"]["text"].startswith("stopped by the watchdog at step 8: No learning signal")
    assert report["findings"][0]["stop_step"] == 8 and report["findings"][0]["id"] == "no_learning_signal"

    # The message's resume command works: `train RUN --resume` continues from checkpoint-8 (a false alarm's way
    # on); the watchdog judges the resumed logs afresh, finds the same failure and stops again, 8 records later.
    assert f"`grpo-rlvr train {run} --resume`" in text
    again = train(run, resume=True)
    assert again.returncode == 1 and again.resumed_from == str(out / "checkpoint-8")
    assert again.watch_stop is not None and again.watch_stop["id"] == "no_learning_signal"
    assert again.watch_stop["step"] == 16 and (out / "checkpoint-16").is_dir() and not (out / "final").exists()
    assert json.loads((out / "train_summary.json").read_text())["global_step"] == 16


def test_the_dashboard_gets_rewards_by_role_and_the_watchdogs_findings(workspace, tiny_model_dir, tmp_path,
                                                                       monkeypatch):
    """With trackio installed (the [dashboard] extra; skipped without it), runs report to it by default: TRL's
    metrics, each reward's mean under its role, and the watchdog's findings and stop, in trackio's local store."""
    import importlib.util
    import json

    if importlib.util.find_spec("trackio") is None:
        pytest.skip("trackio is not installed (pip install grpo-rlvr[dashboard])")
    monkeypatch.setenv("TRACKIO_DIR", str(tmp_path / "trackio"))   # this run's own store
    run = prepare_run(workspace, tiny_model_dir, {"logging_steps": 1}, 0, steps=30)
    assert json.loads((run / "brief.lock.json").read_text())["grpo_config"]["report_to"] == "trackio"
    assert train(run).returncode == 1                    # the watchdog stops it at step 8, as above
    # trackio fixes its store's folder when it is first imported, and another test may have imported it in this
    # process already: the store is read in a fresh interpreter that sees this test's TRACKIO_DIR.
    read = ("import json; from trackio.sqlite_storage import SQLiteStorage as S; runs = S.get_runs('arithmetic-demo'); "
            "print(json.dumps({'runs': runs, 'logs': S.get_logs('arithmetic-demo', runs[0]) if runs else []}, "
            "default=str))")
    out = subprocess.run([sys.executable, "-c", read], capture_output=True, text=True, check=True)
    store = json.loads(out.stdout.strip().splitlines()[-1])
    runs, logs = store["runs"], store["logs"]
    assert len(runs) == 1, runs
    assert any(isinstance(r.get("train/rewards/exact_match/mean"), float) for r in logs), logs[:2]
    # the watchdog's rows come through transformers' own trackio callback, named as it names the Trainer's
    assert any(r.get("train/role/correctness/exact_match") is not None
               and r.get("train/role/format/format") is not None for r in logs)
    assert any(r.get("train/watch/no_learning_signal") == 2 for r in logs)
    assert [r.get("train/global_step") for r in logs if r.get("train/watch/stopped") == 1] == [8]


def test_tensorboard_gets_the_trainers_metrics_and_the_watchdogs_findings(workspace, tiny_model_dir):
    """``grpo.report_to: tensorboard``: transformers' TensorBoard callback writes TRL's metrics (the held-out
    evaluation's too) under ``output/runs/``, and the watchdog's rewards by role, findings and stop go through the same callback, read back
    here with TensorBoard's own event reader. The untrained model: stopped at step 8, as above."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run = prepare_run(workspace, tiny_model_dir, {"logging_steps": 1, "report_to": "tensorboard"}, 0, steps=30,
                      eval_rows=task.make_rows(8, seed=99))
    assert train(run).returncode == 1
    folders = {p.parent for p in (run / "output" / "runs").rglob("events.out.tfevents.*")}
    assert len(folders) == 1, folders
    events = EventAccumulator(str(folders.pop()))
    events.Reload()

    def scalars(tag: str) -> dict[int, float]:
        return {e.step: e.value for e in events.Scalars(tag)}

    tags = set(events.Tags()["scalars"])
    assert {"train/reward", "train/rewards/exact_match/mean", "eval/rewards/exact_match/mean",   # held-out too
            "train/role/correctness/exact_match",
            "train/role/format/format", "train/watch/no_learning_signal", "train/watch/stopped"} <= tags, tags
    assert set(scalars("train/watch/no_learning_signal").values()) == {2.0}   # critical, from the first check
    assert [step for step, v in sorted(scalars("train/watch/stopped").items()) if v == 1] == [8]
    assert max(scalars("train/reward")) == 8


def wandb_history(run_file) -> list[dict]:
    """The history rows of a wandb run file (``run-*.wandb``), decoded with wandb's own record schema. The file is
    a leveldb-style log (its first 7 bytes a header; 32 KiB blocks of chunks, each a 7-byte header: checksum,
    length, kind 1 full, 2 first, 3 middle, 4 last) of ``Record`` messages; wandb 0.31 ships no Python reader."""
    import json
    import struct

    from wandb.proto import wandb_internal_pb2

    data, pos, chunk, rows = run_file.read_bytes(), 7, b"", []
    while pos + 7 <= len(data):
        if (left := 32768 - pos % 32768) < 7:   # a block's tail too short for a header is padding
            pos += left
            continue
        _, n, kind = struct.unpack("<IHB", data[pos:pos + 7])
        chunk, pos = chunk + data[pos + 7:pos + 7 + n], pos + 7 + n
        if kind in (1, 4):
            record = wandb_internal_pb2.Record.FromString(chunk)
            chunk = b""
            if record.WhichOneof("record_type") == "history":
                rows.append({i.key or "/".join(i.nested_key): json.loads(i.value_json) for i in record.history.item})
    return rows


def test_wandb_gets_the_trainers_metrics_and_the_watchdogs_findings(workspace, tiny_model_dir, tmp_path, monkeypatch):
    """``grpo.report_to: wandb``, offline (no account, no network): the run file wandb writes holds TRL's metrics
    and the watchdog's rewards by role, findings and stop, all through transformers' wandb callback."""
    import importlib.util

    if importlib.util.find_spec("wandb") is None:
        pytest.skip("wandb is not installed (the dev extra installs it)")
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.setenv("WANDB_SILENT", "true")
    run = prepare_run(workspace, tiny_model_dir, {"logging_steps": 1, "report_to": "wandb"}, 0, steps=30)
    assert train(run).returncode == 1
    files = list(tmp_path.glob("wandb/offline-run-*/run-*.wandb"))
    assert len(files) == 1, list(tmp_path.rglob("*"))
    rows = wandb_history(files[0])
    assert any(isinstance(r.get("train/rewards/exact_match/mean"), (int, float)) for r in rows), [sorted(r) for r in rows[:12]]
    watch = [r for r in rows if "train/watch/stopped" in r]
    assert [r["train/global_step"] for r in watch] == list(range(1, 9))   # a check at every log, up to the stop
    assert [r["train/global_step"] for r in watch if r["train/watch/stopped"] == 1] == [8]
    assert all(r["train/watch/no_learning_signal"] == 2 and "train/role/correctness/exact_match" in r
               and "train/role/format/format" in r for r in watch)


@training_outcome
def test_dynamic_sampling_that_runs_out_of_rounds_is_told_so(workspace, tiny_model_dir, seed):
    """The untrained model with dynamic sampling (max_rounds 1): every group is all-wrong, so the refill runs out
    at every step and trains filler. diagnose names that, with a data fix (no max_rounds fills a batch when no
    group has signal), and does not recommend the dynamic sampling the run already has. Robust by construction
    (an untrained model has no successes to sample); sweep (issue 23): seeds 0-1 × default and AVX2 kernels, 4 of 4."""
    diag = run_case(workspace, tiny_model_dir, {"logging_steps": 1}, seed, steps=8,
                    sections={"dynamic_sampling": {"max_rounds": 1}})
    f = next((x for x in diag.findings if x.id == "refill_exhausted"), None)
    assert f is not None, diag.format()
    assert "ran out of rounds in 8 of 8 logs" in f.evidence[0] and "More rounds would not do" in f.recommendation
    assert "add easier prompts" in f.recommendation and "no group carries signal" in f.recommendation
    nls = next(x for x in diag.findings if x.id == "no_learning_signal")
    assert "already samples dynamically" in nls.recommendation and "dynamic_sampling" not in nls.brief_change
    assert diag.data["recommended_dynamic_sampling"] is None


@training_outcome
def test_reward_that_pays_for_length(workspace, warm_model_dir, seed):
    """A user reward pays for length up to 208 characters and nothing else pays (format and correctness weigh
    0), lr 1e-4, 24 steps, room for 224 tokens: every group's advantage is its length ranking, so the run can
    only grow, while correctness stays flat. Asserted: length-reward coupling, with the paid length reward in its
    evidence, and Dr.GRPO recommended (the cause, not its symptoms).

    Made robust (issue 23): the first version (format weight 0.2, 40 steps) also asserted degenerate repetition;
    on an Intel AVX-512 CPU its length never grew (the format part's signal won), and whether long completions
    turn repetitive or into noise depends on the path (lr 2e-4: 39% repeated 4-grams at one seed, noise at the
    next), so repetition is left to the detector's unit tests (tests/diagnosis/test_detectors.py). Without the format part, 40
    steps saturate the length reward (0.12 → 0.99 at seeds 0-1, both failed), so the run stops at 24. Sweep
    (``benchmarks/outcome_sweep.py -k pays_for_length``, AMD EPYC), seeds 0-1: mean length 26 → 155 and 27 → 168
    tokens with the default kernels, 28 → 106 and 28 → 131 with AVX2 held (threshold +30%), correctness flat,
    all four coupling with the paid reward in evidence and Dr.GRPO recommended; seeds 2-3 landed too with both
    kernel sets (4 of 4): 8 of 8 in all. The watchdog (issue 36), swept at seeds 0-1 × both kernel sets: it
    would have stopped all 4 before the last step for length hacking (seed 0, default kernels: coupling at step
    20 of 24)."""
    (workspace / "pays_length.py").write_text(
        "def reward(completions, **kw):\n"
        "    return [min(len(c if isinstance(c, str) else c[0]['content']) / 208, 1.0) for c in completions]\n")
    rewards = [{"name": "format", "weight": 0.0}, {"name": "exact_match", "weight": 0.0},
               {"name": "pays_length.py", "kind": "shaping", "weight": 1.0}]
    diag = run_case(workspace, warm_model_dir, {"max_completion_length": 224, "learning_rate": 1e-4}, seed, rewards,
                    steps=24)
    f = next((x for x in diag.findings if x.id == "length_reward_coupling"), None)
    assert f is not None, diag.format()
    assert any(e.startswith("pays_length (a length reward) mean") for e in f.evidence), f.evidence
    assert diag.data["recommended_variant"] == "dr_grpo"   # the cause (length pays), not the symptom
    stop = would_stop(diag)   # the watchdog would have stopped it before its last step, for length hacking
    assert stop is not None and stop["id"] in ("length_reward_coupling", "degenerate_length"), stop
    assert stop["step"] < 24, stop


@pytest.fixture(scope="module")
def format_only_model_dir(tmp_path_factory):
    """A model warmed up on the format with *random* answers: it writes <answer>N</answer> but cannot add."""
    import random

    rows = task.make_rows(2000, seed=1)
    rng = random.Random(0)
    return warmed_model(tmp_path_factory, "format-only", rows,
                        [task.target_completion(str(rng.randint(0, 18))) for _ in rows], steps=80, lr=1e-3,
                        batch_size=32)


@training_outcome
def test_format_rewarded_correctness_not(workspace, format_only_model_dir, seed):
    """Only the format pays (correctness weight 0): the format part saturates while correctness stays at chance.

    Made robust (issue 23): at lr 1e-3 and 40 steps the policy broke at seed 0 with both kernel sets (format fell
    0.23 → 0.08, diagnosed no_learning_signal); at lr 3e-4 and 40 steps the format did not rise far enough at
    seed 2 (0.67 → 0.88, healthy). At lr 3e-4 and 80 steps it saturates: sweep
    (``benchmarks/outcome_sweep.py -k format_rewarded``, AMD EPYC) seeds 0-3 × default and AVX2 kernels, 8 of 8.
    The watchdog (issue 36), swept at seeds 0-1 × both kernel sets: 4 of 4 would have stopped early on a critical
    finding, for reward_hacking at seed 0 and for kl_blowup at step 32 at seed 1 (both kernel sets); at seed 1 the
    critical reward_hacking finding was raised as well (checked with the default kernels only)."""
    rewards = [{"name": "format", "weight": 1.0}, {"name": "exact_match", "weight": 0.0}]
    diag = run_case(workspace, format_only_model_dir, {"learning_rate": 3e-4}, seed, rewards, steps=80)
    assert "reward_hacking" in {f.id for f in diag.findings}, diag.format()
    # Nothing pays for correctness: the finding is critical as soon as the watchdog sees it, and the watchdog would
    # have stopped the run early. The first critical streak decides the stop: at seed 1 (default kernels) the KL
    # blew up first (a stop at step 32 for kl_blowup), so the stop may name either.
    stop = would_stop(diag)
    assert stop is not None and stop["severity"] == "critical" and stop["step"] < 80, stop
    assert stop["id"] in ("reward_hacking", "kl_blowup"), stop
    hack = [e for e in watch_events(diag) if e["event"] == "finding" and e["id"] == "reward_hacking"]
    assert hack and hack[-1]["severity"] == "critical", hack


@pytest.fixture(scope="module")
def format_only_200_model_dir(tmp_path_factory):
    """A model that knows the format but not the sums: 200 SFT steps on random answers."""
    import random

    rows = task.make_rows(2000, seed=1)
    rng = random.Random(0)
    return warmed_model(tmp_path_factory, "format-only-200", rows,
                        [task.target_completion(str(rng.randint(0, 18))) for _ in rows], steps=200, lr=1e-3,
                        batch_size=32)


@training_outcome
def test_reward_that_pays_one_answer_collapses_entropy(workspace, format_only_200_model_dir, seed):
    """A model that knows the format but not the sums (200 SFT steps on random answers), paid only for how close
    each completion is to one fixed string (difflib's ratio to '<answer>0</answer>', whatever the prompt), lr
    3e-4, 100 steps, room for 48 tokens: every group is pushed towards the same completion, so the sampling
    entropy falls steadily while correctness stays at chance. The reward drives the collapse, not a seed's luck.

    Made robust (issue 23): the earlier version (the default rewards at lr 1e-3, seed 3407, one thread) collapsed
    on one CPU's arithmetic only; on others it broke the policy or hacked the format. Sweep, seeds 0-3
    (``benchmarks/outcome_sweep.py -k collapses_entropy``, AMD EPYC): entropy fell to 24%, 18%, 25%, 25% of its
    early level with the default (AVX-512) kernels and 23%, 18%, 25%, 25% with AVX2 held (threshold 30%), all
    8 diagnosed entropy_collapse with DAPO recommended. Tried and dropped: this reward at lr 5e-4 for 60 steps
    (one run of 8 had a burst of long completions late, which lifted the late entropy to 46%); at lr 1e-3 the
    policy broke at 1 of 2 seeds; an exact-match-only reward fails the inspection gate (a well-formed wrong
    answer must outscore a malformed one). The watchdog (issue 36), swept at seeds 0-1 × both kernel sets: all 4
    would have been stopped before the last step for entropy_collapse."""
    (workspace / "one_answer.py").write_text(
        "import difflib\n"
        "def reward(completions, **kw):\n"
        "    texts = [c if isinstance(c, str) else c[0]['content'] for c in completions]\n"
        "    return [difflib.SequenceMatcher(None, t, '<answer>0</answer>').ratio() for t in texts]\n")
    rewards = [{"name": "format", "weight": 0.0}, {"name": "exact_match", "weight": 0.0},
               {"name": "one_answer.py", "kind": "shaping", "weight": 1.0}]
    diag = run_case(workspace, format_only_200_model_dir, {"learning_rate": 3e-4, "max_completion_length": 48}, seed,
                    rewards, steps=100)
    f = next((x for x in diag.findings if x.id == "entropy_collapse"), None)
    assert f is not None, diag.format()
    assert f.severity == "critical" and diag.data["recommended_variant"] == "dapo"
    assert any(e.startswith("distinct completions per group") for e in f.evidence)
    stop = would_stop(diag)   # the watchdog would have stopped it before its last step, for the collapse
    assert stop is not None and stop["id"] == "entropy_collapse" and stop["step"] < 100, stop


@training_outcome
def test_learning_rate_that_breaks_the_policy(workspace, warm_model_dir, seed):
    """The warmed model (preflight: pass@1 ≈ 0.08) at lr 3e-3: within a few steps every group is all-wrong. That is
    not a hard dataset but a broken policy: the finding says so and asks for a tenth of the rate.

    Which step the policy breaks at is chaotic (on a Sapphire Rapids CPU it broke before the second step, so a first
    log that averaged steps 1-2 read 0.010 and the run looked too hard). So the run logs its first step too
    (``logging_first_step``): step 1's completions are sampled before any update, so that log measures the warmed
    model itself, and the expectation follows from it: a model that solved some at step 1 and none at the end
    collapsed. On a CPU with AVX-512 BF16/FP16 and AMX the broken policy's last log held one group with a
    well-formed completion (share 0.75), and judging that one log read the run as too hard; the end is now judged
    over the last quarter of the logs. Swept on that CPU (``benchmarks/outcome_sweep.py --seeds 0-3 --modes
    default,avx2 -k learning_rate_that_breaks``): 8 of 8."""
    diag = run_case(workspace, warm_model_dir, {"learning_rate": 3e-3, "logging_first_step": True}, seed)
    from grpo_rlvr.diagnosis import load_run_logs

    logs = load_run_logs(workspace / "out" / "run")
    first_step, base_rate = logs.series("rewards/exact_match/mean")[0]
    assert first_step == 1
    f = next((x for x in diag.findings if x.id == "no_learning_signal"), None)
    assert f is not None, diag.format()
    if base_rate == 0:   # this CPU's warm-up left a model that solved none of step 1's 32 samples: no skill seen
        assert f.cause == "too_hard", diag.format()
        pytest.xfail("the warmed model solved 0 of step 1's samples on this CPU; collapse cannot be told apart")
    assert f.cause == "collapsed", diag.format()
    assert f.brief_change == {"grpo": {"learning_rate": 3e-4}}
    assert diag.data["recommended_variant"] is None      # a broken base run calls for a fix, not a variant
    stop = would_stop(diag)   # the watchdog would have stopped it mid-run (stop_on: never here), at its finding,
    # or earlier at the fall of its correctness to zero, a fact it may stop for before it has 8 records
    assert stop is not None and stop["id"] in ("no_learning_signal", "correctness_collapsed") and stop["step"] < 40, stop


@training_outcome
def test_a_short_run_whose_correctness_falls_to_zero_is_found_and_stopped(workspace, warm_model_dir, seed):
    """The warmed model at lr 3e-3 for 12 steps, logging every step (the first too: it measures the warmed model
    before any update), 64 completions a step: the policy breaks within a step or two and solves nothing after.
    Too short for a trend (8 records), yet the fall is a fact: diagnose names correctness_collapsed, and the
    watchdog (default watch: stops on critical) stops the run once three checks in a row saw it, long before
    step 12. Measured on this CPU (seed 3407, 32 a step): exact_match 0.062 at step 1, 0 from step 2 on, kl 2.6."""
    from grpo_rlvr.diagnosis import load_run_logs

    run = prepare_run(workspace, warm_model_dir, {"learning_rate": 3e-3, "logging_steps": 1,
                                                   "logging_first_step": True, "per_device_train_batch_size": 64},
                      seed, steps=12)
    res = train(run)
    first_step, base_rate = load_run_logs(run).series("rewards/exact_match/mean")[0]
    assert first_step == 1
    if base_rate == 0:   # as test_learning_rate_that_breaks_the_policy: no skill seen at step 1, no fall to see
        pytest.xfail("the warmed model solved none of step 1's samples on this CPU")
    assert res.returncode == 1 and res.watch_stop is not None, (res.returncode, res.watch_stop)
    assert res.watch_stop["id"] == "correctness_collapsed" and res.watch_stop["step"] < 12, res.watch_stop
    diag = diagnose(run)
    f = next((x for x in diag.findings if x.id == "correctness_collapsed"), None)
    assert f is not None and f.severity == "critical", diag.format()
    assert "too_few_records" in {x.id for x in diag.findings}   # and still: too short for a trend
    assert f.brief_change == {"grpo": {"learning_rate": 3e-4}}


FEW = task.make_rows(24, seed=7)


@pytest.fixture(scope="module")
def memorised_model_dir(tmp_path_factory):
    """The base model fine-tuned on 24 problems (400 SFT steps): it solves them nearly always."""
    return warmed_model(tmp_path_factory, "memorised", FEW, answers(FEW), steps=400, lr=1e-3, batch_size=32)


@training_outcome
def test_saturated_dataset(workspace, memorised_model_dir, seed):
    """GRPO on the 24 problems the model was fine-tuned on (400 SFT steps): exact_match ≈ 0.95 from the first
    step, most groups all-correct. Measured: TRL's frac_reward_zero_std logs 0.00 throughout (eight rewards of
    1.2 have a float32 std of ~1e-7, which TRL does not call zero); the completions show ≈ 0.6, so diagnose
    recommends dynamic sampling."""
    diag = run_case(workspace, memorised_model_dir, {"learning_rate": 1e-5}, seed, steps=20, train_rows=FEW * 10)
    f = next((x for x in diag.findings if x.id == "no_learning_signal"), None)
    assert f is not None and f.cause == "saturated", diag.format()
    # Most groups, not all, are all-correct: dynamic sampling fits, sized from the recounted share, and the
    # brief change it names is one the real loader takes (--apply writes it).
    from grpo_rlvr.brief import load_brief
    from grpo_rlvr.diagnosis import load_run_logs
    from grpo_rlvr.diagnosis.zero_signal import max_rounds_for, zero_signal_by_step

    share = statistics.fmean(v for _, v in zero_signal_by_step(load_run_logs(workspace / "out" / "run")))
    assert 0.5 <= share <= 0.88, share
    assert f.brief_change == {"dynamic_sampling": {"max_rounds": max_rounds_for(share)}}
    assert "drops the always-solved ones" in f.recommendation    # the offline filter is still offered
    diagnose(workspace / "out" / "run", apply_to=workspace / "brief-ds.yaml")
    assert load_brief(workspace / "brief-ds.yaml").dynamic_sampling.max_rounds == max_rounds_for(share)


@training_outcome
def test_held_out_evaluations_stay_apart_from_training_on_the_demo_recipe(workspace, warm_model_dir, seed):
    """The demo's brief (bs 64, at the swept lr 3e-4) with a held-out set of other problems, 50 steps: held-out
    evaluations run before the first step and every 25, diagnose reads them, and their completions stay out of
    the training ones, even at steps where TRL logs both.

    Not a healthy run at every seed, and not this test's subject: at seed 0 (AVX-512) correctness dips from 0.106 to
    0 at steps 25-35 while the format climbs, and comes back only to 0.022 by step 50 (held-out 0.082 → 0.047).
    Since the watchdog judges a correctness that falls to zero from the first logs (``correctness_collapsed``) it
    names that dip; any other critical finding would fail here. Sweep: seeds 0-1 with the default kernels and with
    AVX2 held. The demo's own health is asserted at the CI
    seed by tests/demo/test_pipeline.py and measured over seeds 0-4 with both kernel sets by
    ``benchmarks/demo_range.py`` (docs/measurements.md gives the range)."""
    import pyarrow.parquet as pq

    train_facts = {r["prompt"][0]["content"] for r in task.make_rows(200, seed=1)}   # the workspace's data
    held_out = [r for r in task.make_rows(400, seed=99) if r["prompt"][0]["content"] not in train_facts][:32]
    diag = run_case(workspace, warm_model_dir, {"per_device_train_batch_size": 64, "logging_steps": 5}, seed,
                    steps=50, eval_rows=held_out)
    stop = would_stop(diag)
    assert stop is None or stop["id"] == "correctness_collapsed", watch_events(diag)
    critical = {e["id"] for e in watch_events(diag) if e["event"] == "finding" and e["severity"] == "critical"}
    assert critical <= {"correctness_collapsed"}, watch_events(diag)
    held = diag.data["held_out"]
    assert held["evaluations"] == 3 and held["first_step"] == 0 and held["last_step"] == 50, held
    assert "rewards/exact_match/mean" in held and "held-out (3 evaluations, steps 0–50)" in diag.format()
    out = workspace / "out" / "run" / "output" / "completions"
    eval_files, train_files = sorted((out / "eval").glob("*.parquet")), sorted(out.glob("completions_*.parquet"))
    assert len(eval_files) == 3 and len(train_files) == 10
    assert (out / "completions_00050.parquet") in train_files            # a step that logged and evaluated
    held_facts = {r["prompt"][0]["content"] for r in held_out}
    for files, facts in ((eval_files, held_facts), (train_files, train_facts)):
        for f in files:
            assert {r["prompt"][0]["content"] for r in pq.read_table(f).to_pylist()} <= facts, f


@pytest.fixture(scope="module")
def untagged_model_dir(tmp_path_factory):
    """A model that knows the sums but rarely tags them: 500 SFT steps, 20% of targets in <answer> tags."""
    import random

    rows = task.make_rows(2000, seed=1)
    rng = random.Random(3)
    sloppy = [task.target_completion(r["answer"]) if rng.random() < 0.2 else r["answer"] for r in rows]
    return warmed_model(tmp_path_factory, "untagged", rows, sloppy, steps=500, lr=1e-3, batch_size=32)


@training_outcome
def test_training_reward_rises_but_held_out_correctness_does_not(workspace, untagged_model_dir, seed):
    """A model that knows the sums but rarely tags them (500 SFT steps, 20% of targets in <answer> tags) learns
    the tags in a few GRPO steps, so training correctness climbs; the held-out prompts say the same sums in words
    ("three plus four"), which it never learned. Measured: training exact_match 0.14 → 0.69, held-out
    0.000 → 0.004 while the held-out format rose 0.03 → 0.28 (the tags transfer, the skill does not)."""
    names = "zero one two three four five six seven eight nine".split()
    in_words = []
    for r in task.make_rows(32, seed=12):
        a, b = r["prompt"][0]["content"].rstrip("=").split("+")
        in_words.append({"prompt": [{"role": "user", "content": f"{names[int(a)]} plus {names[int(b)]}"}],
                         "answer": r["answer"]})
    diag = run_case(workspace, untagged_model_dir, {"learning_rate": 1e-4, "per_device_train_batch_size": 64}, seed,
                    steps=60, eval_rows=in_words)
    f = next((x for x in diag.findings if x.id == "reward_hacking"), None)
    assert f is not None and f.cause == "held_out_gap", diag.format()
    assert f.variant is None and diag.data["held_out"]["evaluations"] == 7
