"""The input layer: every file the CLI reads becomes a value or an InputFileError naming it — nothing else."""

from __future__ import annotations

import json

import pytest
import yaml
from hypothesis import example, given
from hypothesis import strategies as st

from fuzz_profile import fuzz_settings
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
from hostile_yaml import BILLION_LAUGHS


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
    # a value YAML's resolver (or a tag) hands to a converter that cannot read it: the converter's exception
    # (ValueError, KeyError, AttributeError) used to escape as a traceback
    # datetime's own reason, as this Python words it (3.14 adds ", not 13")
    ("a: 2024-13-45\n", "'2024-13-45' cannot be read as a YAML timestamp (month must be in 1..12"),
    ("when: 2024-01-01 25:00:00\n", "cannot be read as a YAML timestamp (hour must be in 0..23"),
    ("a: !!int x\n", "'!!int x' cannot be read as a YAML int"),
    ("a: !!bool maybe\n", "'!!bool maybe' cannot be read as a YAML bool"),
    ("a: !!timestamp x\n", "cannot be read as a YAML timestamp"),
    ("a: 1\nb: !!float '.'\n", "at line 2: \"!!float '.'\" cannot be read as a YAML float"),
])
def test_yaml_errors_name_the_problem(text, what):
    with pytest.raises(InputFileError, match="brief b.yaml") as e:
        parse_yaml(text, "brief b.yaml")
    assert what in str(e.value)


# Every shape a mapping key can take besides text. text_keys=False (JSON-like keys) takes numbers, booleans and
# null too, so its message differs for those; a key that cannot be hashed used to crash it (TypeError).
KEY_SHAPES = [
    ("[a]: 1\n", "a key is a list ([a])", '("[a]": …)'),
    ("? [a, b]\n: 1\n", "a key is a list ([a, b])", '("[a, b]": …)'),
    ("{a: 1}: 2\n", "a key is a mapping ({a: 1})", '("{a: 1}": …)'),
    ("!!set {a}: 1\n", "a key is a set (!!set)", "or move the structure into the value"),
    ("? !!omap [a: 1]\n: 2\n", "a key is an ordered mapping (!!omap)", "or move the structure into the value"),
    ("x: &k [1]\ny:\n  *k : 2\n", "a key is a list (&k [1])", "quote it"),     # an alias to a list as a key
    ("2024-01-01: 1\n", "key '2024-01-01' is read as a date", '("2024-01-01": …)'),
    ("2024-01-01 10:00:00: 1\n", "key '2024-01-01 10:00:00' is read as a timestamp", "quote it"),
    ("!!binary aGk=: 1\n", "key '!!binary aGk=' is read as binary data", "quote it"),
    ("a: 1\n'b\"c': 2\n[x]: 3\n", "at line 3: a key is a list ([x])", "quote it"),
]


@pytest.mark.parametrize("text_keys", [True, False])
@pytest.mark.parametrize("text, what, fix", KEY_SHAPES)
def test_every_key_shape_that_is_not_allowed_is_named_with_its_line_and_fix(text, what, fix, text_keys):
    with pytest.raises(InputFileError, match=r"^brief b\.yaml at line \d+: ") as e:
        parse_yaml(text, "brief b.yaml", text_keys=text_keys)
    assert what in str(e.value) and fix in str(e.value), str(e.value)
    assert ("must be text:" if text_keys else "must be text, a number, a boolean or null") in str(e.value) \
        or "is read as" in str(e.value)


@pytest.mark.parametrize("text, text_keys, what", [
    (".nan: 1\n", True, "key '.nan' is read as a number, not text; quote it (\".nan\": …)"),
    (".nan: 1\n", False, "key '.nan' is read as NaN, which equals no other key"),
    ("1: a\nyes: b\n~: c\n", True, "key '1' is read as a number"),
])
def test_number_nan_and_null_keys(text, text_keys, what):
    with pytest.raises(InputFileError) as e:
        parse_yaml(text, "b.yaml", text_keys=text_keys)
    assert what in str(e.value)


def test_json_like_keys_pass_when_text_keys_is_off():
    assert parse_yaml("2: a\ntrue: b\n~: c\n1.5: d\nx: e\n", "b.yaml", text_keys=False) == \
        {2: "a", True: "b", None: "c", 1.5: "d", "x": "e"}
    with pytest.raises(InputFileError, match="duplicate key 1 "):
        parse_yaml("1: a\n1: b\n", "b.yaml", text_keys=False)


@pytest.mark.parametrize("text", ["a: &a [*a]\n", "b: &b {x: *b}\n", "&k [*k]: 1\n",
                                  "a: &a\n  - [1, [2, *a]]\n"])
def test_an_alias_inside_the_node_it_names_is_refused(text):
    # such a document would expand without end: it used to hang the loader while memory grew
    with pytest.raises(InputFileError, match="an alias refers to a node that contains it") as e, no_hang(10):
        parse_yaml(text, "brief b.yaml")
    assert str(e.value).startswith("brief b.yaml at line 1: ") and "write the value out" in str(e.value)


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

_FUZZ = fuzz_settings(300)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda kids: st.lists(kids, max_size=5) | st.dictionaries(st.text(max_size=8), kids, max_size=5),
    max_leaves=40,
)


@_FUZZ
@given(st.binary(max_size=400))
@example(b"a: &a [*a]\n")      # an alias cycle: hung the loader
@example(b"a: 2024-13-45\n")   # a timestamp datetime refuses: a ValueError traceback
@example(b"[a]: 1\n")
def test_fuzz_yaml_bytes(data):
    try:
        with no_hang():
            parse_yaml(data.decode("utf-8", "replace"), "b.yaml")
    except InputFileError:
        pass


@_FUZZ
@given(json_values, st.integers(0, 200), st.sampled_from(["&x ", "*x ", "<<: ", "\n", ": ", "- ", "[", "{", "!!"]))
@example(value=[], at=2, insert=": ")   # "[]: " a list as a key: TypeError (unhashable) with text_keys=False
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
