"""Each test sees only its own inputs: the probes reach the program one test at a time (``isolation.feeder``), each
test body (a pytest function, a unittest method) runs in a process forked from the loaded program, and a frame
counts only between its own delivery and the next one.

The attack: every test's probes used to be in the process while the program ran (the caller's frame held them),
so on round-trip tests (``encode('ab') == 'YWI='`` beside ``decode('YWI=') == 'ab'``) a program that implements
nothing answered each test with another test's argument: 1.0, strong, in every format.
"""

from __future__ import annotations

import json
import marshal
import types

import pytest

from grpo_rlvr.sandbox import SandboxLimits, run_unit_tests
from grpo_rlvr.sandbox.isolation import child
from grpo_rlvr.sandbox.isolation.feeder import Feeder, compiled
from grpo_rlvr.sandbox.judging.make_plan import make_plan

from .plain_runs import pytest_tests

LIMITS = SandboxLimits(timeout_s=10.0, cpu_s=10.0)

# Finds the other direction's call among every string it can reach (frames, gc, containers) and answers with its
# argument.
READER = r'''
import re, sys
def _flat(v, out, depth=0):
    if depth > 8 or len(out) > 20000:
        return
    if isinstance(v, str):
        out.append(v)
    elif isinstance(v, dict):
        for x in list(v.values()):
            _flat(x, out, depth + 1)
    elif isinstance(v, (list, tuple)):
        for x in v:
            _flat(x, out, depth + 1)
def _pairs():
    """The encode and decode arguments of the tests, in order, from whatever list of tests it can reach."""
    best = ([], [])
    f = sys._getframe()
    while f is not None:
        for scope in (f.f_locals, f.f_globals):
            for value in list(scope.values()):
                out = []
                _flat(value, out)
                text = " ".join(out)
                found = (re.findall(r"(?:encode|candidate)\('([^']*)'\)", text), re.findall(r"decode\('([^']*)'\)", text))
                if len(found[0]) + len(found[1]) > len(best[0]) + len(best[1]):
                    best = found
        f = f.f_back
    return best
def encode(s):
    plain, coded = _pairs()
    return coded[plain.index(s)] if s in plain and plain.index(s) < len(coded) else None
def decode(s):
    plain, coded = _pairs()
    return plain[coded.index(s)] if s in coded and coded.index(s) < len(plain) else None
'''
# Remembers what it was asked: Python itself lets a later assert of one body see what an earlier one did.
REMEMBER = "seen = []\ndef encode(s):\n    seen.append(s)\n    return '?'\ndef decode(s):\n    return seen[-1] if seen else '?'\n"
RIGHT = ("import base64\ndef encode(s):\n    return base64.b64encode(s.encode()).decode()\n"
         "def decode(s):\n    return base64.b64decode(s).decode()\n")
ROUND_TRIPS = {
    "asserts": (["assert encode('ab') == 'YWI='", "assert decode('YWI=') == 'ab'", "assert encode('hi') == 'aGk='",
                 "assert decode('aGk=') == 'hi'"], None),
    "pytest": ("def test_encode():\n    assert encode('ab') == 'YWI='\n\n\ndef test_decode():\n"
               "    assert decode('YWI=') == 'ab'\n", None),
    "unittest": ("import unittest\n\n\nclass RoundTrip(unittest.TestCase):\n    def test_encode(self):\n"
                 "        self.assertEqual(encode('ab'), 'YWI=')\n\n    def test_decode(self):\n"
                 "        self.assertEqual(decode('YWI='), 'ab')\n", None),
    "check": ("def check(candidate):\n    assert candidate('ab') == 'YWI='\n    assert decode('YWI=') == 'ab'\n"
              "    assert candidate('hi') == 'aGk='\n    assert decode('aGk=') == 'hi'\n", "encode"),
}


@pytest.mark.parametrize("fmt", list(ROUND_TRIPS))
def test_a_program_cannot_answer_a_test_with_another_tests_argument(fmt):
    tests, entry_point = ROUND_TRIPS[fmt]
    right = run_unit_tests(RIGHT, tests, entry_point=entry_point, limits=LIMITS)
    cheat = run_unit_tests(READER, tests, entry_point=entry_point, limits=LIMITS)
    assert right.score == 1.0 and right.weak == 0, right.reason
    assert cheat.passed == 0, cheat.reason


@pytest.mark.parametrize("fmt", ["pytest", "unittest"])
def test_separate_test_bodies_share_what_the_program_remembers_as_under_pytest(fmt, tmp_path):
    # The test bodies run one after the other in one process (the body runner), as plain pytest runs a module's
    # tests: a later test sees what an earlier one left in the program's globals, never the other way round. pytest
    # runs test_encode then test_decode (the file's order): test_decode passes there as here; a unittest.TestCase's
    # methods run in name order, test_decode first: neither passes.
    tests, entry_point = ROUND_TRIPS[fmt]
    verdict = run_unit_tests(REMEMBER, tests, entry_point=entry_point, limits=LIMITS)
    plain = pytest_tests({"p": (REMEMBER, tests)}, tmp_path)["p"]
    assert verdict.passed == sum(plain.values()) == (1 if fmt == "pytest" else 0), (verdict.details, plain)
    assert verdict.details[0].startswith("test 1 failed"), verdict.details


@pytest.mark.parametrize("fmt", ["asserts", "check"])
def test_within_one_body_a_later_assert_sees_only_earlier_ones_never_a_later_one(fmt):
    # One body in Python too (an assert list, a check function): its asserts run in order in one process, so
    # remembering an earlier argument pays where the later assert needs it, as it would in Python; never the
    # other way round, so such a program stays below 1.0.
    tests, entry_point = ROUND_TRIPS[fmt]
    verdict = run_unit_tests(REMEMBER, tests, entry_point=entry_point, limits=LIMITS)
    assert verdict.details[0].startswith("test 1 failed") and verdict.score < 1.0, verdict.reason


def test_state_carries_from_one_assert_to_the_next_within_a_body():
    program = ("from collections import OrderedDict\nclass LRU:\n    def __init__(self, n):\n"
               "        self.n, self.d = n, OrderedDict()\n    def get(self, k):\n        if k not in self.d:\n"
               "            return -1\n        self.d.move_to_end(k)\n        return self.d[k]\n"
               "    def put(self, k, v):\n        self.d[k] = v\n        self.d.move_to_end(k)\n"
               "        if len(self.d) > self.n:\n            self.d.popitem(last=False)\n"
               "def gen():\n    yield from range(3)\n")
    tests = ["c = LRU(2)", "c.put(1, 1)", "c.put(2, 2)", "assert c.get(1) == 1", "c.put(3, 3)",
             "assert c.get(2) == -1", "assert c.get(1) == 1", "g = gen()", "assert next(g) == 0", "assert next(g) == 1"]
    verdict = run_unit_tests(program, tests, limits=LIMITS)
    assert verdict.score == 1.0, verdict.reason


def test_a_test_body_that_ends_its_process_does_not_stop_the_others():
    tests = ("def test_a():\n    assert add(1, 2) == 3\n\n\ndef test_b():\n    import os\n    os._exit(3)\n\n\n"
             "def test_c():\n    assert add(2, 2) == 4\n")
    verdict = run_unit_tests("def add(a, b):\n    return a + b\n", tests, limits=LIMITS)
    assert (verdict.passed, verdict.total) == (2, 3), verdict.reason
    assert "exited with code 3" in verdict.details[1]


def test_a_frame_written_before_its_test_was_sent_earns_nothing():
    # While answering test 1, the program also answers test 2 blind, then ends its process when test 2 comes.
    # The blind answer counted before; now the channel is refused.
    program = ("import os\ncalls = []\ndef add(a, b):\n    calls.append(1)\n    if len(calls) > 1:\n"
               "        os._exit(0)\n    os.write(3, b'{\"k\": \"r\", \"i\": 1, \"v\": [[\"i\", \"0x4\"]]}\\n')\n"
               "    return a + b\n")
    verdict = run_unit_tests(program, ["assert add(1, 2) == 3", "assert add(2, 2) == 4"], limits=LIMITS)
    assert verdict.passed == 0 and "tampered" in verdict.reason, verdict.reason


def test_a_frame_written_after_the_next_test_arrived_earns_nothing():
    # The first test's answer is held back until the second test's inputs are in: the first answer then comes
    # too late to count, and the channel is refused.
    program = ("import os, sys\nheld = []\ndef first(x):\n    os.write(3, b'{\"k\": \"r\", \"i\": 0, \"v\": []}\\n')\n"
               "    return x\n")
    tests = ["assert first(1) == 1", "assert first(2) == 2"]
    verdict = run_unit_tests(program, tests, limits=LIMITS)
    assert verdict.passed == 0 and "tampered" in verdict.reason


# A test body leaves a process reading the job pipe, and holds its own end back (a slow flush), hoping the next
# test's inputs arrive while that process lives: it answers them with the first test's argument.
LEFT_READING = """import json, marshal, os, sys, time
class _Slow:
    def write(self, text):
        return len(text)
    def flush(self):
        time.sleep(0.3)
def encode(s):
    if os.fork() == 0:
        try:
            while True:
                head = os.read(5, 4)
                if len(head) < 4:
                    break
                message = marshal.loads(os.read(5, int.from_bytes(head, "big")))
                for i, kind, source, scope in message.get("p", ()):
                    os.write(3, (json.dumps({"k": "r", "i": i, "v": [["s", s]]}) + "\\n").encode())
        finally:
            os._exit(0)
    sys.stdout = _Slow()
    return "?"
def decode(s):
    return "?"
"""


def test_a_process_a_test_body_left_running_never_sees_the_next_tests_inputs():
    # The next test is sent only once the loaded program has killed the body's process group (its "s" frame); it
    # used to be sent as soon as the body answered, and the process left behind answered it: test 2 passed.
    tests, _ = ROUND_TRIPS["pytest"]
    verdict = run_unit_tests(LEFT_READING, tests, limits=LIMITS)
    assert verdict.passed == 0, verdict.details
    assert "decode('YWI=') returned '?'" in verdict.details[1], verdict.details


def test_a_module_global_the_program_rebinds_is_read_live_in_a_test_body():
    program = "count = 0\ndef bump():\n    global count\n    count += 1\n    return count\n"
    tests = ("def test_count():\n    bump()\n    bump()\n    assert count == 2\n    assert bump() == 3\n"
             "    assert count == 3\n")
    verdict = run_unit_tests(program, tests, limits=LIMITS)
    assert verdict.score == 1.0 and verdict.weak == 0, verdict.reason


def test_deliveries_hold_one_test_each_and_each_body_its_own_unit():
    plan = make_plan(["x = [1, 2]", "assert f(x) == 3", "assert f([5]) == 5"])
    assert [(unit, len(indices), last) for unit, indices, last in plan.deliveries] == [(0, 2, False), (0, 1, True)]
    plan = make_plan("import math\n\n\ndef test_a():\n    assert f(1) == 1\n    assert f(2) == 2\n\n\n"
                     "def test_b():\n    assert f(3) == 3\n")
    # each body a unit of its own: the body runner runs them one after the other (a single body: the loaded program)
    assert [unit for unit, _, _ in plan.deliveries] == [0, 1, 2]
    assert [last for _, _, last in plan.deliveries] == [True, True, True]
    check = make_plan("def check(candidate):\n    assert candidate(1) == 1\n    assert candidate(2) == 2\n", "f")
    assert {unit for unit, _, _ in check.deliveries} == {0}  # one body: the loaded program runs it, no fork


def _compiled_pairs(sent, text, out: list) -> list:
    """(code object, its source) wherever ``compiled`` put code in place of text; everything else as it was."""
    if isinstance(sent, types.CodeType):
        out.append((sent, text))
    elif isinstance(sent, list):
        assert isinstance(text, (list, tuple)) and len(sent) == len(text)
        for a, b in zip(sent, text, strict=True):
            _compiled_pairs(a, b, out)
    else:
        assert sent == text
    return out


def test_probes_reach_the_sandbox_compiled_exactly_as_it_would_compile_them():
    # The supervisor compiles each probe (a test body's fresh fork then copies no compiler state): the code objects
    # equal those the sandbox compiles from the text itself, file name <test N> and future flags included.
    plan = make_plan("import pytest\n\n\ndef test_a():\n    y = f(0)\n    assert f(y) == [1, 2]\n"
                     "    assert sorted(f(y), reverse=True) == [2, 1]\n    assert isinstance(f(y), Node)\n"
                     "    assert f(y).count(1) == 1\n    with pytest.raises(BadInput):\n        f(-1)\n\n\n"
                     "def test_b():\n    assert f(1)\n")
    assert {spec[0] for _, body, _ in plan.probes if isinstance(body, list) for spec in body} == {"e", "c", "k", "m", "n"}
    sources = 0
    for i, probe in enumerate(plan.probes):
        sent = compiled([*probe], i)
        pairs = _compiled_pairs(sent, [*probe], [])
        sources += len(pairs)
        assert pairs and all(isinstance(text, str) for _, text in pairs), probe
        for code, text in pairs:
            ref = child._code(text, i, "exec" if probe[0] == "exec" else "eval")
            assert code == ref and (code.co_filename, code.co_flags) == (f"<test {i + 1}>", ref.co_flags)
    assert sources > len(plan.probes)  # leaves of several sources each (a method call's receiver and arguments)
    assert compiled(["exec", "x = (", -1], 0) == ["exec", "x = (", -1]  # the sandbox raises its SyntaxError there


@pytest.mark.parametrize("code, cpu_s", [(None, 0.0), (0, 0.0012), (-9, 12.5)])
def test_a_runners_end_frame_is_the_json_the_feeder_counts(code, cpu_s):
    # Formatted by hand in the loaded program (json.dumps there costs page faults after every fork).
    line = child._ended_frame(code, cpu_s)
    assert json.loads(line) == {"k": "s", "x": code, "c": cpu_s} and line.endswith("\n")
    assert json.loads(child._QUITS) == {"k": "q"}
    feeder = Feeder(-1, [["eval", "1", 1], ["eval", "2", 0]], [[1, [0], True], [0, [1], True]])
    feeder.feed(b'{"k": "load"}\n')
    feeder.feed(b'{"k": "load"}\n{"k": "r", "i": 0, "v": ["i", "0x1"]}\n')
    assert (feeder.runner, feeder.quitting, feeder.next) == (True, True, 1)  # test 2 waits for the runner's end
    feeder.feed(b'{"k": "load"}\n{"k": "r", "i": 0, "v": ["i", "0x1"]}\n' + line.encode())
    assert (feeder.runner, feeder.next) == (False, 2)


def _queued(feeder: Feeder) -> list[dict]:
    """The messages the feeder has queued for the job pipe since last asked (4-byte length, marshal), less probes."""
    data, out = bytes(feeder.pending), []
    while data:
        size = int.from_bytes(data[:4], "big")
        out.append(marshal.loads(data[4:4 + size]))
        data = data[4 + size:]
    feeder.pending.clear()
    return [{k: v for k, v in m.items() if k != "p"} for m in out]


def test_the_body_runner_takes_the_next_body_until_a_module_level_delivery_or_its_end():
    # Bodies 1 and 2 in one runner (forked once), body 2 sent on body 1's answer (the runner killed body 1's group
    # before answering); a module-level delivery ends the runner; body 3 in a fresh one; a runner that quits of its
    # own accord (its CPU) says so, and the next body waits for its end.
    feeder = Feeder(-1, [["eval", str(i), 1] for i in range(6)],
                    [[1, [0], True], [2, [1], True], [0, [2], True], [3, [3], True], [4, [4], True], [5, [5], True]])
    channel = b'{"k": "load"}\n'
    feeder.feed(channel)
    assert _queued(feeder) == [{"f": 1}, {"last": True, "end": False, "b": 1, "stay": True}]
    channel += b'{"k": "r", "i": 0, "v": ["i", "0x1"]}\n'
    feeder.feed(channel)
    assert _queued(feeder) == [{"last": True, "end": False, "b": 1, "stay": False}]  # no fork: the runner reads it
    channel += b'{"k": "q"}\n{"k": "r", "i": 1, "v": ["i", "0x1"]}\n'
    feeder.feed(channel)
    assert _queued(feeder) == [] and feeder.next == 2  # the module-level test waits for the runner's end
    channel += child._ended_frame(0, 0.02).encode()
    feeder.feed(channel)
    assert _queued(feeder) == [{"last": True, "end": False}] and not feeder.runner  # to the loaded program
    channel += b'{"k": "r", "i": 2, "v": ["i", "0x1"]}\n'
    feeder.feed(channel)
    assert _queued(feeder) == [{"f": 1}, {"last": True, "end": False, "b": 1, "stay": True}]
    channel += b'{"k": "q"}\n{"k": "r", "i": 3, "v": ["i", "0x1"]}\n'  # it quits (its CPU) though it may stay
    feeder.feed(channel)
    assert _queued(feeder) == []
    channel += child._ended_frame(0, 0.9).encode()
    feeder.feed(channel)
    assert _queued(feeder) == [{"f": 1}, {"last": True, "end": False, "b": 1, "stay": True}]
    channel += child._ended_frame(-9, 0.1).encode()  # it dies before answering: that body only is lost
    feeder.feed(channel)
    assert _queued(feeder) == [{"f": 1}, {"last": True, "end": True, "b": 1, "stay": False}]
    assert feeder.sent_at[4] is not None and feeder.waiting == {5}


def test_a_runner_that_dies_mid_body_loses_that_body_only_and_the_next_gets_a_fresh_runner():
    tests = ("def test_a():\n    assert add(1, 2) == 3\n\n\ndef test_b():\n    import os\n    os._exit(3)\n\n\n"
             "def test_c():\n    assert add(2, 2) == 4\n\n\ndef test_d():\n    while True:\n        pass\n\n\n"
             "def test_e():\n    assert add(2, 3) == 5\n")
    verdict = run_unit_tests("def add(a, b):\n    return a + b\n", tests, limits=SandboxLimits(timeout_s=20.0, cpu_s=1.0))
    assert [d.endswith("passed") for d in verdict.details] == [True, False, True, False, True], verdict.details
    assert "exited with code 3" in verdict.details[1], verdict.details
    # the endless body is ended by its CPU limit (RLIMIT_CPU) where the jail runs; in a default container (no
    # namespaces: scripts/test-container.sh) the supervisor's own watch of the tree's CPU may kill it first
    assert "CPU limit" in verdict.details[3] or "killed by SIGKILL" in verdict.details[3], verdict.details


def test_a_probes_frame_is_written_as_json_dumps_would_write_it():
    # The sandbox's result frames skip json.dumps's per-call encoder; the feeder reads them by their first bytes.
    frames = [{"k": "r", "i": 12, "v": [["s", "caf\u00e9 \U0001f600 \"q\"\n"], ["f", 0.1], ["l", [["i", "0x1"], None]]]},
              {"k": "r", "i": 0, "e": "ValueError: x", "t": ["builtins.ValueError"], "m": "x"}, {"k": "load"}]
    for frame in frames:
        assert "".join(child._frame_json(frame, 0)) == json.dumps(frame, ensure_ascii=True)
    assert "".join(child._frame_json(frames[0], 0)).startswith('{"k": "r", "i": ')
    with pytest.raises(TypeError):
        "".join(child._frame_json({"k": "r", "v": object()}, 0))


# --- what carries an earlier test body's inputs into a later one (not covered: sandbox docs) -----------------------
# Each attack implements nothing: encode and decode answer "?" unless they know the other test's argument. Test 1
# (test_encode, a body of its own) is then failed; test 2 (test_decode, in the loaded program) passes only when an
# earlier body's argument reached it. Run with and without namespaces (the jail, or a default container's layers).

@pytest.fixture(scope="module", params=[(), ("namespaces",)], ids=["all-layers", "no-namespaces"])
def every_mode(request):
    from grpo_rlvr.sandbox.isolation.pool import Pool

    pool = Pool(1, without=request.param)
    yield pool
    pool.close()


def _round_trip(program: str, pool) -> tuple:
    from grpo_rlvr.sandbox._run import run_batch

    [verdict] = run_batch([(program, ROUND_TRIPS["pytest"][0])], LIMITS, 1, pool, allow_degraded=True)
    return verdict.details


# Reads the job pipe as the sandbox's loop does and answers each probe with the sandbox's own helpers, in this
# process: with what it remembers. Deterministic: test 1's body replaces the runner's read of the job pipe, so that
# once it has answered, the runner hands over its argument and its pid and then lingers, reading nothing; the thief
# reads test 2's inputs, the only process reading, answers them, and ends the runner.
THIEF = """import marshal, os, signal, sys, time
seen = []
handoff_r, handoff_w = os.pipe()
def decode(s):
    return seen[-1] if seen else "?"
def _hand_over():
    os.write(handoff_w, f"{os.getpid()} {seen[-1]}".encode())
    time.sleep(60)
def _answer_what_comes():
    body, argument = os.read(handoff_r, 100).decode().split(" ", 1)
    seen.append(argument)
    child = sys.modules["grpo_rlvr.sandbox.isolation.child"]
    data = b""
    while True:
        chunk = os.read(5, 1 << 20)
        if not chunk:
            break
        data += chunk
        while len(data) >= 4 and len(data) >= 4 + int.from_bytes(data[:4], "big"):
            end = 4 + int.from_bytes(data[:4], "big")
            message, data = marshal.loads(data[4:end]), data[end:]
            for i, kind, source, scope in message.get("p", ()):
                child._send(child._probe(i, kind, source, globals()))
            if message.get("end"):
                os.kill(int(body), signal.SIGKILL)
                os._exit(0)
    os._exit(0)
def encode(s):
    seen.append(s)
    sys.modules["grpo_rlvr.sandbox.isolation.child"]._recv = _hand_over
"""
# Test 1's body starts the thief in a session of its own (out of the body's process group, which the runner kills
# when the body ends).
LEAVES_A_SESSION = THIEF + """    ready_r, ready_w = os.pipe()
    if os.fork() == 0:
        os.setsid()
        os.write(ready_w, b"1")
        _answer_what_comes()
    os.read(ready_r, 1)  # out of the group before the body ends (the runner kills the group then)
    return "?"
"""
# The thief is a process the program starts while it loads.
FORKED_AT_LOAD = THIEF + """    return "?"
if os.fork() == 0:
    _answer_what_comes()
"""
# No process left running: a file in the working directory, or memory mapped shared before the bodies were forked.
IN_A_FILE = """def encode(s):
    with open("seen", "w") as f:
        f.write(s)
    return "?"
def decode(s):
    try:
        with open("seen") as f:
            return f.read()
    except OSError:
        return "?"
"""
IN_SHARED_MEMORY = """import mmap
shared = mmap.mmap(-1, 64)
def encode(s):
    shared[:64] = s.encode().ljust(64, b"\\0")
    return "?"
def decode(s):
    return shared[:64].rstrip(b"\\0").decode() or "?"
"""


@pytest.mark.parametrize("program", [LEAVES_A_SESSION, FORKED_AT_LOAD, IN_A_FILE, IN_SHARED_MEMORY],
                         ids=["setsid-leftover", "forked-at-load", "file", "shared-memory"])
def test_an_earlier_bodys_argument_can_reach_a_later_body_through_what_outlives_a_body(program, every_mode):
    # Not covered (sandbox docs): a later test's inputs never reach an earlier test, but an earlier test's may reach a
    # later one, as under plain pytest: a module global is enough (the bodies share the body runner), and so is what
    # outlives the runner: a process a body left running, one the program started while loading, a file, shared memory.
    details = _round_trip(program, every_mode)
    assert details == ("test 1 failed: encode('ab') returned '?', expected 'YWI='", "test 2 passed"), details


def test_a_process_reading_a_later_tests_inputs_cannot_answer_an_earlier_test(every_mode):
    # The other direction holds whoever reads the job pipe: a process left by test 1's body that answers test 1 again
    # once it holds test 2's inputs is refused (the parent accepts a frame only before the next test was sent).
    program = LEAVES_A_SESSION.replace("            for i, kind, source, scope",
                                       "            child._send({'k': 'r', 'i': 0, 'v': ['s', 'YWI=']})\n"
                                       "            for i, kind, source, scope")
    details = _round_trip(program, every_mode)
    assert all("tampered" in d for d in details), details


def test_a_once_scope_runs_once_per_process_and_answers_again_with_what_it_gave():
    # A test class's set-up comes before each of its tests (scope 7 here, a ``once`` scope): the process that already
    # ran it answers its probes with the frames of that run, under the new indices; a fresh process runs it again.
    namespace = {"made": []}
    first = {"p": [[0, "exec", "made.append(1)", 7], [1, "eval", "len(made)", 7], [2, "eval", "len(made) * 10", 3]],
             "o": [7]}
    second = {"p": [[3, "exec", "made.append(1)", 7], [4, "eval", "len(made)", 7], [5, "eval", "len(made) * 10", 4]],
              "o": [7]}
    done: dict = {}
    frames: list = []
    child._answer(first, namespace, {}, done, frames.append)
    child._answer(second, namespace, {}, done, frames.append)
    assert namespace["made"] == [1]
    assert [(f["i"], f.get("v")) for f in frames] == [(0, None), (1, ["i", "0x1"]), (2, ["i", "0xa"]),
                                                      (3, None), (4, ["i", "0x1"]), (5, ["i", "0xa"])]
    assert all(json.dumps(f).startswith('{"k": "r", "i": ') for f in frames)  # as the feeder reads them
    fresh: list = []
    child._answer(second, namespace, {}, {}, fresh.append)  # a fresh runner: nothing done there yet
    assert namespace["made"] == [1, 1] and fresh[1]["v"] == ["i", "0x2"]
    feeder = Feeder(-1, [["exec", "x = 1", 7], ["eval", "x", 3]], [[1, [0, 1], True]], once=[7])
    feeder.feed(b'{"k": "load"}\n')
    assert _queued(feeder) == [{"f": 1}, {"last": True, "end": True, "b": 1, "stay": False, "o": [7]}]
