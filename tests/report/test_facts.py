"""``grpo-rlvr report RUN`` on runs written as training writes them: every fact the page states, in report.json;
a run in progress, a run that died, one not started, a plain TRL output folder; the CLI's exit codes and --json."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import pytest

from grpo_rlvr.audit.live import AuditSettings
from grpo_rlvr.errors import ConfigError, InputFileError
from grpo_rlvr.report import write_report
from grpo_rlvr.report.live_audit import NOT_RECORDED
from histories import HEALTHY, history
from report.conftest import write_audit, write_jsonl

CLI = [sys.executable, "-m", "grpo_rlvr"]


def test_the_report_of_a_finished_run_states_what_trained_its_review_and_what_happened(written_run):
    made = write_report(written_run)
    f = json.loads(made.json.read_text())
    assert made.html == written_run / "output" / "report.html" and made.html.stat().st_size > 50_000
    assert f["state"] == {"state": "finished", "text": "finished at step 100; training loop 42 s (TRL's train_runtime: "
                                                      "loading the model and data not counted)"}
    t = f["trained"]
    assert t["model"]["name"] == "./model" and t["model"]["identity"]["kind"] == "folder"
    assert list(t["model"]["identity"]["weights"]) == ["model.safetensors"]
    assert t["data"]["identity"]["kind"] == "file" and len(t["data"]["identity"]["sha256"]) == 64
    assert [(r["name"], r["kind"], r["weight"]) for r in t["rewards"]] == [("format", "format", 0.2),
                                                                           ("exact_match", "correctness", 1.0)]
    assert all(len(r["fingerprint"]) == 64 for r in t["rewards"]) and t["config"]["num_generations"] == 8
    p = f["provenance"]
    assert p["signed_start"] and p["proven"] and p["problems"] == [] and p["starts"][0]["valid"]
    assert f["review"]["error_rates"]["any"]["wrong"] == 2 and f["review"]["reviewed"] == 64
    assert f["audit"] == {"recorded": False, "note": NOT_RECORDED}
    (trunc,) = f["findings"]
    assert trunc["id"] == "truncation" and trunc["spans"] == [[10, 30]] and not trunc["present"]
    assert f["headline"]["reward"] == {"first": 0.2, "first_step": 5, "last": 0.58, "last_step": 100}
    assert [g["when"] for g in f["rollouts"]] == ["start", "middle", "end"]
    assert {c["key"] for c in f["curves"]} >= {"reward", "correctness", "length", "kl", "entropy"}
    assert f["watchdog_cost"]["checks"] == 20 and f["made_in_s"] < made.seconds + 1e-9

    html = made.html.read_text()
    assert "./model" in html and "ada (human)" in html and "the answer is right: the reward misreads" in html
    assert "Many completions are truncated" in html and "Raise max_completion_length" in html
    assert NOT_RECORDED in html
    # self-contained: every picture inlined, nothing fetched, no script
    refs = re.findall(r'(?:src|href)="([^"]*)"', html)
    assert refs and all(r.startswith(("data:", "#")) for r in refs), [r[:40] for r in refs]
    assert "<script" not in html and "\x1b" not in html and "\\x1b[2J" in html


def test_a_diverged_audit_and_its_stop_are_on_the_page(written_run):
    out = written_run / "output"
    record = write_audit(out, diverge=True)
    f = write_report(written_run).facts
    assert f["state"]["state"] == "stopped"
    assert f["state"]["text"].startswith("stopped by the review audit at step 0, before the optimizer stepped: "
                                         "training's own rollouts differ from the reviewed inspection")
    assert f["audit"]["outcome"] == "stopped" and f["audit"]["loosened"] is None
    assert f["findings"][0]["id"] == "review_audit" and f["findings"][0]["number"] == 1
    assert f["findings"][0]["sources"] == ["review audit", "diagnose"]
    html = (out / "report.html").read_text()
    malformed = next(t for t in record["checks"][0]["tests"] if t["metric"] == "malformed")
    assert "STOPPED the run before the optimizer stepped" in html and malformed["summary"] in html
    assert malformed["method"] in html and "not loosened" in html


def test_a_loosened_audit_that_would_have_stopped_says_who_loosened_it(written_run):
    out = written_run / "output"
    write_audit(out, diverge=True, settings=AuditSettings(stop_on="never", origin="brief"))
    f = write_report(written_run).facts
    assert f["state"]["state"] == "finished" and f["audit"]["outcome"] == "would stop"
    stop = next(x for x in f["findings"] if x["id"] == "review_audit")
    assert stop["stop_step"] == 0 and not stop["stopped"]
    html = (out / "report.html").read_text()
    assert "loosened by the brief&#39;s audit section" in html and "stop_on: never" in html
    assert "the review by ada (human), tester (human) is bound to it" in html
    assert "review audit; would have stopped the run at step 0" in html


def test_a_run_in_progress_named_by_its_output_folder(written_run):
    out = written_run / "output"
    out.joinpath("metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in history(6, **HEALTHY)))
    f = write_report(out).facts
    assert f["state"] == {"state": "running", "text": "in progress at step 30 (or ended without a summary, a stop or "
                                                      "a crash record)"}
    assert f["run"] == str(written_run) and (out / "report.html").is_file()


def test_a_run_that_died_and_one_not_started(crashed_run):
    died = write_report(crashed_run).facts
    assert died["state"]["text"] == ("died after step 15: RewardError: user reward 'one_value' returned 1 values for "
                                     "64 completions")
    assert died["findings"][0]["id"] == "crashed" and "the message names" in died["findings"][0]["recommendation"]
    html = (crashed_run / "output" / "report.html").read_text()
    assert "The run died." in html and "grpo_rlvr/rewards/user.py:120" in html
    shutil.rmtree(crashed_run / "output")
    f = write_report(crashed_run).facts
    assert f["state"]["state"] == "not started" and f["curves"] == [] and not f["provenance"]["signed_start"]


def test_a_plain_trl_output_folder_gets_its_curves_and_findings(tmp_path):
    write_jsonl(tmp_path / "metrics.jsonl", history(10, **HEALTHY))
    f = write_report(tmp_path).facts
    assert f["trained"] is None and f["provenance"] is None and f["review"] is None and f["curves"]


def test_bad_targets_are_refused(tmp_path, written_run):
    with pytest.raises(InputFileError, match="not found"):
        write_report(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputFileError, match="neither a run folder"):
        write_report(tmp_path / "empty")
    inspection = written_run.parent / "inspection"
    with pytest.raises(ConfigError, match="inspection"):
        write_report(written_run, out=inspection)   # never written into a review


def test_the_command_line(written_run, tmp_path):
    done = subprocess.run([*CLI, "report", str(written_run), "--json"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["exit_code"] == 0 and doc["state"] == "finished" and doc["html"].endswith("output/report.html")
    assert doc["html_bytes"] > 50_000 and doc["findings"] == 1
    said = subprocess.run([*CLI, "report", str(written_run), "--out", str(tmp_path / "elsewhere")],
                          capture_output=True, text=True)
    assert said.returncode == 0 and f"written: {tmp_path / 'elsewhere' / 'report.html'}" in said.stdout
    assert "0 finding(s) at the end, 1 cleared during training" in said.stdout
    bad = subprocess.run([*CLI, "report", str(tmp_path / "missing")], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.startswith("Error: ") and "Traceback" not in bad.stderr
