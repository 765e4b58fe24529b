"""Red team: every built-in reward attacked the way RL would, through each example brief's real composite
(``load_brief`` + ``build_reward`` + ``combine``, as ``score --brief`` and the trainer build them).

An attack is an output that scores without solving: a hedge between several answers, an answer outside the tag,
an expression copied from the question, a second call or argument set, a degenerate output that stalls the
scorer. Each test names the attack; where the reward holds, the test pins the verdict, and where it broke, the
test is the fix's proof. Helper functions are attacked directly only for the inputs too long to score cheaply
through the briefs (the degenerate outputs)."""

from __future__ import annotations

import json
import subprocess
from functools import cache

import pytest

from grpo_rlvr.brief import load_brief
from grpo_rlvr.dataset.rows import load_rows, map_columns, reward_columns
from grpo_rlvr.rewards import build_reward, combine, with_brief_format
from grpo_rlvr.sandbox.judging.extract import extract_program
from hang_guard import no_hang
from paths import CLI, REPO

EXAMPLES = REPO / "examples"


@cache
def _reward(name: str, params_json: str, kind: str | None):
    """One reward per distinct (name, params): the examples that share a math config share its worker pool."""
    params = json.loads(params_json)
    if name == "math":
        params["workers"] = 1  # the verdicts do not depend on it; fewer processes to start
    return build_reward(name, params, base_dir=EXAMPLES, kind=kind)


@cache
def _brief(name: str):
    brief = load_brief(EXAMPLES / f"{name}.yaml")
    rewards = [_reward(r.name, json.dumps(dict(r.params), sort_keys=True), r.kind) for r in brief.rewards]
    return brief, rewards, [r.weight for r in brief.rewards]


@cache
def _math(**params):
    return build_reward("math", {"workers": 1, **params})


def score(name: str, texts: list[str], row: dict | int) -> list[dict]:
    """Each text scored by the brief's rewards on ``row`` (the dataset's own columns, or a local row index):
    ``{"total", reward name: score}`` per text, with the reasons under ``"why"``."""
    brief, rewards, weights = _brief(name)
    if isinstance(row, int):
        mapped = load_rows(brief)[row]
    else:
        mapped = map_columns(row, brief.dataset.prompt_column, dict(brief.dataset.columns), dict(brief.dataset.prompt))
    got = combine(rewards, weights, texts, prompts=[mapped.get("prompt")] * len(texts),
                  **reward_columns([mapped] * len(texts)))
    return [{"total": round(g["total"], 6), **{n: s.score for n, s in g["scores"].items()},
             "why": {n: s.reason for n, s in g["scores"].items()}} for g in got]


GSM8K = {"question": "Tom has 5 apples and buys 7 more. How many apples does he have?",
         "answer": "Tom has 5 + 7 = <<5+7=12>>12 apples.\n#### 12"}


def gsm8k_row(gold: str) -> dict:
    return {**GSM8K, "answer": f"He has {gold} apples.\n#### {gold}"}


def boxed_row(problem: str, gold: str) -> dict:
    return {"problem": problem, "solution": f"So the answer is $\\boxed{{{gold}}}$."}


# --- format ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, why", [
    ("<answer>12</answer><answer>13</answer>", "2 <answer> tags, expected one"),
    ("<answer><answer>12</answer></answer>", "2 <answer> tags, expected one"),
    ("<think>I will write <answer>13</answer></think><answer>12</answer>", "2 <answer> tags, expected one"),
    ("```\n<answer>12</answer>\n```", "text after </answer>: '```'"),
    ('"<answer>12</answer>"', "text after </answer>: '\"'"),
    ("<think>a</think>b</think><answer>12</answer>", "text before <answer>: '<think>a</think>b</think>'"),
    ("<аnswer>12</аnswer>", "no <answer> tag"),  # Cyrillic а
    ("<ans\u200bwer>12</ans\u200bwer>", "no <answer> tag"),  # a zero-width space inside the tag name
    ("<answer>12</answer>\u200b", "text after </answer>: '\\u200b'"),
    ("<ANSWER>12</ANSWER>", "no <answer> tag"),
    ("<answer>12</answer> and 13", "text after </answer>: 'and 13'"),
    ("<answer>12", "no </answer> closing tag"),
])
def test_format_attacks_score_nothing_for_anything(text, why):
    """gsm8k's format (no text before the tag but one <think> block): every malformed shape is refused, and
    the right answer inside it is not paid either."""
    got = score("gsm8k", [text], GSM8K)[0]
    assert (got["format"], got["math"], got["total"]) == (0.0, 0.0, 0.0), got["why"]
    assert got["why"]["format"] == why


@pytest.mark.parametrize("text", [
    "<answer>\\boxed{12}</answer><answer>\\boxed{12}</answer>",
    "<answer><answer>\\boxed{12}</answer></answer>",
    "```\n<answer>\\boxed{12}</answer>\n```",
    '"<answer>\\boxed{12}</answer>"',
    "<аnswer>\\boxed{12}</аnswer>",  # Cyrillic а
    "<answer>\\boxed{12}</аnswer>",
    "<answer\u200b>\\boxed{12}</answer\u200b>",
    "<answer>\\boxed{12}</answer>\u200b",
    "<answer>\\boxed{12}</answer>\nSo 12.",
    "\\boxed{12}",
    "<answer>\\boxed{12}",
])
def test_format_attacks_with_text_before_allowed(text):
    """math_boxed lets reasoning come first; every other malformed shape is still refused, right answer or not."""
    got = score("math_boxed", [f"5 + 7 = 12.\n{text}"], boxed_row("What is 5+7?", "12"))[0]
    assert (got["format"], got["math"], got["total"]) == (0.0, 0.0, 0.0), got["why"]


def test_format_with_text_before_still_refuses_a_tag_in_the_reasoning():
    """math_boxed allows reasoning before the tag; a tag mentioned in the reasoning makes two, which is refused,
    so a hedge "first answer in the reasoning, another at the end" is never read."""
    row = boxed_row("What is 5+7?", "12")
    texts = ["5 + 7 = 12.\n<answer>\\boxed{12}</answer>",
             "Maybe <answer>\\boxed{13}</answer>. Or rather:\n<answer>\\boxed{12}</answer>",
             "```\n<answer>\\boxed{12}</answer>\n```"]
    got = score("math_boxed", texts, row)
    assert [g["total"] for g in got] == [1.2, 0.0, 0.0], [g["why"] for g in got]


def test_format_and_correctness_read_a_huge_output_quickly():
    """A degenerate 200 000-character completion (a repetition loop) is scored, not stalled on."""
    for text in ("<answer>" + "12 " * 70_000 + "</answer>", "a" * 200_000, "<answer>" * 50_000):
        with no_hang():
            got = score("gsm8k", [text], GSM8K)[0]
        assert got["math"] == 0.0


N = 200_000  # characters: a repetition loop at a long max_completion_length
DEGENERATE = {
    "spaces between boxes": "\\boxed{1}" + " " * N + "x\\boxed{2}",  # was 9 s at 20 000 spaces
    "commas between boxes": "\\boxed{1}" + ", " * (N // 2) + "x\\boxed{2}",  # was 39 s at 20 000
    "unclosed boxes": "\\boxed{" * (N // 7),  # was 79 s at 20 000 boxes
    "unclosed \\(": "\\( " * (N // 3),  # was 6 s at 20 000
    "unclosed $": "$ a " * (N // 4),
    "#### then spaces": "#### a" + " " * N + "b\n",
    "phrases": "the answer is. " * (N // 15),
    "a long word after a number": "12 " + "a" * N + "1",  # was 221 s at 3 000 letters (the unit stripper)
    "spaces after a number": "1" + " " * N + "x",  # was 6 s at 20 000 (the degree stripper)
    "digits": "1" * N,
    "backticks": "```" * (N // 3),  # was 1.6 s at 20 000 (the JSON fence finder)
    "brackets": "[" * N,
    "open objects": '{"a":' * (N // 5),
    "tool tags": "<tool_call>" * (N // 11),
    "think tags": "<think>" + "</think>" * (N // 8) + "<answer>1</answer>",
    "a list": "12, " * (N // 4),
    "alternatives": "12 or " * (N // 6),
    "an equation chain": "12 = " * (N // 5) + "13",
    "a huge exponent": "1e" + "9" * 5000,
    "labels": "(C) " + "D " * (N // 2),
    "bold and periods": "12" + " *." * (N // 3),  # was 2.8 s at 300 000 (the final-period stripper)
}


@pytest.mark.parametrize("name", sorted(DEGENERATE))
def test_answer_readers_take_linear_time_on_degenerate_outputs(name):
    """They run in the trainer's process with no timer: each reads a 200 000-character loop in well under a
    second (several took seconds to minutes on a tenth of it before)."""
    from grpo_rlvr.rewards._answer import find_answers
    from grpo_rlvr.rewards._answer_shape import hedge, is_number, restates
    from grpo_rlvr.rewards._math_text import written
    from grpo_rlvr.rewards._tool_calls import completion_calls
    from grpo_rlvr.rewards.exact_match import normalize
    from grpo_rlvr.rewards.format import Structure

    text = DEGENERATE[name]
    with no_hang():
        find_answers(text)
        written(text, "12", prompt=text[:5000])
        written(text, "C")
        written(text, "12", bare=True)
        hedge(text), is_number(text), restates(text, text, "1")
        completion_calls(text)
        normalize(text)
        Structure(allow_text_before=False).split(text)
        extract_program(text)


# --- math: hedges ----------------------------------------------------------------------------------------

HEDGES = ["\\boxed{12} or \\boxed{13}", "\\boxed{12}\\boxed{13}", "\\boxed{12}\n\\boxed{13}",
          "\\boxed{12}\\text{ or }\\boxed{13}", "\\boxed{12} \\text{ and } \\boxed{13}",
          "12 or 13", "12 (or 13)", "The answer is 12 (or 13)", "12 \\text{ (or 13)}", "either 12 or 13",
          "12 or thirteen", "12 or less", "12, 13", "11, 12, 13", "12; 13", "12 13", "12 \\; 13", "12 \\quad 13",
          "\\{12, 13\\}", "[11, 13]", "(11, 13)", "12 \\lor 13", "12 \\vee 13", "12 \\pm 1", "12.5 \\pm 0.5",
          "12 = 13", "13 = 12", "= 12 = 13", "x = 12 = 13", "12 \\to 13", "12 \\Rightarrow 13", "12–13",
          "12 to 13", "12 \\\\ 13", "\\begin{cases} 12 \\\\ 13 \\end{cases}", "12 \\mid 13", "x \\ge 12",
          "x > 11", "12 \\le x \\le 13", "x \\in \\{12, 13\\}", "13</аnswer> 12", "13\u200b 12"]


@pytest.mark.parametrize("brief", ["gsm8k", "math_boxed"])
def test_a_hedge_between_two_answers_is_paid_for_neither(brief):
    """Each hedge scores 0 against a ground truth of 12 and against one of 13 (math-verify alone reads many of
    them as their last value: "12 (or 13)", "12 \\lor 13", "12 = 13" were paid when 13 was right)."""
    for gold in ("12", "13"):
        if brief == "gsm8k":
            texts, row = [f"<answer>{h}</answer>" for h in HEDGES], gsm8k_row(gold)
        else:
            texts, row = [f"So:\n<answer>\\boxed{{{h}}}</answer>" if "boxed" not in h else f"So:\n<answer>{h}</answer>"
                          for h in HEDGES], boxed_row("How many?", gold)
        got = score(brief, texts, row)
        paid = [(h, g["why"]["math"]) for h, g in zip(HEDGES, got, strict=True) if g["math"]]
        assert paid == [], (gold, paid)
        assert all(g["format"] == 1.0 for g in got)  # well-formed, so the wrong answer keeps format's 0.2


def test_a_hedge_says_why():
    got = score("gsm8k", ["<answer>12 (or 13)</answer>", "<answer>12 = 13</answer>", "<answer>12 13</answer>"],
                gsm8k_row("13"))
    assert [g["why"]["math"] for g in got] == [
        "answer 12 (or 13) hedges ('or' offers alternatives); the ground truth is one value",
        "answer 12 = 13 hedges (it states both 12 and 13); the ground truth is one value",
        "answer 12 13 hedges (12 and 13 side by side); the ground truth is one value"]


@pytest.mark.parametrize("answer", ["12", "x = 12", "5 + 7 = 12", "12 apples", "\\$12", "12.0", "(12)",
                                    "\\frac{24}{2}", "\\frac{1}{2} \\cdot 24 = 12", "\\approx 12", "12, 12"])
def test_one_value_written_several_ways_is_not_a_hedge(answer):
    assert score("gsm8k", [f"<answer>{answer}</answer>"], gsm8k_row("12"))[0]["math"] == 1.0


@pytest.mark.parametrize("answer, gold", [
    ("12 or 13", "\\{12, 13\\}"), ("x = 12 \\text{ or } x = 13", "12, 13"), ("\\boxed{12} and \\boxed{13}", "12, 13"),
    ("12.5 \\pm 0.5", "\\{12, 13\\}"), ("(1, 2]", "(1, 2]")])
def test_a_ground_truth_of_several_values_still_takes_them_written_so(answer, gold):
    text = f"So:\n<answer>{answer if 'boxed' in answer else chr(92) + 'boxed{' + answer + '}'}</answer>"
    assert score("math_boxed", [text], boxed_row("Solve it.", gold))[0]["math"] == 1.0


# --- math: answers that leave the work undone ---------------------------------------------------------------

@pytest.mark.parametrize("answer", ["5+7", "5 + 7", "7+5", "12+0*x", "\\frac{48}{2} - 12", "2^{2} \\cdot 3",
                                    "\\sqrt{144}", "\\binom{4}{1} \\cdot 3", "\\max(12, 13)", "24/2 + 0"])
def test_an_unevaluated_expression_is_not_paid_for_a_number(answer):
    """GSM8K's ground truth is a number: "5+7" (the question's numbers put together) leaves the arithmetic
    undone. ``evaluated: false`` restores math-verify's equivalence."""
    got = score("gsm8k", [f"<answer>{answer}</answer>"], gsm8k_row("12"))[0]
    assert got["math"] == 0.0, got["why"]
    assert got["why"]["math"] in (f"answer {answer} is not worked out to a number, and the ground truth is one",
                                  f"answer {answer} restates an expression from the question instead of solving it")
    if answer != "\\max(12, 13)":
        assert _math(evaluated=False)(completions=[f"\\boxed{{{answer}}}"], answer=["12"]) == [1.0]


@pytest.mark.parametrize("answer, gold", [
    ("2^{10}", "2^{10}"), ("1024", "2^{10}"), ("\\frac{\\sqrt{2}}{2}", "\\frac{1}{\\sqrt{2}}"),
    ("3 \\times 10^{5}", "300000"), ("1.5e3", "1500"), ("2\\frac{1}{2}", "\\frac{5}{2}"), ("\\frac12", "0.5"),
    ("50\\%", "0.5"), ("-\\frac{3}{4}", "-0.75")])
def test_numbers_written_out_and_golds_written_as_expressions_still_pay(answer, gold):
    got = score("math_boxed", [f"So:\n<answer>\\boxed{{{answer}}}</answer>"], boxed_row("Compute it.", gold))[0]
    assert got["math"] == 1.0, got["why"]


def test_an_expression_copied_from_the_question_is_not_paid():
    """"Simplify $\\sqrt{245}$" answered \\sqrt{245} is equal to 7\\sqrt{5} and solves nothing; likewise
    "Expand (x+1)^2". Checked against the question the trainer passes (the brief's chat prompt)."""
    cases = [("Simplify $\\sqrt{245}$.", "7\\sqrt{5}", "\\sqrt{245}", "7\\sqrt{5}"),
             ("Expand $(x+1)^2$.", "x^2 + 2x + 1", "(x + 1)^2", "x^2+2x+1"),
             ("Which is larger, $2^{10}$ or $10^3$?", "2^{10}", "2^{10}", "2^{10}")]  # the gold itself: paid
    for question, gold, echo, solved in cases:
        got = score("math_boxed", [f"Hmm.\n<answer>\\boxed{{{a}}}</answer>" for a in (echo, solved)],
                    boxed_row(question, gold))
        expected = [1.0, 1.0] if echo == gold else [0.0, 1.0]
        assert [g["math"] for g in got] == expected, (question, [g["why"] for g in got])
    got = score("math_boxed", ["Hmm.\n<answer>\\boxed{\\sqrt{245}}</answer>"],
                boxed_row("Simplify $\\sqrt{245}$.", "7\\sqrt{5}"))[0]
    assert got["why"]["math"] == "answer \\sqrt{245} restates an expression from the question instead of solving it"


# --- math: the style rules abused ---------------------------------------------------------------------------

@pytest.mark.parametrize("answer, gold, paid", [
    # choices: one letter is read; several are a hedge
    ("(A) (B) (C) (D)", "C", 0.0), ("(C) or (D)", "C", 0.0), ("C. D.", "C", 0.0), ("C or D", "C", 0.0),
    ("\\text{(C) and (D)}", "C", 0.0), ("(C) 12", "C", 1.0), ("(C) 12", "12", 1.0), ("(C)", "C", 1.0),
    # mixed numbers: "2 1/2" is 5/2 and nothing else
    ("2 1/2", "\\frac{5}{2}", 1.0), ("2 1/2", "1", 0.0), ("2 1/2", "2", 0.0), ("2 1/2", "\\frac{1}{2}", 0.0),
    ("12 13", "25", 0.0), ("12 (13)", "25", 0.0), ("12 (13)", "12", 0.0),
    # percent: one value; "12%" is 12 percent (math-verify's "9% == 9" for a percent question) and 0.12
    ("12\\%", "12", 1.0), ("12\\%", "0.12", 1.0), ("12\\%", "1.2", 0.0), ("1200\\%", "12", 1.0),
    # empty and symbolic non-answers
    ("", "12", 0.0), ("x", "12", 0.0), ("N", "12", 0.0), ("\\infty", "12", 0.0), ("12^{1}", "12", 0.0),
])
def test_math_style_rules_are_not_a_way_to_hit_two_golds(answer, gold, paid):
    got = score("math_boxed", [f"So:\n<answer>\\boxed{{{answer}}}</answer>"], boxed_row("Pick one.", gold))[0]
    assert got["math"] == paid, got["why"]


def test_several_final_answers_inside_the_tag_read_only_the_last():
    """Held (the documented ``several: last``): only one answer is ever read, so writing a second one gains
    nothing over writing it alone."""
    texts = ["<answer>#### 12\n#### 13</answer>", "<answer>The answer is 13. The answer is 12.</answer>"]
    assert [g["math"] for g in score("gsm8k", texts, gsm8k_row("12"))] == [0.0, 1.0]
    assert [g["math"] for g in score("gsm8k", texts, gsm8k_row("13"))] == [1.0, 0.0]


# --- exact_match ----------------------------------------------------------------------------------------------

def _exact_match():
    params, _ = with_brief_format([("format", {}), ("exact_match", {})])
    return build_reward("exact_match", params[1])


@pytest.mark.parametrize("answer, gold, paid", [
    ("1_2", "12", 0.0),  # Decimal reads underscores anywhere
    ("12345678901234567890123456781", "12345678901234567890123456782", 0.0),  # past 28 digits: was rounded equal
    ("1.0000000000000000000000000001", "1", 0.0),
    ("1e999999999", "12", 0.0),  # raised decimal.Overflow: a completion could stop training
    ("1e999999999", "1E+999999999", 1.0),
    ("9" * 5000, "12", 0.0),
    ("12 or 13", "12", 0.0), ("12, 13", "12", 0.0), ("1 2", "12", 0.0), ("1,23", "123", 0.0),
    ("**12**.", "12", 1.0), ("1,000", "1000", 1.0), ("7.0", "7", 1.0), ("-0", "0", 1.0), ("PARIS", "Paris", 1.0),
])
def test_exact_match_normalisation_does_not_over_merge(answer, gold, paid):
    got = _exact_match().explain([f"<answer>{answer}</answer>"], answer=[gold])[0]
    assert got.score == paid, got.reason


# --- tool_call and json_schema ----------------------------------------------------------------------------

def _call(args: dict, name: str = "get_weather", **extra) -> str:
    return json.dumps({"name": name, "arguments": args, **extra})


RIGHT, WRONG, OTHER = _call({"city": "Lisbon"}), _call({"city": "Porto"}), _call({"city": "Madrid"})


@pytest.mark.parametrize("text, want", [
    (f"<tool_call>{RIGHT}</tool_call>", 1.0),
    (f"<tool_call>{WRONG}</tool_call>", 0.5),  # the well-formed wrong call every attack is measured against
    # two argument sets, two names: consumers read different keys (was 1.0 when the right one was read)
    (f"<tool_call>{_call({'city': 'Lisbon'}, parameters={'city': 'Porto'})}</tool_call>", 0.5),
    ('<tool_call>{"name": "get_weather", "parameters": {"city": "Porto"}, "arguments": {"city": "Lisbon"}}'
     "</tool_call>", 0.5),
    (f"<tool_call>{_call({'city': 'Lisbon'}, function={'name': 'get_time', 'arguments': {}})}</tool_call>", 0.5),
    # duplicate keys, where the last wins in Python
    ('<tool_call>{"name": "get_weather", "arguments": {"city": "Porto", "city": "Lisbon"}}</tool_call>', 0.5),
    ('<tool_call>{"name": "x", "name": "get_weather", "arguments": {"city": "Lisbon"}}</tool_call>', 0.5),
    ('<tool_call>{"name": "get_weather", "arguments": {"city": "Porto"}, "arguments": {"city": "Lisbon"}}'
     "</tool_call>", 0.5),
    # several calls: the right one among wrong ones is worth no more than one wrong call
    (f"<tool_call>[{WRONG}, {RIGHT}]</tool_call>", 0.5),
    (f"<tool_call>{WRONG} {RIGHT}</tool_call>", 0.5),
    (f"<tool_call>[{WRONG}, {RIGHT}, {OTHER}]</tool_call>", 1 / 3),
    (f"<tool_call>```json\n{WRONG}\n```\n{RIGHT}</tool_call>", 0.5),  # the fence is the answer
    (f"<tool_call>{WRONG}</tool_call><tool_call>{RIGHT}</tool_call>", 0.0),  # two tags: malformed
    (f"{RIGHT}\n<tool_call>{WRONG}</tool_call>", 0.0),  # a call before the tag: malformed
    # a hedge inside a value, an extra key beside the call, NaN
    (f"<tool_call>{_call({'city': ['Lisbon', 'Porto']})}</tool_call>", 0.5),
    (f"<tool_call>{_call({'city': 'Lisbon'}, id=1)}</tool_call>", 1.0),
    ('<tool_call>{"name": "get_weather", "arguments": {"city": NaN}}</tool_call>', 0.0),
    ('<tool_call>{"name": "get_weather"}</tool_call>', 0.5),
])
def test_tool_call_hedges_never_beat_one_wrong_call(text, want):
    got = score("tool_calls", [text], 0)[0]
    assert got["tool_call"] == pytest.approx(want), got["why"]


def test_tool_call_partial_credit_stays_below_a_right_call():
    """Row 1 expects get_weather(city=Oslo, unit=fahrenheit): a call missing an argument, with an extra one or a
    wrong one earns between the wrong-call floor and 1, never 1."""
    calls = [{"city": "Oslo"}, {"city": "Oslo", "unit": "celsius"},
             {"city": "Oslo", "unit": "fahrenheit", "units": "celsius"}, {"city": "Oslo", "unit": "fahrenheit"}]
    got = [g["tool_call"] for g in score("tool_calls", [f"<tool_call>{_call(c)}</tool_call>" for c in calls], 1)]
    assert got[:3] == [0.75, 0.75, pytest.approx(0.5 + 0.5 * 2 / 3)] and got[3] == 1.0


@pytest.mark.parametrize("text, want", [
    ('{"n": 5}', 1.0), ('{"n": 50}', 0.25),
    ('{"n": NaN}', 0.0), ('{"n": Infinity}', 0.0), ('{"n": -Infinity}', 0.0), ('{"n": 1e999}', 0.0),
    ('{"n": 50, "n": 5}', 0.25),  # duplicate key: the last would win in Python
    ('{"n": 50} {"n": 5}', 0.25), ('{"n": 5} {"n": 50}', 0.25),  # the first JSON counts; the rest is trailing
    ('```json\n{"n": 50}\n```\n```json\n{"n": 5}\n```', 0.25),
])
def test_json_schema_attacks(text, want):
    """NaN compares false with every bound, so it passed {"minimum": 0, "maximum": 10} (was 1.0)."""
    params, _ = with_brief_format([("format", {}), ("json_schema", {})])
    r = build_reward("json_schema", params[1])
    schema = json.dumps({"type": "object", "properties": {"n": {"type": "number", "minimum": 0, "maximum": 10}},
                         "required": ["n"]})
    got = r.explain([f"<answer>{text}</answer>"], schema=[schema])[0]
    assert got.score == want, got.reason


# --- unit_tests: which code runs --------------------------------------------------------------------------

GOOD = "def min_of_three(a, b, c):\n    return min(a, b, c)\n"
STUB = "def min_of_three(a, b, c):\n    return 0\n"
MBPP = {"text": "Write a function to find the minimum of three numbers.",
        "test_list": ["assert min_of_three(10, 20, 0) == 0", "assert min_of_three(19, 15, 18) == 15",
                      "assert min_of_three(-10, -20, -30) == -30"]}


@pytest.mark.parametrize("text, runs", [
    (f"<answer>```python\n{GOOD}```\n```python\n{STUB}```</answer>", STUB),  # the last python block
    (f"<answer>```python\n{STUB}```\n```python\n{GOOD}```</answer>", GOOD),
    (f"<answer>```python\n{GOOD}```\n```\n{STUB}```</answer>", GOOD),  # a python block beats an untagged one
    (f"<answer>```python\n{STUB}```\n{GOOD}</answer>", STUB),  # code outside any fence is not read
    (f"<answer>````markdown\n```python\n{GOOD}```\n````</answer>", GOOD),  # the innermost block
    (f"<answer>```python\n{GOOD}</answer>", GOOD),  # unterminated: to the end
])
def test_unit_tests_runs_one_block_chosen_by_a_fixed_rule(text, runs):
    inner = text.removeprefix("<answer>").removesuffix("</answer>")
    assert extract_program(inner).strip() == runs.strip()


def test_unit_tests_never_runs_code_outside_the_tag():
    """The solution in the reasoning and a stub inside the tag runs the stub (or, in code_mbpp, which allows no
    text before the tag, nothing); a fence the extractor would take outside the tag is never read."""
    texts = [f"<answer>```python\n{GOOD}```</answer>",
             f"```python\n{GOOD}```\n<answer>```python\n{STUB}```</answer>",
             f"<answer>```python\n{STUB}```</answer>\n```python\n{GOOD}```",
             f"<answer>```python\n{STUB}</answer>\n{GOOD}```"]
    got = score("code_mbpp", texts, MBPP)
    assert [g["unit_tests"] for g in got] == [1.0, 0.0, 0.0, 0.0], [g["why"] for g in got]
    params, _ = with_brief_format([("format", {"allow_text_before": True}), ("unit_tests", {})])
    loose = build_reward("unit_tests", params[1]).explain([texts[1]], tests=[MBPP["test_list"]])[0]
    assert loose.score == pytest.approx(1 / 3), loose.reason  # the stub ran: 1 of 3 asserts expects 0


# --- length_penalty and the composite ------------------------------------------------------------------------

def test_length_penalty_keeps_well_formed_wrong_above_malformed_at_equal_length():
    fmt = {"tag": "answer", "pattern": None, "allow_text_before": True}
    pen = build_reward("length_penalty", {"reward": "math", "reward_params": {"format": fmt, "workers": 1},
                                          "budget": 40, "unit": "chars", "mode": "linear"})
    form = build_reward("format", {"allow_text_before": True})
    pad = "x" * 30
    texts = [f"{pad}\n<answer>12</answer>", f"{pad}\n<answer>13</answer>", f"{pad}\nThe answer is 12, see."]
    got = combine([form, pen], [0.2, 1.0], texts, answer=["12"] * 3)
    totals = [round(g["total"], 6) for g in got]
    assert totals[0] > totals[1] > totals[2], totals
    assert got[2]["scores"]["length_penalty"].reason.startswith("no <answer> tag")


def _malformed_variants(text: str, tag: str) -> list[str]:
    """The right answer made malformed the ways RL finds: the tag dropped, doubled, wrapped, mimicked."""
    inner = text[text.index(f"<{tag}>") + len(tag) + 2:text.index(f"</{tag}>")]
    lookalike = tag.replace("a", "а").replace("o", "о")  # Cyrillic
    return [text.replace(f"<{tag}>", "").replace(f"</{tag}>", ""),
            text + f"\n<{tag}>{inner}</{tag}>",
            text + "\nDone.",
            f"```\n{text}\n```",
            f'"{text}"',
            text.replace(f"<{tag}>", f"<{lookalike}>").replace(f"</{tag}>", f"</{lookalike}>"),
            text.replace(f"</{tag}>", ""),
            text.replace(f"<{tag}>", f"<{tag} >")]


@pytest.mark.parametrize("name", sorted(p.stem for p in EXAMPLES.glob("*.yaml")))
def test_no_malformed_output_gets_correctness_and_well_formed_wrong_outranks_it(name):
    """The composite property, on each example's own answers: every malformed variant of its correct answer
    scores 0 on every correctness reward and below its well-formed wrong answer."""
    brief, rewards, _ = _brief(name)
    examples = brief.prompt_examples
    tag = next(r.params.get("tag", "answer") for r in brief.rewards if r.name == "format")
    for ex in examples:
        row = ex.get("row", 0)
        variants = _malformed_variants(ex["correct"], tag)
        got = score(name, [ex["wrong"], *variants], row)
        wrong, bad = got[0], got[1:]
        correctness = [r.name for r in rewards if r.kind == "correctness"]
        for text, g in zip(variants, bad, strict=True):
            assert all(g[c] == 0.0 for c in correctness), (text, g["why"])
            assert g["total"] < wrong["total"], (text, g["why"], wrong["total"])


# --- the real scorer ------------------------------------------------------------------------------------------

def test_score_cli_refuses_hedges_as_the_python_api_does(tmp_path):
    rows = [{"prompt": GSM8K["question"], "completion": f"<answer>{c}</answer>", "answer": "#### 13"}
            for c in ("12 (or 13)", "12 \\lor 13", "12 = 13", "13")]
    path = tmp_path / "attacks.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = subprocess.run([*CLI, "score", "--brief", str(EXAMPLES / "gsm8k.yaml"), "--input", str(path), "--json"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    got = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert [g["parts"]["math"]["score"] for g in got] == [0.0, 0.0, 0.0, 1.0]
