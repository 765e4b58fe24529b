"""Exit codes scripts can trust: 0 success or healthy, 1 the check failed or a failure mode was found, 2 bad input.
Each command's --help says what 0 and 1 mean for it, docs/pipeline.md's table is the same registry, --json carries
"exit_code", and diagnose exits 1 when it names a failure mode (so `diagnose RUN || alert` alerts)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from grpo_rlvr.cli.main import BAD_INPUT, EXIT_CODES, build_parser
from histories import HEALTHY, history, write_state
from paths import REPO

CLI = [sys.executable, "-m", "grpo_rlvr"]
PIPELINE_DOC = REPO / "docs" / "pipeline.md"


def run(*args, cwd=None):
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, cwd=cwd)


def test_every_command_has_its_exit_codes_and_only_those():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert set(sub.choices) == set(EXIT_CODES)


@pytest.mark.parametrize("cmd", sorted(EXIT_CODES))
def test_help_says_what_each_exit_code_means(cmd, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")   # argparse wraps at hyphens otherwise ("lower- temperature")
    with pytest.raises(SystemExit) as done:
        build_parser().parse_args([cmd, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    ok, failed = EXIT_CODES[cmd]
    assert done.value.code == 0
    assert f"Exit codes: 0 {ok}; 1 {failed}; 2 {BAD_INPUT}." in text, text


def test_the_docs_table_is_the_registry():
    table = re.search(r"<!-- generated: exit-codes -->\n(.*?)<!-- end -->", PIPELINE_DOC.read_text(), re.S).group(1)
    rows = {m.group(1): (m.group(2), m.group(3)) for m in re.finditer(r"^\| `([a-z]+)` \| (.+?) \| (.+?) \|$", table,
                                                                      re.M)}
    assert rows == EXIT_CODES


def test_diagnose_exits_0_healthy_1_on_a_failure_mode_2_on_bad_input(tmp_path):
    healthy = tmp_path / "healthy"
    healthy.mkdir()
    r = run("diagnose", write_state(healthy, history(**HEALTHY)), "--out", healthy, "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["exit_code"] == 0 and json.loads(r.stdout)["healthy"], r.stderr
    hacking = tmp_path / "hacking"
    hacking.mkdir()
    state = write_state(hacking, history(**{**HEALTHY, "completions__clipped_ratio": lambda i: 0.4}))
    r = run("diagnose", state, "--out", hacking)
    assert r.returncode == 1 and "[warning]" in r.stdout and "Many completions are truncated" in r.stdout, r.stderr
    r = run("diagnose", tmp_path / "missing", "--json")
    assert r.returncode == 2 and json.loads(r.stdout)["exit_code"] == 2 and "Traceback" not in r.stderr


def test_gate_and_validate_json_carry_the_exit_code(workspace, tmp_path):
    r = run("validate", workspace / "brief.yaml", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["exit_code"] == 0
    empty = tmp_path / "insp"
    empty.mkdir()
    r = run("gate", empty, "--json")
    assert r.returncode == 2 and json.loads(r.stdout)["exit_code"] == 2


@pytest.mark.parametrize("flag, value, said", [
    ("--steps", "0", "argument --steps: 0 is below 1"),        # was read as "no value": a whole 100-step demo ran
    ("--warmup-steps", "-3", "argument --warmup-steps: -3 is below 1"),
    ("--eval-samples", "ten", "argument --eval-samples: 'ten' is not a whole number"),
])
def test_demo_refuses_a_count_below_one_before_doing_anything(tmp_path, flag, value, said):
    res = run("demo", "--workdir", tmp_path / "demo", flag, value)
    assert res.returncode == 2 and said in res.stderr, res.stderr
    assert not (tmp_path / "demo").exists()
