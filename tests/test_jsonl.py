"""The one JSONL reader, through every entry point that reads JSONL: a dataset (``load_brief`` + ``load_rows``),
``score`` input, an inspection's ``samples.jsonl``, a run's ``metrics.jsonl`` (diagnosis and the demo's curve).

Each Unicode character that ``str.splitlines`` treats as a line break is put raw inside a JSON string: a valid
file must read as valid, one record per ``\\n``."""

from __future__ import annotations

import json

import pytest

from grpo_rlvr.errors import GateError, InputFileError
from grpo_rlvr.jsonl import first_jsonl_row, parse_jsonl, read_jsonl

# Every separator str.splitlines splits on, besides "\n", "\r" and "\r\n" (raw "\r" is not valid inside JSON).
SEPARATORS = {"U+2028": "\u2028", "U+2029": "\u2029", "U+0085": "\x85", "VT": "\x0b", "FF": "\x0c",
              "FS": "\x1c", "GS": "\x1d", "RS": "\x1e"}


def raw_line(obj: dict) -> str:
    """One JSONL record with every character written raw: json.dumps(ensure_ascii=False) keeps U+2028, U+2029
    and U+0085 raw; the control characters (\\x0b, \\x0c, \\x1c-\\x1e) it escapes are put back raw, as writers
    that do not escape them leave them (the reader accepts them inside strings)."""
    line = json.dumps(obj, ensure_ascii=False)
    for sep in SEPARATORS.values():
        line = line.replace(json.dumps(sep)[1:-1], sep)
    return line


def text_with(sep: str) -> str:
    """Two records, ``sep`` raw inside a string of the first, a CRLF after it and a blank line at the end."""
    first = raw_line({"completion": f"a{sep}b", "answer": "7"})
    assert sep in first and "\n" not in first
    return first + "\r\n" + raw_line({"completion": "<answer>7</answer>", "answer": "7"}) + "\n\n"


def test_splitlines_would_break_each_of_these_files():
    """The premise: every separator here splits a line for str.splitlines (so the old readers failed)."""
    for sep in SEPARATORS.values():
        assert len(text_with(sep).splitlines()) == 4  # 3 with the blank line, one too many


@pytest.mark.parametrize("name", SEPARATORS)
def test_parse_jsonl_splits_on_newline_only(name):
    sep = SEPARATORS[name]
    rows = parse_jsonl(text_with(sep), "input x.jsonl")
    assert [r["completion"] for r in rows] == [f"a{sep}b", "<answer>7</answer>"]


def test_errors_name_file_line_and_fix(tmp_path):
    p = tmp_path / "d.jsonl"
    p.write_text('{"a": 1}\n\n{"a": \u2028 2,}\n', encoding="utf-8")
    with pytest.raises(InputFileError, match=r"dataset .*d\.jsonl, line 3: not valid JSON .* each line must be"):
        read_jsonl(p, "dataset")
    p.write_text('[1]\n', encoding="utf-8")
    with pytest.raises(GateError, match=r"line 1: expected a JSON object, got list; re-run"):
        read_jsonl(p, "samples", GateError, "re-run `grpo-rlvr inspect`")
    with pytest.raises(InputFileError, match="file not found"):
        read_jsonl(tmp_path / "none.jsonl", "input")


@pytest.mark.parametrize("name", SEPARATORS)
def test_first_row_reads_one_record(tmp_path, name):
    p = tmp_path / "d.jsonl"
    p.write_text(text_with(SEPARATORS[name]), encoding="utf-8", newline="")
    assert first_jsonl_row(p) == {"completion": f"a{SEPARATORS[name]}b", "answer": "7"}


@pytest.mark.parametrize("name", SEPARATORS)
def test_score_input(tmp_path, name):
    from grpo_rlvr.score.scoring import score_file

    p = tmp_path / "in.jsonl"
    p.write_text(text_with(SEPARATORS[name]), encoding="utf-8", newline="")
    got = score_file(p, reward="format")
    assert [r["score"] for r in got] == [0.0, 1.0]


@pytest.mark.parametrize("name", SEPARATORS)
def test_inspection_samples(tmp_path, name):
    from grpo_rlvr.inspection.artifact import load_artifact

    (tmp_path / "manifest.json").write_text("{}")
    (tmp_path / "samples.jsonl").write_text(text_with(SEPARATORS[name]), encoding="utf-8", newline="")
    art = load_artifact(tmp_path)
    assert [s["completion"] for s in art.samples] == [f"a{SEPARATORS[name]}b", "<answer>7</answer>"]


@pytest.mark.parametrize("name", SEPARATORS)
def test_run_metrics_for_diagnosis_and_the_demo_curve(tmp_path, name):
    from grpo_rlvr.demo.pipeline import _curve
    from grpo_rlvr.diagnosis.metrics import load_run_logs

    sep = SEPARATORS[name]
    lines = [raw_line({"step": s, "reward": 0.1 * s, "loss": 0.0, "note": f"x{sep}y"})
             for s in (5, 10)]
    (tmp_path / "output").mkdir()
    (tmp_path / "output" / "metrics.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8", newline="")
    logs = load_run_logs(tmp_path)
    assert list(logs.history.steps) == [5, 10]
    assert [c["step"] for c in _curve(tmp_path / "output" / "metrics.jsonl")] == [5, 10]


def test_dataset_through_the_brief(workspace):
    from grpo_rlvr.brief import load_brief
    from grpo_rlvr.dataset.rows import load_rows

    rows = [{"prompt": [{"role": "user", "content": f"1+1={sep}"}], "answer": f"2{sep}"}
            for sep in SEPARATORS.values()]
    (workspace / "data" / "train.jsonl").write_text("".join(raw_line(r) + "\n" for r in rows), encoding="utf-8")
    got = load_rows(load_brief(workspace / "brief.yaml"))
    assert [r["answer"] for r in got] == [r["answer"] for r in rows]
