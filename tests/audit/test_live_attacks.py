"""The review audit against the issue's attacks, with real training: the demo's warmed tiny model, real inspect,
the real rendered train.py through ``grpo-rlvr train``'s launcher. Each attack is stopped before the optimizer
steps, naming what differs; an honest run of the same brief passes its audit clean; a brief that loosens the audit
(``stop_on: never``) trains on, recorded. The run's report (written by train.py as the run ends, opened in headless
Chromium) says each of these with the record's numbers.

The reviews here are written by ``artifacts.review_all`` (a person's verdicts, as ``grpo-rlvr review`` records
them; the review itself is tested in a terminal in tests/review): the audit does not read verdicts, it reads what
the inspection says was sampled."""

from __future__ import annotations

import json

import pytest
import yaml

from artifacts import review_all, synthetic_trajectory
from briefs import shipped_example_text
from browser import assert_page_shows
from grpo_rlvr.audit.live import read_audit
from grpo_rlvr.demo import arithmetic_task as task
from grpo_rlvr.files import write_jsonl_atomic
from grpo_rlvr.gate.check import check_gate

pytestmark = pytest.mark.e2e


@pytest.fixture
def audited(tmp_path, warm_model_dir):
    """A folder like the demo's, its brief as shipped (the audit at its defaults), the warmed model, 400 rows."""
    data = yaml.safe_load(shipped_example_text())
    data["grpo"].update({"max_steps": 2, "save_steps": 1000, "logging_steps": 1})
    (tmp_path / "brief.yaml").write_text(yaml.safe_dump(data))
    write_jsonl_atomic(tmp_path / "data" / "train.jsonl", task.make_rows(400, seed=1))
    (tmp_path / "model").symlink_to(warm_model_dir, target_is_directory=True)
    return tmp_path


def _train(ws):
    from grpo_rlvr.run.launch import train
    from grpo_rlvr.run.render import render

    run = render(ws / "brief.yaml").dir
    log = ws / "train.log"
    with log.open("w") as fh:
        result = train(run, stream=fh)
    return run, result, log.read_text()


def _fabricated_review(ws, complete) -> None:
    """An inspection a script wrote: candidates of the real prompts in groups of 8 with completions of its choosing,
    scored by the real rewards, written with every digest and seal recomputed (``write_artifact``), then reviewed."""
    from grpo_rlvr.brief import load_brief
    from grpo_rlvr.dataset.rows import load_rows
    from grpo_rlvr.inspection.run import write_artifact

    brief = load_brief(ws / "brief.yaml")
    rows = load_rows(brief)
    cands, cand_rows = [], []
    for p, row in enumerate(rows[:48]):
        for j in range(8):
            cands.append({"prompt_index": p, "trajectory": synthetic_trajectory(row["prompt"], complete(row, j))})
            cand_rows.append(row)
    out = ws / "out" / "inspection"
    write_artifact(brief, cands, cand_rows, 64, out, sampling=brief.sampling(),
                   population=[r["prompt"] for r in rows])
    review_all(out)


def _tidy(row, j):
    """A completion a script chose: well formed, right in 2 of each 8."""
    return f"<answer>{row['answer'] if j < 2 else int(row['answer']) + 1}</answer>"


def _report_shows(run, work, outcome: str, *said: str) -> dict:
    """The run's report, as train.py wrote it when the run ended: its audit's outcome, and the page, opened in a
    browser, saying it with the first check's numbers (each comparison's line as the record states it)."""
    report = json.loads((run / "output" / "report.json").read_text())
    audit = report["audit"]
    assert audit["outcome"] == outcome and audit["checks"][0]["rollouts"] == 64, audit
    lines = [t["summary"] for t in audit["checks"][0]["tests"]]
    assert_page_shows(run / "output" / "report.html", work, "Live review audit", "./model", audit["sentence"],
                      *lines, *said)
    return report


def _stopped(run, result, log, *metrics):
    record = read_audit(run / "output")
    assert result.returncode == 1 and record["status"] == "diverged", log[-3000:]
    assert record["stopped"]["step"] == 0
    diverged = {t["metric"] for t in record["checks"][-1]["tests"] if t["diverged"]}
    assert set(metrics) <= diverged, diverged
    assert "STOPPED the run at step 0, before the optimizer stepped" in log
    assert "Training STOPPED by the review audit" in result.format()
    assert not list((run / "output").glob("checkpoint-*")) and not (run / "output" / "final").exists()
    return record


def test_an_honest_run_passes_its_audit_clean(audited):
    from grpo_rlvr.inspection.run import inspect_rewards

    inspect_rewards(audited / "brief.yaml")
    review_all(audited / "out" / "inspection")
    run, result, log = _train(audited)
    record = read_audit(run / "output")
    assert result.ok and record["status"] == "clean", log[-3000:]
    assert record["checks"][0]["rollouts"] == 64 and record["reference"]["rollouts"] == 384
    assert "training's first rollouts match the review" in log
    report = _report_shows(run, audited, "clean", "not loosened")
    assert report["state"]["state"] == "finished" and report["audit"]["loosened"] is None


def test_a_fabricated_tidy_review_is_stopped_by_training_s_own_rollouts(audited):
    """The script writes a review with no malformed completion (the warmed model writes most of its completions
    malformed), recomputing every digest and seal: the gate passes; training's first batch stops the run."""
    _fabricated_review(audited, _tidy)
    assert check_gate(audited / "out" / "inspection").passed
    run, result, log = _train(audited)
    record = _stopped(run, result, log, "malformed", "reward format")
    malformed = next(t for t in record["checks"][0]["tests"] if t["metric"] == "malformed")
    assert malformed["reviewed"] == "0/384" and malformed["summary"].startswith("malformed ")
    report = _report_shows(run, audited, "stopped", "STOPPED the run before the optimizer stepped",
                           record["stopped"]["what_to_do"])
    assert report["state"]["text"].startswith("stopped by the review audit at step 0, before the optimizer stepped")
    assert report["findings"][0]["id"] == "review_audit" and report["findings"][0]["stopped"]


def test_a_brief_that_loosens_the_audit_trains_on_and_its_report_says_who_loosened_it(audited):
    """``audit: {stop_on: never}`` in the brief the review was made with: the same fabricated review, training's
    first batch differs, the run is recorded as one the audit would have stopped and trains to its end; the report
    says the audit was loosened, by the brief, and that the review is bound to it."""
    data = yaml.safe_load((audited / "brief.yaml").read_text())
    data["audit"] = {"stop_on": "never"}
    (audited / "brief.yaml").write_text(yaml.safe_dump(data))
    _fabricated_review(audited, _tidy)
    run, result, log = _train(audited)
    record = read_audit(run / "output")
    assert result.ok and record["status"] == "diverged" and record["stopped"] is None, log[-3000:]
    assert record["settings"]["loosened"] and "would stop the run (stop_on: never)" in log
    report = _report_shows(run, audited, "would stop", "loosened by the brief's audit section", "stop_on: never",
                           "is bound to it", "review audit; would have stopped the run at step 0")
    assert report["state"]["state"] == "finished" and report["audit"]["loosened"]["by"] == "the brief's audit section"


def test_rows_shaped_around_a_predictable_draw_are_stopped(audited):
    """Most rows are another task; the review saw only rows of the task it expected (what a seeded draw let an
    attacker arrange). A fresh draw of these rows would show the other task; and training's first batch, drawn
    from all rows, stops the run."""
    from grpo_rlvr.brief import load_brief
    from grpo_rlvr.dataset.rows import load_rows
    from grpo_rlvr.inspection.run import write_artifact
    from grpo_rlvr.rollout.road import release, roll_out

    rows = task.make_rows(400, seed=1)
    other = [{"prompt": [{"role": "user", "content": f"Say the word number {i} of the list, spelled out: "}],
              "answer": "7"} for i in range(352)]
    write_jsonl_atomic(audited / "data" / "train.jsonl", rows[:48] + other)
    brief = load_brief(audited / "brief.yaml")
    mapped = load_rows(brief)
    drawn = roll_out(brief, mapped[:48], 8, seed=0)      # the review saw the expected rows only
    release()
    write_artifact(brief, [{"prompt_index": i, "trajectory": t} for i, t in zip(drawn.prompt_index,
                                                                               drawn.trajectories, strict=True)],
                   drawn.rows, 64, audited / "out" / "inspection", sampling=brief.sampling(),
                   population=[r["prompt"] for r in mapped])
    review_all(audited / "out" / "inspection")
    assert check_gate(audited / "out" / "inspection").passed
    run, result, log = _train(audited)
    _stopped(run, result, log, "prompt length")


def test_a_fresh_draw_does_not_avoid_the_rows_a_seeded_one_would(audited):
    """Two inspections of one brief draw different rows: which rows a person reads cannot be computed beforehand."""
    from grpo_rlvr.inspection import load_artifact
    from grpo_rlvr.inspection.run import inspect_rewards

    inspect_rewards(audited / "brief.yaml")
    first = {s["prompt_index"] for s in load_artifact(audited / "out" / "inspection").samples}
    inspect_rewards(audited / "brief.yaml")
    second = {s["prompt_index"] for s in load_artifact(audited / "out" / "inspection").samples}
    assert first != second
    draws = [json.loads(x) for x in (audited / "out" / "inspection" / "draws.jsonl").read_text().splitlines()]
    assert [d["number"] for d in draws] == [1, 2] and draws[0]["seed"] != draws[1]["seed"]
