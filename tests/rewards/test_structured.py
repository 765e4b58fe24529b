"""The structured-output rewards, ``json_schema`` and ``tool_call``: each score level with its reason, where
the JSON is found (fence, prose, <tool_call> tag), ground truth as JSON strings, bad ground truth as
RewardError, the ordering unparseable < parseable-invalid < valid, and robustness on arbitrary text."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzz_profile import fuzz_settings
from grpo_rlvr.errors import RewardError
from grpo_rlvr.rewards._json_extract import extract_json
from grpo_rlvr.rewards.json_schema import json_schema_reward
from grpo_rlvr.rewards.tool_call import tool_call_reward

PERSON = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
          "required": ["name", "age"]}
WEATHER = {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                 "required": ["city"], "additionalProperties": False}}


def schema_scores(texts, schema=PERSON, **params):
    return json_schema_reward(**params).explain(texts, schema=[schema] * len(texts))


def tool_scores(texts, tool=WEATHER, **params):
    return tool_call_reward(**params).explain(texts, tool=[tool] * len(texts))


# --- extraction --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, value", [
    ('```json\n{"a": 1}\n```', {"a": 1}),
    ('Here:\n```\n[1, 2]\n```\nbye', [1, 2]),
    ('```python\nx = {1}\n```\nAnswer: {"a": 2}', {"a": 2}),  # a code fence that is not JSON is passed over
    ('```json\n{"a": 3}', {"a": 3}),  # an unclosed fence (truncated completion) runs to the end
    ('The result is {"s": "a } b {", "n": [1, {"m": 2}]} as asked.', {"s": "a } b {", "n": [1, {"m": 2}]}),
    ('see {note} then {"a": 4}', {"a": 4}),  # a balanced span that does not parse is skipped
    ('{"q": "say \\"}\\" please"}', {"q": 'say "}" please'}),  # escaped quotes inside strings
])
def test_extract_json_finds_fenced_then_prose(text, value):
    found = extract_json(text)
    assert found.ok and found.value == value


def test_extract_json_prefers_the_json_fence_and_reports_where_it_fails():
    assert extract_json('{"a": 0}\n```json\n{"a": 1}\n```').value == {"a": 1}
    bad = extract_json('ok {"a": 1}\n```json\n{"a": 1,}\n```')  # the fence is the answer, not the prose
    assert not bad.ok and bad.problem.startswith("JSON does not parse: ")
    assert bad.problem.endswith("(in the ```json block)")


def test_truncated_json_is_not_scored_by_its_inner_object():
    found = extract_json('{"person": {"name": "a", "age": 1}')
    assert not found.ok and "line 1 col" in found.problem


def test_pathological_text_is_a_problem_not_an_exception():
    for text in ("{" * 20000, "[" * 5000 + "]" * 5000, '{"n": ' + "1" * 5000 + "}", '"' * 999 + "{"):
        found = extract_json(text)
        assert not found.ok and found.problem


# --- json_schema -------------------------------------------------------------------------------------------

def test_json_schema_each_score_level_with_its_reason():
    got = schema_scores(["no braces here", '{"name": "Ann", "age": 3', 'Sure: {"name": "Ann", "age": "x"}',
                         '```json\n{"name": "Ann", "age": 30}\n```'])
    assert [s.score for s in got] == [0.0, 0.0, 0.25, 1.0]
    assert got[0].reason == "no JSON found"
    assert got[1].reason == "JSON does not parse: Expecting ',' delimiter at line 1 col 25"
    assert got[2].reason == "invalid at $.age: 'x' is not of type 'integer'"
    assert got[3].reason == "valid against the schema"


def test_json_schema_ordering_unparseable_below_invalid_below_valid():
    unparseable, invalid, valid = (s.score for s in schema_scores(
        ["{'name': 'Ann', 'age': 3}", '{"name": "Ann"}', '{"name": "Ann", "age": 3}']))
    assert unparseable < invalid < valid
    assert schema_scores(['{"name": "Ann"}'], partial_credit=0.1)[0].score == 0.1


def test_json_schema_accepts_a_json_string_schema_and_reasons_about_nested_paths():
    schema = {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "integer"}}}}
    got = schema_scores(['{"items": [1, "two"]}', '{"items": [1, 2]}'], schema=json.dumps(schema))
    assert [s.score for s in got] == [0.25, 1.0]
    assert got[0].reason == "invalid at $.items[1]: 'two' is not of type 'integer'"


def test_json_schema_long_values_are_truncated_in_reasons():
    got = schema_scores(['{"name": "Ann", "age": "' + "z" * 500 + '"}'])[0]
    assert got.score == 0.25 and len(got.reason) < 140


def test_json_schema_format_is_not_asserted():
    schema = {"properties": {"e": {"type": "string", "format": "email"}}}
    got = schema_scores(['{"e": "not an email"}'], schema=schema)
    assert got[0].score == 1.0


@pytest.mark.parametrize("schema, match", [
    ({"type": "nonsense"}, "invalid JSON Schema"),
    ("{not json", "holds text that is not JSON"),
    (42, "not a JSON Schema"),
])
def test_a_bad_schema_in_the_dataset_is_a_reward_error_naming_the_column(schema, match):
    with pytest.raises(RewardError, match=rf"column 'spec'.*{match}|{match}.*column 'spec'"):
        json_schema_reward(schema_column="spec").explain(['{"a": 1}'], spec=[schema])


def test_a_bad_schema_raises_even_when_the_completion_has_no_json():
    with pytest.raises(RewardError, match="invalid JSON Schema"):
        schema_scores(["nothing"], schema={"type": 12})


def test_json_schema_params_and_missing_column():
    for bad in (1.0, -0.1, float("nan"), True, "0.5"):
        with pytest.raises(RewardError, match="params.partial_credit"):
            json_schema_reward(partial_credit=bad)
    with pytest.raises(RewardError, match="needs the dataset column 'schema'"):
        json_schema_reward().explain(['{"a": 1}'])
    r = json_schema_reward()
    assert r.name == r.__name__ == "json_schema" and r.kind == "correctness" and r.columns == ("schema",)


# --- tool_call ---------------------------------------------------------------------------------------------

def test_tool_call_each_score_level_with_its_reason():
    got = tool_scores([
        "I would call the weather tool.",
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}</tool_call>',
        '<tool_call>{"name": "get_wether", "arguments": {"city": "Paris"}}</tool_call>',
        '<tool_call>{"name": "get_weather", "arguments": {"city": 7}}</tool_call>',
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>',
    ])
    assert [s.score for s in got] == [0.0, 0.0, 0.25, 0.5, 1.0]
    assert got[0].reason == "no tool call found"
    assert got[1].reason.startswith("JSON does not parse: ")
    assert got[2].reason == "called get_wether, expected get_weather"
    assert got[3].reason == "called get_weather: arguments invalid at $.city: 7 is not of type 'string'"
    assert got[4].reason == "called get_weather with valid arguments"


@pytest.mark.parametrize("text", [
    '```json\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n```',
    'Calling it now: {"name": "get_weather", "parameters": {"city": "Oslo"}} and done.',
    '{"name": "get_weather", "arguments": "{\\"city\\": \\"Oslo\\"}"}',  # OpenAI's arguments-as-a-string
    '[{"type": "function", "function": {"name": "get_weather", "arguments": "{\\"city\\": \\"Oslo\\"}"}}]',
    '<think>{"name": "x"}</think>\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}',
])
def test_tool_call_is_found_in_fences_prose_and_tags(text):
    assert tool_scores([text])[0].score == 1.0


def test_tool_call_arguments_problems_keep_the_name_credit():
    got = tool_scores(['{"name": "get_weather", "arguments": "{city: Oslo}"}', '{"name": "get_weather"}',
                       '{"name": "get_weather", "arguments": {"city": "Oslo", "units": "C"}}'])
    assert [s.score for s in got] == [0.5, 0.5, 0.5]
    assert got[0].reason.startswith("called get_weather: arguments string invalid: JSON does not parse")
    assert got[1].reason == "called get_weather: arguments invalid at $: 'city' is a required property"
    assert "additional properties" in got[2].reason.lower()


def test_tool_call_json_without_a_name_is_no_call():
    got = tool_scores(['{"city": "Oslo"}'])[0]
    assert got.score == 0.0 and got.reason == 'no tool call: JSON {"city": "Oslo"} has no "name"'


def test_tool_call_ground_truth_as_json_string_or_openai_shape():
    text = '{"name": "get_weather", "arguments": {"city": "Oslo"}}'
    assert tool_scores([text], tool=json.dumps(WEATHER))[0].score == 1.0
    assert tool_scores([text], tool={"type": "function", "function": WEATHER})[0].score == 1.0
    assert tool_scores([text], tool={"name": "get_weather"})[0].score == 1.0  # no parameters: any object


@pytest.mark.parametrize("tool, match", [
    ({"parameters": {}}, "holds"),
    ("get_weather", "not JSON"),
    ({"name": "f", "parameters": {"type": "bogus"}}, "column 'tool.parameters' holds an invalid JSON Schema"),
])
def test_tool_call_bad_ground_truth_is_a_reward_error(tool, match):
    with pytest.raises(RewardError, match=match):
        tool_scores(['{"name": "f", "arguments": {}}'], tool=tool)


def test_tool_call_params_must_order_the_credits():
    for name, args in ((0.5, 0.5), (0.6, 0.5), (-0.1, 0.5), (0.2, 1.0), (float("inf"), 0.5)):
        with pytest.raises(RewardError, match="partial_credit"):
            tool_call_reward(partial_credit_name=name, partial_credit_args=args)
    r = tool_call_reward(partial_credit_name=0.0, partial_credit_args=0.3)
    assert r.params["partial_credit_args"] == 0.3 and r.columns == ("tool",) and r.kind == "correctness"


def test_tool_call_ordering_and_conversational_completions():
    texts = ["nothing", '{"name": "other", "arguments": {}}', '{"name": "get_weather", "arguments": {}}',
             '{"name": "get_weather", "arguments": {"city": "Rome"}}']
    conv = [[{"role": "assistant", "content": t}] for t in texts]
    out = tool_call_reward()(prompts=["q"] * 4, completions=conv, tool=[WEATHER] * 4, trainer_state=None)
    assert out == sorted(out) and len(set(out)) == 4


# --- fuzz --------------------------------------------------------------------------------------------------

_text = st.one_of(
    st.text(max_size=300),
    st.text(alphabet='{}[]":,\\ntruefalse0123456789 `json<tool_call>/', max_size=120),
    st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                 lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
                 max_leaves=8).map(json.dumps).flatmap(lambda j: st.sampled_from([j, j[:-1], f"x {j} y"])),
)


@fuzz_settings(150)
@given(texts=st.lists(_text, min_size=1, max_size=5))
def test_fuzz_structured_rewards_never_raise_and_return_one_finite_score_each(texts):
    n = len(texts)
    for out in (json_schema_reward()(completions=texts, schema=[PERSON] * n),
                tool_call_reward()(completions=texts, tool=[WEATHER] * n)):
        assert len(out) == n
        assert all(v is not None and math.isfinite(v) and 0 <= v <= 1 for v in out)


# --- json_schema: duplicate keys and trailing text ---------------------------------------------------------

def test_json_schema_duplicate_keys_never_get_full_credit():
    for text in ('{"name": "Ada", "age": 36, "name": "Bob"}', '```json\n{"name": "Ada", "age": 36, "age": 37}\n```',
                 '{"name": "Ada", "age": 36, "x": {"k": 1, "k": 2}}'):
        got = schema_scores([text])[0]
        assert got.score == 0.25 and got.reason.startswith("duplicate key "), text
    assert schema_scores(['{"name": "Ada", "age": 36}'])[0].score == 1.0


def test_json_schema_trailing_text_is_strict_by_default():
    texts = ['{"name": "Ada", "age": 36} trailing', '```json\n{"name": "Ada", "age": 36}\n```\nHope this helps!',
             'Here it is: {"name": "Ada", "age": 36}  \n', '```json\n{"name": "Ada", "age": 36}\n```\n']
    strict = schema_scores(texts)
    assert [s.score for s in strict] == [0.25, 0.25, 1.0, 1.0]
    assert strict[0].reason == "valid, but text after the JSON: 'trailing'"
    loose = schema_scores(texts, strict=False)
    assert [s.score for s in loose] == [1.0, 1.0, 1.0, 1.0]
    with pytest.raises(RewardError, match="params.strict"):
        json_schema_reward(strict="yes")


# --- tool_call against expected calls ----------------------------------------------------------------------

BOOK = {"name": "book_flight", "arguments": {"origin": "OSL", "dest": "CDG", "passengers": 2}}


def call(name="book_flight", **args):
    return json.dumps({"name": name, "arguments": args})


def expect_scores(texts, tool=BOOK, **params):
    return tool_call_reward(**params).explain(texts, tool=[tool] * len(texts))


def test_expected_call_full_credit_only_for_same_name_and_equal_arguments():
    got = expect_scores([call(dest="CDG", passengers=2, origin="OSL"),  # key order is free
                         call(origin="OSL", dest="CDG", passengers=2.0)])  # 2 == 2.0: JSON has one number type
    assert [s.score for s in got] == [1.0, 1.0]
    assert got[0].reason == "called book_flight with the expected arguments"


@pytest.mark.parametrize("args, why", [
    ({"origin": "OSL", "dest": "CDG"}, "missing passengers"),
    ({"origin": "OSL", "dest": "CDG", "passengers": 3}, "passengers=3 expected 2"),
    ({"origin": "OSL", "dest": "CDG", "passengers": "2"}, 'passengers="2" expected 2'),  # a string is not a number
    ({"origin": "OSL", "dest": "CDG", "passengers": True}, "passengers=true expected 2"),  # a bool is not a number
    ({"origin": "OSL", "dest": "CDG", "passengers": 2, "class": "eco"}, "unexpected class"),
    ({"origin": "CDG", "dest": "OSL", "passengers": 2}, 'origin="CDG" expected "OSL"'),  # swapped arguments
])
def test_expected_call_wrong_arguments_get_the_share_of_equal_ones(args, why):
    got = expect_scores([call(**args)])[0]
    assert 0.5 <= got.score < 1.0 and why in got.reason, got
    keys = set(args) | set(BOOK["arguments"])
    same = sum(1 for k in keys if k in args and k in BOOK["arguments"] and args[k] == BOOK["arguments"][k]
               and type(args[k]) is type(BOOK["arguments"][k]))
    assert got.score == pytest.approx(0.5 + 0.5 * same / len(keys))


def test_expected_call_arguments_as_a_json_string_on_either_side():
    as_string = {"name": "book_flight", "arguments": json.dumps(BOOK["arguments"])}
    openai = {"type": "function", "function": as_string}
    assert expect_scores([json.dumps(openai)])[0].score == 1.0
    assert expect_scores([call(**BOOK["arguments"])], tool=json.dumps(openai))[0].score == 1.0


def test_expected_call_wrong_name_and_unparseable_arguments():
    got = expect_scores([call("book_hotel", **BOOK["arguments"]),
                         '{"name": "book_flight", "arguments": "{origin: OSL}"}', "I booked it."])
    assert [s.score for s in got] == [0.25, 0.5, 0.0]
    assert got[0].reason == "called book_hotel, expected book_flight"
    assert got[2].reason == "no tool call found"


def test_expected_call_with_a_schema_invalid_arguments_get_the_floor():
    tool = dict(BOOK, parameters={"type": "object", "required": ["origin", "dest", "passengers"],
                                  "properties": {"passengers": {"type": "integer"}}})
    got = expect_scores([call(origin="OSL", dest="CDG"), call(origin="OSL", dest="CDG", passengers=1)], tool=tool)
    assert got[0].score == 0.5 and "arguments invalid at $: 'passengers' is a required property" in got[0].reason
    assert got[1].score == pytest.approx(0.5 + 0.5 * 2 / 3)


def test_duplicate_argument_keys_never_get_full_credit():
    text = '{"name": "book_flight", "arguments": {"origin": "OSL", "dest": "CDG", "passengers": 2, "dest": "CDG"}}'
    got = expect_scores([text])[0]
    assert got.score == 0.5 and got.reason == "called book_flight: duplicate argument dest"
    as_string = json.dumps({"name": "book_flight", "arguments": text[text.index('{"origin'):-1]})
    assert expect_scores([as_string])[0].score == 0.5


def test_the_number_of_calls_is_compared():
    two = [BOOK, {"name": "book_hotel", "arguments": {"city": "Paris"}}]
    hotel = call("book_hotel", city="Paris")
    flight = call(**BOOK["arguments"])
    got = expect_scores([f"<tool_call>{flight}</tool_call>\n<tool_call>{hotel}</tool_call>",
                         f"[{hotel}, {flight}]",  # parallel calls in any order
                         f"<tool_call>{flight}</tool_call>",
                         f"<tool_call>{flight}</tool_call><tool_call>{flight}</tool_call>"
                         f"<tool_call>{hotel}</tool_call>"], tool=two)
    assert [s.score for s in got] == [1.0, 1.0, 0.5, pytest.approx(2 / 3)]
    assert "book_hotel not called" in got[2].reason and "extra call book_flight" in got[3].reason
    one = expect_scores([f"<tool_call>{flight}</tool_call><tool_call>{flight}</tool_call>"])[0]
    assert one.score == 0.5 and one.reason.startswith("2 calls, 1 expected")
    schema_twice = tool_scores(['[{"name": "get_weather", "arguments": {"city": "Oslo"}}, '
                                '{"name": "get_weather", "arguments": {"city": "Rome"}}]'])[0]
    assert schema_twice.score == 0.5


def test_an_empty_list_expects_no_call():
    got = expect_scores(["It is sunny, no tool needed.", call()], tool=[])
    assert [s.score for s in got] == [1.0, 0.0]
    assert got[1].reason == "called book_flight, expected no tool call"


@pytest.mark.parametrize("text", [
    f"<tool_call>\n{call(**BOOK['arguments'])}\n</tool_call>",  # Hermes / Qwen
    f"```json\n{call(**BOOK['arguments'])}\n```",  # fenced
    f"Sure. {call(**BOOK['arguments'])}",  # bare
    '<|python_tag|>{"name": "book_flight", "parameters": {"origin": "OSL", "dest": "CDG", "passengers": 2}}',  # Llama
    '[TOOL_CALLS] [{"name": "book_flight", "arguments": {"origin": "OSL", "dest": "CDG", "passengers": 2}}]',  # Mistral
    json.dumps({"tool_calls": [{"type": "function", "function": {"name": "book_flight",
                                                                  "arguments": json.dumps(BOOK["arguments"])}}]}),
])
def test_expected_call_is_parsed_in_every_style(text):
    assert expect_scores([text])[0].score == 1.0


@pytest.mark.parametrize("tool, match", [
    ([{"name": "f"}], "expected call"),
    ({"name": "f", "arguments": "[1]"}, "arguments are not a JSON object"),
    ([{"arguments": {}}], "holds"),
])
def test_bad_expected_calls_are_reward_errors(tool, match):
    with pytest.raises(RewardError, match=match):
        expect_scores([call()], tool=tool)
