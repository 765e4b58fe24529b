"""A run's trackio dashboard names it as the person knows it: the project is the brief's name (not TRL's default
"huggingface"), the run is its folder, a resume continues that run instead of starting one under a new random
name, and the output of a run written to a file holds no terminal escape codes (trackio's banner colours its
"trackio show" line always)."""

from __future__ import annotations

import re
import sqlite3

import pytest

from diagnosis.test_runs import prepare_run
from grpo_rlvr.plain_output import run_name_of
from grpo_rlvr.run.launch import train

pytestmark = pytest.mark.e2e


def _runs(db) -> set[str]:
    with sqlite3.connect(db) as con:
        return {r[0] for r in con.execute("SELECT DISTINCT run_name FROM metrics")}


def test_the_project_is_the_brief_the_run_its_folder_and_a_resume_continues_it(workspace, tiny_model_dir,
                                                                                tmp_path, monkeypatch):
    store = tmp_path / "trackio"
    monkeypatch.setenv("TRACKIO_DIR", str(store))   # the training inherits it
    run = prepare_run(workspace, tiny_model_dir, {"logging_steps": 1, "save_steps": 2, "report_to": "trackio"}, 0,
                      steps=3, sections={"watch": {"stop_on": "never"}})
    log = tmp_path / "train.log"
    with log.open("w") as fh:   # redirected, as a person's `grpo-rlvr train RUN > train.log 2>&1`
        first = train(run, max_steps=2, stream=fh)
    said = log.read_text()
    assert first.ok, said[-3000:]
    assert [p.name for p in store.glob("*.db")] == ["arithmetic-demo.db"], list(store.rglob("*"))
    name = run_name_of(run)   # the folder's name and its path's digest: another folder named alike is another run
    assert name.startswith(run.name + "-") and name != run_name_of(run.parent / "elsewhere" / run.name)
    assert _runs(store / "arithmetic-demo.db") == {name}
    assert f"* Created new run: {name}" in said, said[-3000:]
    assert 'trackio show --project "arithmetic-demo"' in said and "\x1b" not in said, \
        [line for line in said.splitlines() if "\x1b" in line or "trackio show" in line]

    with log.open("w") as fh:
        again = train(run, resume=True, stream=fh)
    said = log.read_text()
    assert again.ok and again.resumed_from.endswith("checkpoint-2"), said[-3000:]
    assert f"* Resumed existing run: {name}" in said, said[-3000:]
    assert _runs(store / "arithmetic-demo.db") == {name}
    assert not re.search(r"\x1b", said)
