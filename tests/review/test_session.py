"""The review, driven for real in a pseudo-terminal: keys entered, quit halfway, resumed, finished; then the
gate passes. Also what makes the record a person's: piped input refused, a too-fast review failing the gate,
one review at a time (a second is refused, a kill -9'd one does not block), a stale write keeping every
disagreement, and model output with terminal escape sequences shown inert."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
import time

import pytest

from artifacts import completions_for, make_artifact
from grpo_rlvr.gate.check import check_gate
from grpo_rlvr.inspection import load_artifact
from grpo_rlvr.review.session import DWELL_S, PROMPT, inert
from terminal import Terminal

CLI = [sys.executable, "-m", "grpo_rlvr"]


def answer(t: Terminal, key: str, think_s: float = 0.0) -> str:
    """Wait for the prompt, 'read' for think_s seconds, press the key; returns the screen up to the prompt."""
    screen = t.expect(PROMPT)
    time.sleep(think_s)
    t.send(key)
    return screen


def review_cmd(art, who="alice"):
    return [*CLI, "review", str(art), "--reviewer", who]


def test_piped_or_redirected_verdicts_are_refused(workspace):
    art = make_artifact(workspace / "brief.yaml", workspace / "insp", n=50, prompts=25, verdict=None)
    before = (art / "samples.jsonl").read_bytes()
    piped = subprocess.run(review_cmd(art), input="a\n" * 64, capture_output=True, text=True, timeout=60)
    assert piped.returncode == 2 and "interactive terminal" in piped.stderr and "stdin" in piped.stderr
    assert "Traceback" not in piped.stderr
    # stdin a terminal but stdout captured (e.g. `grpo-rlvr review DIR > log`): refused as well
    master, slave = pty.openpty()
    redirected = subprocess.run(review_cmd(art), stdin=slave, capture_output=True, text=True, timeout=60)
    os.close(slave)
    os.close(master)
    assert redirected.returncode == 2 and "stdout is not a terminal" in redirected.stderr
    assert (art / "samples.jsonl").read_bytes() == before


@pytest.mark.e2e
def test_review_in_a_terminal_quit_resume_finish(workspace):
    art = make_artifact(workspace / "brief.yaml", workspace / "insp", n=50, prompts=25, verdict=None)
    t = Terminal(review_cmd(art))
    screen = answer(t, "a", think_s=1.0)
    assert "Sample 1/50" in screen and "SCORES:" in screen and "exact_match" in screen
    for _ in range(19):
        answer(t, "a", think_s=1.0)
    answer(t, "d", think_s=1.0)                # a disagreement with a note, blaming a reward ...
    t.expect("What is wrong with the scores? > ")
    t.send("format should accept this")
    t.expect("empty = all) > ")
    t.send("format")
    answer(t, "b")                             # ... then back, and changed to agree
    screen = answer(t, "a", think_s=1.0)
    assert "Sample 21/50" in screen and "current verdict: disagree" in screen
    answer(t, "q")
    t.expect("21 of 50 reviewed")
    assert t.wait() == 1

    saved = load_artifact(art).samples
    assert sum(1 for s in saved if s["verdict"]) == 21
    v = saved[20]["verdict"]
    assert v["reviewer"] == "alice" and v["reviewer_kind"] == "human" and v["seconds"] >= DWELL_S
    assert v["history"][0]["verdict"] == "disagree"           # the changed verdict is kept in its history
    assert not check_gate(art).passed

    t = Terminal(review_cmd(art))              # resume where we stopped; 6 more read slowly, then the rest quickly:
    screen = answer(t, "a", think_s=1.0)       # 27 of 50 at over a second keep the median above the rule
    assert "Resuming at sample 22 of 50" in screen
    for k in range(28):
        answer(t, "a", think_s=1.0 if k < 5 else 0.0)
    t.expect("Review complete: 50 samples, 50 agree, 0 disagree.")
    assert t.wait() == 0
    res = check_gate(art)
    assert res.passed, res.format()
    seconds = [s["verdict"]["seconds"] for s in load_artifact(art).samples]
    assert min(seconds) >= DWELL_S and sorted(seconds)[25] >= 1.0


def test_a_too_fast_review_fails_the_gate_with_its_numbers(workspace):
    art = make_artifact(workspace / "brief.yaml", workspace / "fast", n=50, prompts=25, verdict=None)
    t = Terminal(review_cmd(art, "speedy"))
    for _ in range(12):
        answer(t, "a")                          # a key at once, every time
    answer(t, "q")
    assert t.wait() == 1
    rule2 = next(r for r in check_gate(art).rules if r.id == 2)
    text = " | ".join(rule2.problems)
    assert not rule2.passed and "too fast to be reading: median" in text and "at least 1.0 s" in text
    med = float(text.split("median ")[1].split(" s")[0])
    assert DWELL_S <= med < 1.0


def test_one_review_at_a_time_and_a_stale_write_keeps_every_disagreement(workspace):
    art = make_artifact(workspace / "brief.yaml", workspace / "two", n=50, prompts=25, verdict=None)
    a = Terminal(review_cmd(art, "alice"))
    a.expect(PROMPT)                                   # alice is reading s000
    b = Terminal(review_cmd(art, "bob"))
    b.expect("still running")
    assert b.wait() == 2 and "alice" in b.buffer + b.raw.decode(errors="replace")

    # A writer the lock cannot stop (another machine on a network file system): it records two disagreements,
    # one on the sample alice is reading and one ahead of her.
    code = ("import sys; from grpo_rlvr.inspection import load_artifact; from grpo_rlvr.inspection.artifact import "
            "make_verdict; from grpo_rlvr.review.session import save_verdict; art = load_artifact(sys.argv[1]); "
            "[save_verdict(art.dir, s['id'], make_verdict(art.manifest, s, 'disagree', 'carol', 'human', 5.0, "
            "note='carol: ' + s['id']), None) for s in art.samples if s['id'] in ('s000', 's003')]")
    subprocess.run([sys.executable, "-c", code, str(art)], check=True, timeout=60)
    a.send("a")                                        # alice agrees with s000, not having seen carol's verdict
    a.expect("another session recorded a disagreement")
    for _ in range(4):                                 # s001, s002, s003 (shows carol's verdict), s004
        answer(a, "a")
    answer(a, "q")
    assert a.wait() == 1
    by_id = {s["id"]: s["verdict"] for s in load_artifact(art).samples}
    assert by_id["s000"]["verdict"] == "disagree" and by_id["s000"]["reviewer"] == "carol"
    assert by_id["s000"]["history"][-1]["reviewer"] == "alice"       # alice's verdict is kept too
    assert by_id["s003"]["history"][0]["note"] == "carol: s003"      # alice saw it and chose; carol's stays on record
    assert "marked disagree" in " ".join(next(r for r in check_gate(art).rules if r.id == 2).problems)


def test_a_review_killed_with_sigkill_does_not_block_the_next(workspace):
    art = make_artifact(workspace / "brief.yaml", workspace / "k", n=50, prompts=25, verdict=None)
    a = Terminal(review_cmd(art, "alice"))
    answer(a, "a")
    a.expect(PROMPT)
    os.kill(a.proc.pid, signal.SIGKILL)
    a.proc.wait(timeout=30)
    assert json.loads((art / ".review.lock").read_text())["reviewer"] == "alice"   # a stale lock is left behind
    b = Terminal(review_cmd(art, "bob"))
    screen = b.expect(PROMPT)
    assert "ended without releasing its lock" in screen and "Resuming at sample 2 of 50" in screen
    b.send("q")
    assert b.wait() == 1


def test_escape_sequences_are_shown_inert(workspace):
    hostile = "\x1b[8mHIDDEN\x1b[0m\x1b]52;c;ZWNobyBwd25lZA==\x07\r\x1b[2K\u202eSCORE 1.0\x9b31m"
    art = make_artifact(workspace / "brief.yaml", workspace / "esc", n=50, prompts=25, verdict=None,
                        complete=lambda a, i: completions_for(a, i) + hostile)
    t = Terminal(review_cmd(art))
    screen = t.expect(PROMPT)
    t.send("q")
    assert t.wait() == 1
    shown = screen[screen.index("COMPLETION"):screen.index("SCORES:")].replace("\r\n    ", "")  # long lines wrap
    assert "\\x1b[8mHIDDEN\\x1b[0m\\x1b]52;c;ZWNobyBwd25lZA==\\x07\\x0d\\x1b[2K\\u202eSCORE 1.0\\x9b31m" in shown
    out = t.raw[t.raw.index(b"COMPLETION"):]
    assert b"\x1b" not in out and b"\x07" not in out and b"\xe2\x80\xae" not in out and b"\xc2\x9b" not in out
    assert inert("tab\tand\nnewline stay") == "tab\tand\nnewline stay"


LONG_ASSERT = "assert longest_prefix(['interspecies', 'interstellar', 'interstate', 'internal']) == 'inter'"


def test_the_prompt_says_enter_and_ground_truth_shows_the_rewards_columns_whole(workspace):
    """A unit_tests brief whose prompt is built from two columns: GROUND TRUTH shows the column the reward reads
    (``tests``), every assert whole on its own line, a long one wrapped, not cut; not the prompt's columns."""
    from artifacts import synthetic_trajectory
    from briefs import write_brief
    from grpo_rlvr.brief import load_brief
    from grpo_rlvr.dataset.rows import load_rows
    from grpo_rlvr.files import write_jsonl_atomic
    from grpo_rlvr.inspection.run import write_artifact
    from grpo_rlvr.review.session import WIDTH

    tests = ["assert longest_prefix(['ab', 'ac']) == 'a'", "assert longest_prefix(['x']) == 'x'",
             LONG_ASSERT + " and " + LONG_ASSERT.removeprefix("assert ")]   # longer than a shown line
    write_jsonl_atomic(workspace / "data" / "code.jsonl",
                       [{"text": f"Write longest_prefix (task {i}).", "test_list": tests} for i in range(30)])
    brief = write_brief(workspace, "code.yaml", dataset={"path": "./data/code.jsonl", "columns": {"tests": "test_list"}},
                        prompt={"template": "{{ text }}\n{{ test_list | join('\\n') }}"},
                        rewards=[{"name": "format", "weight": 0.2}, {"name": "unit_tests", "weight": 1.0}])
    b = load_brief(brief)
    rows = load_rows(b)
    code = "<answer>```python\ndef longest_prefix(words):\n    return words[0][:1]\n```</answer>"
    write_artifact(b, [{"prompt_index": i, "trajectory": synthetic_trajectory(rows[i]["prompt"], code)}
                       for i in range(30)], rows, 30, workspace / "insp", sampling={**b.sampling(), "seed": 0})
    t = Terminal(review_cmd(workspace / "insp"))
    screen = t.expect(PROMPT)
    t.send("q")
    assert t.wait() == 1
    truth = screen[screen.index("GROUND TRUTH:"):screen.index("SCORES:")].replace("\r\n", "\n")
    assert "  tests:\n    - assert longest_prefix(['ab', 'ac']) == 'a'\n    - assert longest_prefix(['x']) == 'x'\n" \
        in truth
    assert "text:" not in truth and "test_list:" not in truth and "Write longest_prefix" not in truth
    last = truth[truth.index("    - assert longest_prefix(['interspecies'"):].splitlines()
    assert len(last) >= 2 and all(len(line) <= WIDTH for line in last)   # wrapped at the shown width ...
    assert " ".join(line.strip().removeprefix("- ") for line in last) == tests[2]   # ... and whole
    assert PROMPT.endswith("then Enter > ") and "press Enter" in screen


def test_a_tool_rollout_is_shown_call_by_call_and_an_unscored_one_says_why():
    """Every message of a tool rollout reaches the screen: the system prompt, each call with its arguments, each
    tool reply, the final answer; a rollout a tool failed on shows each reward's reason, not a bare 0."""
    import io

    from grpo_rlvr.review.session import _show
    from grpo_rlvr.rewards._reward import Scored

    prompt = [{"role": "system", "content": "Use the calculator."}, {"role": "user", "content": "123+456="}]
    completion = [{"role": "assistant", "content": "", "tool_calls": [
                      {"type": "function", "function": {"name": "add", "arguments": {"a": 123, "b": 456}}}]},
                  {"role": "tool", "name": "add", "content": "579"},
                  {"role": "assistant", "content": "<answer>579</answer>"}]
    out = io.StringIO()
    _show({"id": "s1", "prompt": prompt, "completion": completion, "columns": {"answer": "579"},
           "scores": {"exact_match": {"score": 1.0, "reason": "579 = 579"}}, "total": 1.0}, 0, 2, out)
    screen = out.getvalue()
    for shown in ("Use the calculator.", "123+456=", 'add {"a": 123, "b": 456}', "tool add", "579",
                  "<answer>579</answer>"):
        assert shown in screen, (shown, screen)
    assert screen.index("tool add") < screen.index("<answer>579</answer>")

    why = "tool add unavailable: the service is down"
    gone = Scored(None, f"not scored: {why} (outside the model's control)", outside=why)
    out = io.StringIO()
    _show({"id": "s2", "prompt": prompt, "completion": completion[:2],
           "scores": {"exact_match": {"score": gone.score, "reason": gone.reason}}, "total": 0.0}, 1, 2, out)
    assert "not scored: tool add unavailable: the service is down (outside the model's control)" in out.getvalue()



def test_the_tools_offered_and_the_environment_s_state_are_shown():
    """What the model was offered (the manifest's record of the brief's tools) is said once, before the first
    sample; each sample of an environment shows the state its rewards read, bounded on screen."""
    import io

    from grpo_rlvr.review.session import STATE_SHOWN, _show, tool_lines

    spec = {"functions": ["tools.py:add"], "environment": "shop.py:Shop", "python": {"timeout_s": 2},
            "call_timeout_s": 30.0, "concurrency": 4}
    [line] = tool_lines({"tools": {"spec": spec, "fingerprint": "x", "sources": {}}})
    assert "function tools.py:add" in line and "environment shop.py:Shop" in line and "python" in line
    assert tool_lines({"tools": None}) == [] and tool_lines({}) == []

    sample = {"id": "s1", "prompt": [{"role": "user", "content": "buy 2"}],
              "completion": [{"role": "assistant", "content": "done"}], "columns": {},
              "scores": {"bought": {"score": 1.0, "reason": "cart holds 2"}}, "total": 1.0,
              "environment_state": {"cart": ["apple", "apple"], "paid": True}}
    out = io.StringIO()
    _show(sample, 0, 1, out)
    screen = out.getvalue()
    assert "ENVIRONMENT STATE" in screen and '"paid": true' in screen
    assert screen.index("ENVIRONMENT STATE") < screen.index("SCORES:")
    out = io.StringIO()
    _show({**sample, "environment_state": {"log": "x" * (STATE_SHOWN * 3)}}, 0, 1, out)
    assert "characters in all; the whole state is in samples.jsonl" in out.getvalue()
    assert out.getvalue().count("x") < STATE_SHOWN + 200
    out = io.StringIO()
    _show({**sample, "environment_state": None}, 0, 1, out)
    assert "ENVIRONMENT STATE" not in out.getvalue()

def test_the_template_key_shows_what_the_model_read_and_the_draws_are_named(workspace):
    """A real inspection keeps each sample's chat-template text; [t] shows it (no verdict recorded), [t] again the
    messages. Before the first sample the review names the draw and lists an earlier one."""
    from grpo_rlvr.inspection.run import inspect_rewards

    out = workspace / "out" / "inspection"
    inspect_rewards(workspace / "brief.yaml", samples=50)
    inspect_rewards(workspace / "brief.yaml", samples=50)       # drawn again, before anyone reviewed
    first = load_artifact(out).samples[0]
    t = Terminal(review_cmd(out))
    screen = answer(t, "t", think_s=0.1)
    assert "draw 2 made into this folder" in screen and "Earlier draws of this brief (" in screen
    assert f"replaced holding 0 verdicts: {out.resolve()}" in screen
    assert "PROMPT (every message the model saw; [t]" in screen
    screen = answer(t, "t", think_s=0.1)
    assert "PROMPT AS THE MODEL READ IT" in screen and "Sample 1/50" in screen
    assert inert(first["rendered"]["prompt"]).splitlines()[0][:60] in screen
    screen = answer(t, "q")
    assert "PROMPT (every message the model saw" in screen
    t.expect("Saved.")
    assert load_artifact(out).samples[0].get("verdict") is None   # [t] records nothing
