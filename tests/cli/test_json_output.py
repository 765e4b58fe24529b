"""The CLI's output contract: with ``--json`` stdout holds exactly one JSON document (``score``: JSON lines),
on success and on failure; a reader that goes away (``| head``) ends the command quietly."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from artifacts import make_artifact

CLI = [sys.executable, "-m", "grpo_rlvr"]


def run(*args, **kw):
    return subprocess.run([*CLI, *args], capture_output=True, text=True, **kw)


def one_document(out: subprocess.CompletedProcess):
    assert "Traceback" not in out.stderr, out.stderr[-2000:]
    return json.loads(out.stdout)  # raises if anything but one JSON document is there


@pytest.fixture
def scored_input(tmp_path):
    f = tmp_path / "in.jsonl"
    f.write_text("".join(json.dumps({"prompt": "1+1=", "completion": f"<answer>{i % 3}</answer>", "answer": "2"})
                         + "\n" for i in range(6)))
    return f


def test_every_command_with_json_prints_only_json_on_failure(tmp_path):
    """A bad path for each command: exit 2, `Error:` on stderr, and a JSON error document on stdout."""
    missing = str(tmp_path / "missing")
    cases = {
        "validate": [missing + ".yaml"], "preflight": [missing + ".yaml"], "inspect": [missing + ".yaml"],
        "render": [missing + ".yaml"], "gate": [missing], "train": [missing], "diagnose": [missing],
        "report": [missing],
        "score": ["--reward", "exact_match", "--input", missing + ".jsonl"], "memory": ["--size", "huge"],
    }
    for cmd, args in cases.items():
        out = run(cmd, *args, "--json")
        doc = one_document(out)
        assert out.returncode == 2, (cmd, out.stderr)
        assert doc["ok"] is False and doc["exit_code"] == 2 and doc["error"], cmd
        assert out.stderr.startswith("Error: "), (cmd, out.stderr)


def test_json_on_success(workspace, scored_input):
    brief = str(workspace / "brief.yaml")
    assert "grpo_config" in one_document(run("validate", brief, "--json"))
    assert one_document(run("memory", "--size", "1.5B", "--gpu", "24GB", "--json"))["estimate"]
    lines = run("score", "--reward", "exact_match", "--input", str(scored_input), "--json").stdout.splitlines()
    assert [json.loads(x)["index"] for x in lines] == list(range(6))  # JSON lines, one per completion

    insp = make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    gate = run("gate", str(insp), "--json")
    assert one_document(gate)["passed"] is True and gate.returncode == 0
    rendered = one_document(run("render", brief, "--json"))
    train = one_document(run("train", rendered["dir"], "--dry-run", "--json"))
    assert train["dry_run"] is True and train["command"]


@pytest.mark.e2e
def test_json_on_success_for_sampling_commands(workspace):
    brief = str(workspace / "brief.yaml")
    pre = run("preflight", brief, "--prompts", "4", "--k", "8", "--json")
    assert one_document(pre)["verdict"] in ("sft-first", "grpo", "too-easy")
    ins = run("inspect", brief, "--samples", "50", "--json")
    assert ins.returncode == 0, ins.stderr[-2000:]
    assert one_document(ins)["samples"] == 50


def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path):
    f = tmp_path / "in.jsonl"
    f.write_text("".join(json.dumps({"completion": "<answer>1</answer>", "answer": "1"}) + "\n"
                         for _ in range(20_000)))
    for args in (["score", "--reward", "exact_match", "--input", str(f)],
                 ["score", "--reward", "exact_match", "--input", str(f), "--json"]):
        proc = subprocess.Popen([*CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        proc.stdout.readline()
        proc.stdout.close()  # like `| head -1`
        err = proc.stderr.read().decode()
        proc.wait(timeout=120)
        assert "Traceback" not in err and "BrokenPipe" not in err, err[-2000:]
        assert proc.returncode == 141
