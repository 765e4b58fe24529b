"""Where ``math`` and ``exact_match`` find the final answer, how they compare it, and the brief's tag rule.

The completions are in the styles instruct and reasoning models write (boxed, ####, "The answer is",
Minerva's "Final Answer:" line, inline math, tags). ``benchmarks/math_styles.py`` prints the same kind of corpus
beside stock math-verify's verdicts."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from grpo_rlvr.errors import RewardError
from grpo_rlvr.rewards import build_reward, with_brief_format
from grpo_rlvr.rewards._answer import find_answer

MATH = build_reward("math", {"timeout_s": 1, "workers": 1})


@pytest.mark.parametrize("text, answer, where", [
    ("so $\\boxed{\\frac{1}{2}}$.", "\\frac{1}{2}", "\\boxed{}"),
    ("\\boxed{1} then \\boxed{\\{2, 3\\}} and more text", "\\{2, 3\\}", "\\boxed{}"),
    ("48/2 = 24\n#### 72", "72", "####"),
    ("#### 1,250.\n", "1,250", "####"),
    ("First 6*7 = 42. The answer is 42.", "42", "'the answer is'"),
    ("The answer is: **3.5**", "3.5", "'the answer is'"),
    ("Final Answer: The final answer is $17$. I hope it is correct.", "17", "'the answer is'"),
    ("**Final Answer:** $\\frac{3}{4}$", "\\frac{3}{4}", "'the answer is'"),
    ("Answer: 12 apples; done", "12 apples", "'the answer is'"),
    ("hence \\(x = 3\\) and $y=2$", "y=2", "inline math"),
    ("<think>maybe 3</think><answer> 4 </answer>", "4", "<answer>"),
    ("3/4", "3/4", "the one-line completion"),
])
def test_auto_finds_the_final_answer(text, answer, where):
    got = find_answer(text, "auto")
    assert got is not None and (got.text, got.where) == (answer, where)


def test_auto_finds_nothing_in_multi_line_reasoning_without_an_answer():
    assert find_answer("There are 3 cases.\nAnd 5 subcases.", "auto") is None
    got = build_reward("exact_match").explain(["There are 3 cases.\nAnd 5 subcases."], answer=["5"])[0]
    assert got.score == 0.0 and got.reason.startswith("no final answer found")


def test_exact_match_auto_and_normalisation_options():
    texts = ["The answer is 1,000.", "#### 7.50", "Final Answer: PARIS", "The answer is New  York."]
    got = build_reward("exact_match").explain(texts, answer=["1000", "7.5", "paris", "new york"])
    assert [s.score for s in got] == [1.0, 1.0, 1.0, 1.0]
    assert got[0].reason == "answer 1,000 = 1000"
    strict = build_reward("exact_match", {"case_sensitive": True, "thousands": False, "numeric": False,
                                          "whitespace": "keep"})
    assert strict(completions=texts, answer=["1000", "7.5", "paris", "new york"]) == [0.0, 0.0, 0.0, 0.0]
    removed = build_reward("exact_match", {"whitespace": "remove"})
    assert removed(completions=["The answer is x + 1."], answer=["x+1"]) == [1.0]
    for bad in ({"whitespace": "squash"}, {"numeric": "yes"}, {"extract": "last"}, {"pattern": "("}):
        with pytest.raises(RewardError, match="params"):
            build_reward("exact_match", bad)


@pytest.mark.parametrize("text, gold, score", [
    ("We get $\\boxed{\\frac{1}{2}}$.", "0.5", 1.0),
    ("#### 72", "72", 1.0),
    ("Final Answer: The final answer is $17$. I hope it is correct.", "17", 1.0),
    ("The answer is 20 dollars.", "20", 1.0),  # units after a number are dropped
    ("So $x \\in \\boxed{(1, 2]}$", "(1, 2]", 1.0),  # intervals stay math-verify's
    ("So $x \\in \\boxed{[1, 2]}$", "(1, 2]", 0.0),
    ("The solutions are $\\boxed{\\{3, -2\\}}$", "\\{-2, 3\\}", 1.0),  # sets in any order
    ("We find $\\boxed{x = 5}$", "5", 1.0),  # an equation against a value
    # numbers: rationals exactly, floats relatively, never an absolute tolerance
    ("$\\boxed{\\frac{1}{2^{99}}}$", "\\frac{1}{2^{98}}", 0.0),
    ("The answer is $0.0000002$", "0.0000001", 0.0),
    ("The answer is $0.0000001$", "0.0000001", 1.0),
    ("The answer is 0.333333", "\\frac{1}{3}", 1.0),
    ("The answer is 0.3333", "\\frac{1}{3}", 0.0),
    ("The answer is 1000001.0", "1000000", 0.0),
    ("The answer is $\\frac{1}{\\sqrt{2}}$", "\\frac{\\sqrt{2}}{2}", 1.0),
    ("The answer is $25\\%$", "25", 1.0),  # math-verify's percent rule stays
])
def test_math_default_verdicts(text, gold, score):
    got = MATH.explain([text], answer=[gold])[0]
    assert got.score == score, got.reason


def test_math_rel_tol_is_relative_only():
    loose = build_reward("math", {"rel_tol": 0.01, "workers": 1})
    got = loose(completions=["The answer is 3.14", "The answer is 0.0000002", "The answer is 101"],
                answer=["\\pi", "0.0000001", "100"])
    assert got == [1.0, 0.0, 0.0]  # 3.14 is within 1% of pi (and of its last digit); 2e-7 is not within 1% of 1e-7
    for bad in (-1, 1.5, True, "1e-6"):
        with pytest.raises(RewardError, match="params.rel_tol"):
            build_reward("math", {"rel_tol": bad})


def test_pathological_first_item_of_a_fresh_worker_off_the_main_thread():
    """The first item of a fresh worker gets the same budget as any other (no start-up grace), in a thread;
    the next item is scored normally."""
    fresh = build_reward("math", {"timeout_s": 1, "workers": 1, "evaluated": False})  # so the tower is parsed
    fresh.warm()
    out: list = []
    evil = "The answer is $\\boxed{2^{2^{2^{2^{2^{2^{99}}}}}}}$"
    t = threading.Thread(target=lambda: out.extend(fresh.explain([evil, "#### 4"], answer=["4", "4"])))
    t.start()
    t.join(timeout=120)
    assert not t.is_alive()
    assert out[0].score == 0.0 and out[0].reason.startswith("timed out")
    assert out[1].score == 1.0


def test_a_worker_found_dead_is_replaced_by_the_warm_spare_before_any_item():
    r = MATH
    assert r(completions=["#### 2"], answer=["2"]) == [1.0]
    pool = r.warmer.__self__
    worker = pool.workers[0]
    worker._proc.kill()  # as if sympy had crashed the process between two batches
    worker._proc.wait()
    pool.spare.fill()
    spare = pool.spare._proc
    got = r.explain(["#### 3", "#### 4"], answer=["3", "4"])
    assert [g.score for g in got] == [1.0, 1.0], got
    assert worker._proc is spare   # the warm spare took the dead worker's place


# A worker process that says it is ready, takes one item and dies on it (a real process: what the reward sees when
# sympy crashes mid-item, without waiting on how fast a SIGKILL lands)
DIES_ON_ITS_ITEM = "import sys; print('\"ready\"', flush=True); sys.stdin.readline(); sys.exit(1)"


def test_a_worker_that_dies_on_an_item_scores_it_crashed_and_the_spare_takes_the_rest():
    r = MATH
    assert r(completions=["#### 2"], answer=["2"]) == [1.0]
    worker = r.warmer.__self__.workers[0]
    with worker._lock:
        worker._kill()
        worker._use(subprocess.Popen([sys.executable, "-c", DIES_ON_ITS_ITEM], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, bufsize=0))
    got = r.explain(["#### 3", "#### 4"], answer=["3", "4"])
    assert got[0].score == 0.0 and "crashed" in got[0].reason
    assert got[1].score == 1.0


# --- the brief's answer tag ----------------------------------------------------------------------------------

def test_every_correctness_reward_reads_inside_the_brief_format_tag():
    specs = [("format", {"tag": "final"}), ("math", {}), ("exact_match", {"extract": "boxed"}), ("json_schema", {}),
             ("tool_call", {"require_format": False}), ("unit_tests", {}), ("rubric_judge", {}),
             ("length_penalty", {"reward": "math"})]
    fmt = {"tag": "final", "pattern": None, "allow_text_before": False}
    got, problems = with_brief_format(specs)
    assert problems == []
    assert got == [{"tag": "final"}, {"format": fmt}, {"extract": "boxed", "format": fmt}, {"format": fmt},
                   {"require_format": False}, {"format": fmt}, {},
                   {"reward": "math", "reward_params": {"format": fmt}}]
    pattern = r"<reasoning>.*</reasoning>\s*<answer>.*</answer>"
    assert with_brief_format([("format", {"pattern": pattern}), ("math", {})])[0][1] == {
        "format": {"tag": "answer", "pattern": pattern, "allow_text_before": False}}
    # a custom structure without the tag defines no answer tag: the whole completion is read
    assert with_brief_format([("format", {"pattern": r"\d+"}), ("math", {})])[0][1] == {}
    assert with_brief_format([("math", {})]) == ([{}], [])


def test_a_user_reward_opts_in_and_asking_without_a_tagged_format_is_a_problem():
    fmt = {"tag": "answer", "pattern": None, "allow_text_before": True}
    got, problems = with_brief_format([("format", {"allow_text_before": True}), ("mine.py", {}),
                                       ("theirs.py:score", {"require_format": True})])
    assert got[1:] == [{}, {"require_format": True, "format": fmt}] and problems == []
    _, problems = with_brief_format([("theirs.py:score", {"require_format": True})])
    assert problems and "no format reward with an answer tag" in problems[0]


def test_user_reward_that_opts_in_sees_only_the_inside_of_the_tag(tmp_path):
    (tmp_path / "echo.py").write_text("def reward(completions, **kw):\n"
                                      "    return [(1.0, 'saw ' + c) for c in completions]\n")
    params, _ = with_brief_format([("format", {}), ("echo.py", {"require_format": True})])
    r = build_reward("echo.py", params[1], base_dir=tmp_path, kind="correctness")
    got = r.explain(["<think>hm</think><answer> 42 </answer>", "42"])
    assert [(s.score, s.reason) for s in got] == [(1.0, "saw 42"), (0.0, "no <answer> tag")]
    assert r.params["require_format"] is True  # recorded as the brief gives it


@pytest.mark.parametrize("name, row, good, bad", [
    ("json_schema", {"schema": '{"type": "object", "required": ["a"]}'}, '<answer>{"a": 1}</answer>', '{"a": 1}'),
    ("tool_call", {"tool": '{"name": "f", "arguments": {"x": 1}}'},
     '<answer>{"name": "f", "arguments": {"x": 1}}</answer>', '{"name": "f", "arguments": {"x": 1}}'),
    ("exact_match", {"answer": "7"}, "<answer>7</answer>", "The answer is 7."),
    ("math", {"answer": "7"}, "Since 3 + 4 = 7:\n<answer>\\boxed{7}</answer>", "\\boxed{7}"),
])
def test_correctness_never_pays_for_a_right_answer_outside_the_tag(name, row, good, bad):
    params, _ = with_brief_format([("format", {"allow_text_before": True}), (name, {})])
    r = build_reward(name, {**params[1], **({"workers": 1} if name == "math" else {})})
    got = r.explain([good, bad, good + " and more"], **{k: [v] * 3 for k, v in row.items()})
    assert got[0].score == 1.0, got[0].reason
    assert (got[1].score, got[1].reason) == (0.0, "no <answer> tag")
    assert got[2].score == 0.0 and got[2].reason == "malformed, answer not counted: text after </answer>: 'and more'"
    loose = build_reward(name, {**params[1], "require_format": False, **({"workers": 1} if name == "math" else {})})
    assert loose.explain([bad], **{k: [v] for k, v in row.items()})[0].score == 1.0  # opted out


def test_with_the_format_pattern_a_well_formed_answer_counts_and_a_malformed_one_does_not():
    pattern = r"<reasoning>.*?</reasoning>\s*<answer>.*?</answer>"
    params = with_brief_format([("format", {"pattern": pattern}), ("exact_match", {})])[0][1]
    r = build_reward("exact_match", params)
    got = r.explain(["<reasoning>2+2</reasoning>\n<answer>4</answer>", "<answer>4</answer> and more"],
                    answer=["4", "4"])
    assert [s.score for s in got] == [1.0, 0.0]
    assert got[1].reason == "malformed, answer not counted: does not match the format's pattern"


def test_the_demo_brief_keeps_its_tag_rule(workspace):
    from grpo_rlvr.brief import load_brief

    b = load_brief(workspace / "brief.yaml")
    em = next(r for r in b.rewards if r.name == "exact_match")
    assert dict(em.params) == {"format": {"tag": "answer", "pattern": None, "allow_text_before": False}}
    text = (workspace / "brief.yaml").read_text().replace("  - name: format                   # <answer>…</answer>\n"
                                                          "    weight: 0.2\n", "")
    (workspace / "noformat.yaml").write_text(text)
    alone = load_brief(workspace / "noformat.yaml")
    assert dict(next(r for r in alone.rewards if r.name == "exact_match").params) == {}


# --- answers as models write them: the rules chosen for each style -------------------------------------------

@pytest.mark.parametrize("text, gold, score", [
    # currency inside a box, thousands separators
    ("So it costs \\boxed{\\$12.50}", "12.5", 1.0),
    ("Total: \\boxed{\\$1,250}", "1250", 1.0),
    ("Total: \\boxed{1{,}250}", "1250", 1.0),
    ("Total: \\boxed{1\\,250}", "1250", 1.0),
    ("The pairs are \\boxed{(1, 250)}", "(1, 250)", 1.0),  # a comma and a space: a list, not 1250
    # a fraction with a unit word
    ("The answer is 3/4 cup.", "\\frac{3}{4}", 1.0),
    # a half-written expression never counts
    ("So in total she spends 12 + 10 =", "22", 0.0),
    ("The answer is 12 + 10 =", "22", 0.0),
    # several boxes stating one answer
    ("The roots are \\boxed{5} and \\boxed{-2}.", "-2, 5", 1.0),
    ("So $x = \\boxed{5}$ or $x = \\boxed{-2}$", "\\{-2, 5\\}", 1.0),
    ("First \\boxed{3}, then we find the answer \\boxed{5}", "5", 1.0),  # prose between: the last box alone
    # wrappers, LaTeX forms, degrees, scientific notation
    ("\\boxed{\\text{12 apples}}", "12", 1.0),
    ("\\boxed{\\textbf{7}}", "7", 1.0),
    ("\\boxed{\\dfrac{3}{4}}", "0.75", 1.0),
    ("\\boxed{\\frac12}", "0.5", 1.0),
    ("\\boxed{30^\\circ}", "30", 1.0),
    ("The answer is 30°.", "30", 1.0),
    ("\\boxed{3 \\times 10^{5}}", "300000", 1.0),
    ("The answer is 1.5e3.", "1500", 1.0),
    ("The answer is 1.5e3.", "150", 0.0),
])
def test_math_answer_styles(text, gold, score):
    got = MATH.explain([text], answer=[gold])[0]
    assert got.score == score, got.reason


def test_cut_off_answers_and_sentences_say_why():
    got = MATH.explain(["The answer is 12 + 10 =", "So in total she spends 12 + 10 =", "First, 48/2 = 24. Then 48 + 24",
                        "3/4", "x = 5"], answer=["22", "22", "72", "0.75", "5"])
    assert got[0].reason == "answer 12 + 10 = is cut off (it ends with '=')"
    sentence = "no final answer found: the one-line completion is a sentence, not a bare answer"
    assert [(s.score, s.reason) for s in got[1:3]] == [(0.0, sentence)] * 2
    assert [s.score for s in got[3:]] == [1.0, 1.0]  # a bare one-line answer counts


def test_several_answers_rule():
    text = "#### 120\nOn second thought, the answer is 121."
    last = MATH.explain([text, text], answer=["121", "120"])
    assert [s.score for s in last] == [1.0, 0.0]  # default: the one written last counts
    prio = build_reward("math", {"several": "priority", "workers": 1})
    assert prio(completions=[text, text], answer=["121", "120"]) == [0.0, 1.0]  # #### comes before the phrase
    every = build_reward("math", {"several": "all", "workers": 1})
    assert every(completions=[text, "\\boxed{7}. The answer is 7."], answer=["121", "7"]) == [0.0, 1.0]
    with pytest.raises(RewardError, match="params.several"):
        build_reward("math", {"several": "first"})


def test_boxes_rule():
    text = "The roots are \\boxed{5} and \\boxed{-2}."
    assert build_reward("math", {"boxes": "last", "workers": 1})(completions=[text], answer=["-2, 5"]) == [0.0]


def test_percent_rule():
    texts = ["\\boxed{0.5}", "\\boxed{50}", "\\boxed{50\\%}", "The answer is 50%."]
    assert MATH(completions=texts, answer=["50\\%"] * 4) == [1.0, 1.0, 1.0, 1.0]  # as math-verify has it
    strict = build_reward("math", {"percent_as_fraction": False, "workers": 1})
    assert strict(completions=texts, answer=["50\\%"] * 4) == [0.0, 1.0, 1.0, 1.0]


def test_approximate_fractions_rule():
    texts = ["\\boxed{0.3333333}", "\\boxed{0.5}", "\\boxed{\\frac{1}{3}}", "\\boxed{1.4142136}"]
    gold = ["\\frac{1}{3}", "\\frac{1}{2}", "\\frac{1}{3}", "\\sqrt{2}"]
    assert MATH(completions=texts, answer=gold) == [1.0, 1.0, 1.0, 1.0]
    exact = build_reward("math", {"approximate_fractions": False, "workers": 1})
    assert exact(completions=texts, answer=gold) == [0.0, 1.0, 1.0, 1.0]  # an irrational has no exact decimal


def test_mixed_numbers_rule():
    texts = ["The answer is 2 1/2 pizzas.", "\\boxed{2\\frac{1}{2}}", "\\boxed{-1 1/4}"]
    gold = ["\\frac{5}{2}", "\\frac{5}{2}", "-\\frac{5}{4}"]
    assert MATH(completions=texts, answer=gold) == [1.0, 1.0, 1.0]
    plain = build_reward("math", {"mixed_numbers": False, "workers": 1})
    # without the rule "2 1/2" is left to LaTeX, which does not read it as 5/2 (math-verify itself reads 2\frac12)
    assert plain(completions=texts[:2], answer=gold[:2]) == [0.0, 1.0]


def test_choices_rule():
    texts = ["The answer is (C) 12.", "\\boxed{\\text{(C)}}", "The answer is C.", "The answer is (B) 12.", "\\boxed{12}"]
    got = MATH.explain(texts, answer=["C"] * 5)
    assert [s.score for s in got] == [1.0, 1.0, 1.0, 0.0, 0.0]
    assert got[4].reason == "answer 12 names no choice (A–E)"
    assert MATH(completions=["The answer is (C) 12."], answer=["12"]) == [1.0]  # the label before a value goes
    off = build_reward("math", {"choices": False, "workers": 1})
    assert off(completions=["The answer is (C) 12."], answer=["C"]) == [0.0]


def assert_worker_starts(math_answer) -> None:
    """A freshly spawned math worker says it is ready; it is killed after."""
    proc = math_answer._spawn()
    try:
        assert b'"ready"' in proc.stdout.readline()
    finally:
        proc.kill()
        proc.wait()


def test_the_math_worker_runs_no_startup_code(tmp_path, monkeypatch):
    """The worker starts as `python -I -S` with this process's module path: a sitecustomize on PYTHONPATH or a .pth
    file cannot patch the math comparison it runs (the gate's clean check scores with it)."""
    import subprocess

    from grpo_rlvr.rewards import math_answer

    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(f"open({str(tmp_path / 'ran')!r}, 'w').write('patched')\n")
    monkeypatch.setenv("PYTHONPATH", str(hook))
    assert_worker_starts(math_answer)
    assert not (tmp_path / "ran").exists()
    assert subprocess.run([sys.executable, "-c", "pass"], env={"PYTHONPATH": str(hook)}).returncode == 0
    assert (tmp_path / "ran").read_text() == "patched"   # the hook does run in an ordinary interpreter


def test_the_math_worker_ignores_folders_put_first_on_this_process_path(tmp_path, monkeypatch):
    """A folder a test or a reward put first on sys.path (here one holding a broken json.py) is not the worker's:
    it rebuilds the interpreter's own module path (CI found every math test failing after such a test)."""
    from grpo_rlvr.rewards import math_answer

    (tmp_path / "json.py").write_text("raise ImportError('a shadowing json module')\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    assert_worker_starts(math_answer)


def test_a_math_worker_that_ends_before_it_is_ready_says_its_last_words(monkeypatch):
    from grpo_rlvr.rewards import math_answer

    monkeypatch.setattr(math_answer, "_CLEAN_START", math_answer._CLEAN_START.with_name("no_such_start.py"))
    worker = math_answer.MathWorker(timeout_s=1.0, rel_tol=1e-6)
    with pytest.raises(RewardError, match=r"ended before it was ready .*last words: .*no_such_start"):
        worker.wait_ready()


def test_the_math_worker_runs_this_checkout_when_it_is_not_installed(tmp_path):
    """grpo_rlvr imported from a folder the interpreter's own path lacks (a checkout through PYTHONPATH=src, as the
    newer-Python lanes run): the worker imports that same grpo_rlvr, not another or none."""
    import os
    import shutil
    from pathlib import Path

    import grpo_rlvr

    copy = tmp_path / "src" / "grpo_rlvr"
    shutil.copytree(Path(grpo_rlvr.__file__).resolve().parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    marker = tmp_path / "ran-the-copy"
    worker = copy / "rewards" / "_math_worker.py"
    worker.write_text(worker.read_text().replace("def main() -> None:\n",
                                                 f"def main() -> None:\n    open({str(marker)!r}, 'w').close()\n", 1))
    code = ("from grpo_rlvr.rewards import math_answer\nproc = math_answer._spawn()\n"
            "print(proc.stdout.readline().decode().strip())\nproc.kill()\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "src")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env,
                         cwd=tmp_path)
    assert '"ready"' in out.stdout, out.stderr[-2000:]
    assert marker.exists()
