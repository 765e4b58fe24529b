"""``validate`` reads every row of the data once and hands it to every reward's own column check: one bad row of
each reward's ground-truth column (tests, schema, expected call, answer) deep in the file is refused with its file,
line and column (exit 2), and the check is the function the reward itself reads the row with."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from briefs import example_brief_text
from grpo_rlvr.brief import load_brief
from grpo_rlvr.errors import ConfigError, RowError
from grpo_rlvr.rewards import build_reward, from_brief
from grpo_rlvr.validate.rows import check_rows

CLI = [sys.executable, "-m", "grpo_rlvr"]
BAD_LINE = 31   # the bad row is the 31st line: past the first row the brief loader reads, past a 16-prompt sample

SCHEMA = json.dumps({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
CALL = json.dumps({"name": "add", "arguments": {"a": 1, "b": 2}})

# reward, its column, a good value, a bad value, what the refusal says about it
CASES = {
    "unit_tests": ("tests", ["assert triple(1) == 3"], ["assert triple(1) == 3", "assert triple(1 == 3"],
                   "column 'tests': tests[1] is not valid Python"),
    "json_schema": ("schema", SCHEMA, json.dumps({"type": "objekt"}), "holds an invalid JSON Schema"),
    "tool_call": ("tool", CALL, json.dumps({"name": "add", "arguments": "a=1"}),
                  "whose arguments are not a JSON object"),
    "exact_match": ("answer", "3", "  ", "the dataset column 'answer' holds no answer"),
    "math": ("answer", "3", None, "the dataset column 'answer' holds no answer (None)"),
}


def brief_with(workspace, reward: str, rows: list[dict], eval_rows: list[dict] | None = None):
    data = yaml.safe_load(example_brief_text())
    data["rewards"] = [{"name": "format", "weight": 0.2}, {"name": reward, "weight": 1.0}]
    data["dataset"] = {"path": "./data/rows.jsonl", "prompt_column": "prompt"}
    (workspace / "data" / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    if eval_rows is not None:
        (workspace / "data" / "held.jsonl").write_text("".join(json.dumps(r) + "\n" for r in eval_rows))
        data["dataset"]["eval_path"] = "./data/held.jsonl"
    p = workspace / f"{reward}.yaml"
    p.write_text(yaml.safe_dump(data))
    return p


def rows_for(column: str, good, bad, n: int = 40, bad_line: int = BAD_LINE) -> list[dict]:
    rows = [{"prompt": f"question {i}", column: good} for i in range(n)]
    rows[bad_line - 1][column] = bad
    return rows


@pytest.mark.parametrize("reward", list(CASES))
def test_validate_refuses_one_bad_row_of_each_rewards_column_by_file_line_and_column(workspace, reward):
    column, good, bad, says = CASES[reward]
    ok = subprocess.run([*CLI, "validate", str(brief_with(workspace, reward, rows_for(column, good, good)))],
                        capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0, ok.stderr[-2000:]
    brief = brief_with(workspace, reward, rows_for(column, good, bad))
    out = subprocess.run([*CLI, "validate", str(brief)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr[-2000:]
    assert "dataset.path: 1 of 40 rows cannot be scored by their rewards" in out.stderr, out.stderr
    assert f"data/rows.jsonl, line {BAD_LINE}: " in out.stderr and says in out.stderr, out.stderr


def test_the_check_is_the_function_the_reward_reads_the_row_with(workspace):
    """What validate refuses, the reward refuses in the same words when it scores the row (inspect, score), and
    training leaves unscored: one function."""
    for reward, (column, _good, bad, says) in CASES.items():
        r = build_reward(reward)
        with pytest.raises(RowError) as refused:
            r.check_row({"prompt": "q", column: bad})
        assert says in str(refused.value) and refused.value.column == column
        with pytest.raises(RowError) as scored:
            r.explain(["<answer>3</answer>"], **{column: [bad]})
        assert str(scored.value) == str(refused.value)
        assert r(completions=["<answer>3</answer>"], **{column: [bad]}) == [None]
        assert r.unscorable == [(0, str(refused.value))]


def test_a_missing_column_a_mapped_column_and_the_held_out_file_are_named(workspace):
    rows = rows_for("tests", ["assert f(1) == 1"], ["assert f(1) == 1"])
    del rows[BAD_LINE - 1]["tests"]
    held = [{"prompt": "q", "tests": ["assert f(1) == 1"]}, {"prompt": "q2", "tests": "def test_x(:\n  pass"}]
    brief = brief_with(workspace, "unit_tests", rows, eval_rows=held)
    with pytest.raises(ConfigError) as e:
        check_rows(load_brief(brief))
    msg = str(e.value)
    assert f"rows.jsonl, line {BAD_LINE}: reward 'unit_tests' needs the dataset column 'tests'" in msg, msg
    assert "dataset.eval_path: 1 of 2 rows" in msg and "held.jsonl, line 2: reward 'unit_tests': column 'tests'" \
        in msg, msg

    data = yaml.safe_load(brief.read_text())   # the brief maps the reward's column to the file's own name
    data["dataset"].pop("eval_path")
    data["dataset"]["columns"] = {"tests": "checks"}
    rows = [{"prompt": f"q{i}", "checks": ["assert f(1) == 1"]} for i in range(5)]
    rows[3]["checks"] = ["assert f(1 == 1"]
    (workspace / "data" / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    brief.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match=r"line 4: .*column 'tests'.* \(column 'checks' in the file\)"):
        check_rows(load_brief(brief))


def test_many_bad_rows_are_counted_and_the_first_listed(workspace):
    rows = [{"prompt": f"q{i}", "answer": "" if i % 2 else "1"} for i in range(100)]
    brief = brief_with(workspace, "exact_match", rows)
    with pytest.raises(ConfigError) as e:
        check_rows(load_brief(brief))
    msg = str(e.value)
    assert "50 of 100 rows cannot be scored by their rewards (the first 20 listed)" in msg
    assert msg.count("holds no answer") == 20 and "line 2: " in msg and "line 40: " in msg and "line 42: " not in msg


def test_a_good_file_is_read_whole_and_other_formats_are_named_by_row(workspace):
    brief = brief_with(workspace, "unit_tests", rows_for("tests", ["assert f(1) == 1"], ["assert f(1) == 1"]))
    assert check_rows(load_brief(brief)) == 40
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = rows_for("schema", SCHEMA, "not json", n=6, bad_line=5)
    pq.write_table(pa.Table.from_pylist(rows), workspace / "data" / "rows.parquet")
    data = yaml.safe_load(brief_with(workspace, "json_schema", rows).read_text())
    data["dataset"]["path"] = "./data/rows.parquet"
    (workspace / "p.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match=r"rows.parquet, row 4: reward 'json_schema': the dataset column 'schema' "
                                          "holds text that is not JSON"):
        check_rows(load_brief(workspace / "p.yaml"))


def test_costly_checks_shared_among_processes_give_the_same_answer_in_file_order(workspace, monkeypatch):
    """Once the first rows show a costly check (unit_tests plans each row's tests, about a millisecond), the rest
    go to forked worker processes in chunks; what they find is merged in file order, as one process finds it."""
    from grpo_rlvr.validate import rows as data_rows
    from grpo_rlvr.validate.rows import checked_rows, dataset_rows

    rows = [{"prompt": f"q{i}", "tests": [f"assert f({i}) == {i}"]} for i in range(60)]
    for bad in (5, 23, 41, 58):
        rows[bad]["tests"] = [f"assert f({bad} == {bad}"]
    brief = load_brief(brief_with(workspace, "unit_tests", rows))
    checks = [(r.name, r.check_row) for r in from_brief(brief) if r.check_row]
    args = (checks, "prompt", {}, None)
    alone = checked_rows(dataset_rows(workspace / "data" / "rows.jsonl"), *args, workers=1)
    monkeypatch.setattr(data_rows, "PROBE_ROWS", 8)
    monkeypatch.setattr(data_rows, "CHUNK_ROWS", 7)
    monkeypatch.setattr(data_rows, "PARALLEL_ABOVE", 0.0)
    shared = checked_rows(dataset_rows(workspace / "data" / "rows.jsonl"), *args, workers=3)
    assert shared == alone and alone[1:] == (4, 60)
    assert [s.split(":")[0].split(", ")[-1] for s in shared[0]] == ["line 6", "line 24", "line 42", "line 59"]
