"""The input layer: every file the CLI reads becomes a value or an InputFileError naming it — nothing else."""

from __future__ import annotations

import json

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grpo_rlvr.errors import InputFileError
from grpo_rlvr.input_files import (
    MAX_DEPTH,
    load_json,
    load_yaml,
    parse_json,
    parse_yaml,
    read_text,
)
from grpo_rlvr.jsonl import iter_jsonl, read_jsonl
from hang_guard import no_hang

# A document of nine lines whose aliases expand to 9**9 (387 million) strings.
BILLION_LAUGHS = "".join(
    f"{n}: &{n} [" + ",".join([f"*{p}"] * 9 if p else ['"lol"'] * 9) + "]\n"
    for p, n in zip([None, *"abcdefgh"], "abcdefghi", strict=True)
) + "model: *i\n"


def test_alias_bomb_is_refused_before_expansion():
    with pytest.raises(InputFileError, match="aliases expand to more than") as e:
        parse_yaml(BILLION_LAUGHS, "brief b.yaml")
    assert "lol" not in str(e.value)  # nothing of the expanded value is printed


def test_ordinary_anchors_and_merge_keys_still_work():
    data = parse_yaml("base: &b {lr: 1.0e-6}\nrun:\n  <<: *b\n  beta: 0.01\nother: *b\n", "b.yaml")
    assert data == {"base": {"lr": 1e-6}, "run": {"lr": 1e-6, "beta": 0.01}, "other": {"lr": 1e-6}}


@pytest.mark.parametrize("text, what", [
    ("a: 1\nb: 2\na: 3\n", "duplicate key 'a' (first at line 1)"),
    ("rewards:\n  - name: format\n    name: math\n", "duplicate key 'name'"),
    ("1: 2\n", "key '1' is read as a number"),
    ("yes: 1\n", "key 'yes' is read as a boolean"),
    ("[" * 5000 + "]" * 5000, f"nested deeper than {MAX_DEPTH} levels"),
    ("a: [1, 2\n", "not valid YAML at line"),
    ("a: !!python/object:os.system {}\n", "not valid YAML"),
])
def test_yaml_errors_name_the_problem(text, what):
    with pytest.raises(InputFileError, match="brief b.yaml") as e:
        parse_yaml(text, "brief b.yaml")
    assert what in str(e.value)


def test_yaml_depth_through_aliases_is_bounded():
    # each anchor nests the previous one: 150 levels once expanded, though no line is deep
    lines = ["a0: &a0 [1]"] + [f"a{i}: &a{i} [*a{i - 1}]" for i in range(1, 150)]
    with pytest.raises(InputFileError, match="once aliases are expanded"):
        parse_yaml("\n".join(lines) + "\n", "b.yaml")


def test_non_utf8_file(tmp_path):
    p = tmp_path / "brief.yaml"
    p.write_bytes(b"model: caf\xe9\n")
    with pytest.raises(InputFileError, match=r"not UTF-8 text \(byte 0xe9 at offset 10\); save the file as UTF-8"):
        load_yaml(p, "brief")


def test_missing_folder_and_unreadable(tmp_path):
    with pytest.raises(InputFileError, match="file not found"):
        read_text(tmp_path / "nope.yaml", "brief")
    with pytest.raises(InputFileError, match="is a folder, not a file"):
        read_text(tmp_path, "brief")


def test_json_duplicates_depth_and_syntax(tmp_path):
    with pytest.raises(InputFileError, match="duplicate key 'age'"):
        parse_json('{"age": 1, "age": 2}', "x.json")
    with pytest.raises(InputFileError, match="nested deeper"):
        parse_json("[" * 100_000 + "]" * 100_000, "x.json")
    with pytest.raises(InputFileError, match="nested deeper than 3 levels"):
        parse_json("[[[[1]]]]", "x.json", max_depth=3)
    p = tmp_path / "m.json"
    p.write_text('{"a": }')
    with pytest.raises(InputFileError, match=r"manifest .*m.json: not valid JSON \(Expecting value at column 7\); fix the syntax"):
        load_json(p, "manifest")


@pytest.mark.parametrize("sep", ["\u2028", "\u2029", "\u0085"])  # JSON escapes the C0 ones itself
def test_jsonl_splits_on_newline_only(tmp_path, sep):
    p = tmp_path / "rows.jsonl"
    rows = [{"completion": f"one{sep}two"}, {"completion": "three"}]
    p.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    assert sep in p.read_text(encoding="utf-8")  # written raw, not escaped
    assert read_jsonl(p) == rows


def test_jsonl_crlf_blank_lines_bom_and_line_numbers(tmp_path):
    p = tmp_path / "rows.jsonl"
    p.write_bytes(b'\xef\xbb\xbf{"a": 1}\r\n\r\n{"a": 2}\r\n')
    assert list(iter_jsonl(p)) == [(1, {"a": 1}), (3, {"a": 2})]
    p.write_bytes(b'{"a": 1}\n{"a": \n{"a": 3}\n')
    with pytest.raises(InputFileError, match=r"rows.jsonl, line 2: not valid JSON"):
        read_jsonl(p, "data")


def test_jsonl_torn_tail_is_skipped_only_when_asked_and_only_at_the_end(tmp_path):
    p = tmp_path / "metrics.jsonl"
    p.write_bytes(b'{"step": 1}\n{"step": 2}\n{"step": 3, "lo')
    with pytest.raises(InputFileError, match="line 3: not valid JSON"):
        read_jsonl(p, "metrics")
    notes = []
    assert [r for _, r in iter_jsonl(p, "metrics", torn_tail=notes)] == [{"step": 1}, {"step": 2}]
    assert notes == ["metrics.jsonl line 3 is half-written (the run stopped mid-write?): skipped"]
    p.write_bytes(b'{"step": 1}\n{"step": \n{"step": 3}\n')
    with pytest.raises(InputFileError, match="line 2: not valid JSON"):
        list(iter_jsonl(p, "metrics", torn_tail=[]))


def test_jsonl_duplicate_keys_are_refused(tmp_path):
    p = tmp_path / "rows.jsonl"
    p.write_text('{"answer": "1", "answer": "2"}\n')
    with pytest.raises(InputFileError, match="line 1: duplicate key 'answer'"):
        read_jsonl(p, "dataset")


# --- fuzz: whatever the bytes, a value or InputFileError ------------------------------------------------

_FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda kids: st.lists(kids, max_size=5) | st.dictionaries(st.text(max_size=8), kids, max_size=5),
    max_leaves=40,
)


@_FUZZ
@given(st.binary(max_size=400))
def test_fuzz_yaml_bytes(data):
    try:
        with no_hang():
            parse_yaml(data.decode("utf-8", "replace"), "b.yaml")
    except InputFileError:
        pass


@_FUZZ
@given(json_values, st.integers(0, 200), st.sampled_from(["&x ", "*x ", "<<: ", "\n", ": ", "- ", "[", "{", "!!"]))
def test_fuzz_yaml_mutated_trees(value, at, insert):
    text = yaml.safe_dump(value)
    at = min(at, len(text))
    try:
        with no_hang():
            parse_yaml(text[:at] + insert + text[at:], "b.yaml", text_keys=False)
    except InputFileError:
        pass


@_FUZZ
@given(st.binary(max_size=400))
def test_fuzz_json_and_jsonl_bytes(tmp_path_factory, data):
    p = tmp_path_factory.mktemp("fz") / "f.jsonl"
    p.write_bytes(data)
    for read in (lambda: load_json(p), lambda: read_jsonl(p)):  # JSON lines: grpo_rlvr.jsonl
        try:
            with no_hang():
                read()
        except InputFileError:
            pass


@_FUZZ
@given(json_values)
def test_fuzz_json_roundtrip(value):
    assert parse_json(json.dumps(value), "x.json") == value
