"""``UnitTestVerdict`` and how it is decided from the supervisors' reports, in the parent process.

Covered: assert/probe plans (values from the result channel, judged against expected values that never
left this process), stdin/stdout plans (captured stdout compared line by line, trailing whitespace and
trailing blank lines ignored, exit code 0 required) and test-code plans. Any malformed frame on the result
channel means the program wrote to it: zero credit. Not covered: partial credit within one test.
"""

from __future__ import annotations

import base64
import json
import math
import signal
from dataclasses import dataclass

from . import assert_methods
from .budget import Budget
from .leaf_values import Raised, from_frame
from .plaindata import ValueLimit, decode, short_repr
from .plan import GLOBAL, WEAK_KINDS, Plan, judge_value

WEAK_NOTE = "weak: test code ran in the sandbox"

LAYER_ORDER = (
    "process", "userns", "pidns", "netns", "fs_jail", "private_shm", "tmpdir", "env_scrubbed", "uid_drop",
    "caps_dropped", "no_new_privs", "landlock_fs", "landlock_net", "landlock_scope", "seccomp", "no_file_locks",
    "metadata_frozen", "nondumpable", "oom_first", "rlimit_cpu", "rlimit_as", "rlimit_nproc", "rlimit_fsize", "tree_cap", "pgroup_kill", "sweep",
)  # fmt: skip


@dataclass(frozen=True)
class UnitTestVerdict:
    """The outcome of running one program against its tests.

    Attributes:
        passed: tests that passed. total: tests in all.
        reason: one human-readable line, e.g. "2/3 passed; test 3 failed: add(2, 2) returned 5, expected 4".
        layers: isolation layers that were in effect for this run (empty when nothing ran).
        timed_out: an execution hit the wall-clock limit.
        details: one line per test.
        weak: how many of the tests were judged inside the sandbox (a hostile program could forge those);
            the reason then ends with "(weak: test code ran in the sandbox)".
    """

    passed: int
    total: int
    reason: str
    layers: tuple[str, ...]
    timed_out: bool
    details: tuple[str, ...]
    weak: int = 0

    @property
    def score(self) -> float:
        """passed / total (0.0 when there are no tests)."""
        return self.passed / self.total if self.total else 0.0


def ordered_layers(names) -> tuple[str, ...]:
    names = set(names)
    return tuple(n for n in LAYER_ORDER if n in names) + tuple(sorted(names - set(LAYER_ORDER)))


def no_code_verdict(plan: Plan) -> UnitTestVerdict:
    details = tuple(f"test {i + 1} failed: no code found" for i in range(plan.total))
    return UnitTestVerdict(0, plan.total, "no code found", (), False, details)


def unjudged_verdict(plan: Plan, why: str) -> UnitTestVerdict:
    """Zero credit for a program whose results could not be judged (never an exception out of the reward)."""
    details = tuple(f"test {i + 1} failed: could not be judged" for i in range(plan.total))
    return UnitTestVerdict(0, plan.total, f"0/{plan.total} passed; the results could not be judged: {why}"[:300],
                           (), False, details)


def decide(plan: Plan, reports: list[dict], limits) -> UnitTestVerdict:
    """The verdict for ``plan`` from the reports of its executions (one, or one per stdin case), within the
    sample's judging budget (``judging.budget``).

    Raises:
        OverBudget: judging took more of this thread's CPU than ``judging.budget.JUDGE_CPU_S``.
    """
    with Budget():
        return _decide(plan, reports, limits)


def _decide(plan: Plan, reports: list[dict], limits) -> UnitTestVerdict:
    layers = ordered_layers(reports[0]["layers"]) if reports else ()
    timeout_s, cpu_s = limits.timeout_s, limits.cpu_s
    overrun = next((r["overrun"] for r in reports if r.get("overrun")), "") or next(
        (f"the sample's time budget of {float(limits.sample_timeout_s)} s ran out" for r in reports
         if r.get("budget_exceeded")), "")
    if overrun:  # the sample hurt, or could have hurt, the run: nothing it did counts
        details = tuple(f"test {i + 1} failed: {overrun}" for i in range(plan.total))
        return UnitTestVerdict(0, plan.total, f"0/{plan.total} passed; {overrun}", layers,
                               any(r.get("timed_out") for r in reports), details)
    weak: set[int] = set()
    if plan.mode == "stdio":
        outcomes = _stdio_outcomes(plan, reports, timeout_s, cpu_s)
        banner = ""
    else:
        probe_outcomes, banner = _probe_outcomes(plan, reports[0], timeout_s, cpu_s)
        outcomes, weak = _test_outcomes(plan, probe_outcomes)
    timed_out = any(r.get("timed_out") for r in reports)
    passed = sum(ok for ok, _ in outcomes)
    details = tuple(f"test {i + 1} passed{' (checked inside the sandbox)' if i in weak else ''}" if ok
                    else f"test {i + 1} failed: {why}" for i, (ok, why) in enumerate(outcomes))
    total = plan.total
    if passed == total:
        reason = f"{passed}/{total} passed"
    elif banner and passed == 0:  # the run as a whole failed: "timed out after 5.0 s"
        reason = banner
    else:
        first_fail = next(i for i, (ok, _) in enumerate(outcomes) if not ok)
        reason = f"{passed}/{total} passed; " + (banner or f"test {first_fail + 1} failed: {outcomes[first_fail][1]}")
    if weak:
        reason += f" ({WEAK_NOTE})" if len(weak) == total else f" ({WEAK_NOTE} for {len(weak)} of {total})"
    return UnitTestVerdict(passed, total, reason, layers, timed_out, details, len(weak))


def _test_outcomes(plan: Plan, probe_outcomes: list[tuple[bool, str, bool]]):
    """Per test (ok, why) from per probe (ok, why, weak) outcomes, and the indices of the weak tests."""
    n = len(plan.tests)
    failed_scopes: dict[int, str] = {}  # the first failing setup of each scope
    results: list[tuple[bool, str] | None] = [None] * n
    weak: set[int] = set()
    for check, (ok, why, weak_here) in zip(plan.checks, probe_outcomes, strict=True):
        if check.test is None:
            if not ok and not check.optional:
                failed_scopes.setdefault(check.scope, f"setup failed: {why}")
            continue
        t = check.test
        if check.kind in WEAK_KINDS or weak_here:
            weak.add(t)
        if results[t] is None and not ok:
            results[t] = (False, why)
    outcomes = []
    scope_of = {c.test: c.scope for c in plan.checks if c.test is not None}
    for t in range(n):
        setup_failure = failed_scopes.get(GLOBAL) or failed_scopes.get(scope_of.get(t, GLOBAL))
        if results[t] is not None and results[t][1].startswith("not run"):
            outcomes.append(results[t])
        elif setup_failure:
            outcomes.append((False, setup_failure))
        else:
            outcomes.append(results[t] or (True, ""))
    return outcomes, weak


def death_reason(report: dict, timeout_s: float, cpu_s: float) -> str:
    """Why an execution stopped before finishing, from what the supervisor observed."""
    if report["timed_out"]:
        return f"timed out after {float(timeout_s)} s"
    if report["output_exceeded"]:
        return "output limit exceeded"
    code = report["exit_code"]
    if code is not None and code < 0:
        name = _signal_name(-code)
        if report.get("cpu_s", 0.0) >= max(1, math.ceil(cpu_s)) - 0.05:  # RLIMIT_CPU is whole seconds
            return f"CPU limit of {float(cpu_s)} s exceeded ({name})"
        return f"killed by {name}"
    return f"the process exited with code {code} before finishing"


def _signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def _probe_outcomes(plan: Plan, report: dict, timeout_s: float, cpu_s: float):
    """(outcomes, banner): per-test (ok, why) and a headline that overrides the first failure."""
    n = len(plan.checks)
    frames = _parse_channel(base64.b64decode(report["result"]), plan, report["sent_at"])
    tampered = [(False, "no credit: the result channel was tampered with", False)] * n
    if frames is None:
        return tampered, "result channel tampered with"
    load, results, ended = frames
    if load is None:
        death = death_reason(report, timeout_s, cpu_s)
        return [(False, death, False)] * n, death
    if "e" in load:
        why = f"the program failed to load: {load['e']}"
        return [(False, "not run: the program failed to load", False)] * n, why
    ended_in = _ended_in(plan, report["sent_at"], ended)
    outcomes, banner = [], ""
    for i, check in enumerate(plan.checks):
        frame = results.get(i)
        unit = plan.units[i] if plan.units else 0
        if frame is None and unit in ended_in:  # its test body's runner ended early; the others ran on
            outcomes.append((False, f"not run: {_body_death(ended_in[unit], cpu_s)}", False))
        elif frame is None:
            banner = death_reason(report, timeout_s, cpu_s)
            outcomes.append((False, f"not run: {banner}", False))
        elif check.raises is not None:
            try:
                outcomes.append(_judge_raises(check, frame))
            except (ValueError, TypeError):
                return tampered, "result channel tampered with"
        elif "e" in frame:
            outcomes.append((False, f"{check.label} raised {frame['e']}", False))
        elif check.kind in ("ran", "setup", "part"):
            outcomes.append((True, "", False))
        elif "v" not in frame:
            return tampered, "result channel tampered with"
        else:
            try:
                outcome = _judge(check, frame["v"])
            except ValueLimit as e:
                outcomes.append((False, f"{check.label}: {e}", False))
                continue
            except (ValueError, TypeError, OverflowError, RecursionError):
                return tampered, "result channel tampered with"
            outcomes.append(outcome)
    return outcomes, banner


def _ended_in(plan: Plan, sent_at: list, ended: list) -> dict[int, dict]:
    """Unit -> the first body runner end frame (``{"k": "s"}``, the loaded program's report) written while a delivery
    of that test body was the last one sent: the runner ended during that body (or after its last answer)."""
    sent = [(at, unit) for (unit, _, _), at in zip(plan.deliveries, sent_at, strict=True) if at is not None]
    out: dict[int, dict] = {}
    for offset, frame in ended:
        unit = next((u for at, u in reversed(sent) if at <= offset), 0)
        if unit > 0:
            out.setdefault(unit, frame)
    return out


def _body_death(frame: dict, cpu_s: float) -> str:
    """Why a test body's process ended before it answered, as the loaded program saw it (its own report)."""
    code = frame.get("x")
    if type(code) is not int:
        return "the test's process ended before finishing"
    if code < 0:
        if frame.get("c", 0.0) >= max(1, math.ceil(cpu_s)) - 0.05:
            return f"CPU limit of {float(cpu_s)} s exceeded ({_signal_name(-code)})"
        return f"the test's process was killed by {_signal_name(-code)}"
    return f"the test's process exited with code {code} before finishing"


def _judge(check, encoded) -> tuple[bool, str, bool]:
    """(passed, why not, weak) of one answered probe. Raises ValueError/TypeError on a malformed value."""
    if check.kind != "expr":
        return (*judge_value(check, decode(encoded)), False)
    if type(encoded) is not list or len(encoded) != len(check.strong.leaves):
        raise ValueError("wrong number of leaf values")
    return check.strong.judge([from_frame(item) for item in encoded])


def _judge_raises(check, frame: dict) -> tuple[bool, str, bool]:
    """(passed, why not, weak) of an expected exception (``pytest.raises``, ``assertRaises``): the probe raised an
    instance of one of the classes (its ancestry crossed as names), with the pattern found in its text."""
    names, pattern = check.raises
    weak = check.kind == "raises_weak"
    if "v" in frame:  # a leaf probe: its leaf holds the exception, or the value it returned (then the class's names)
        items = frame["v"] if type(frame["v"]) is list and len(frame["v"]) == (1 if names is not None else 2) else None
        if items is None:
            raise ValueError("wrong number of leaf values")
        if names is None:
            names = from_frame(items[1])
            if type(names) is not list or not all(type(n) is str for n in names):
                return False, f"{check.label}: the expected exception is not a class", weak
            names = tuple(names)
        raised = from_frame(items[0])
        if type(raised) is not Raised:
            return False, f"{check.label} did not raise {_short_names(names)}", False
        got, message, text = raised.names, raised.message, raised.describe()
    elif "e" in frame:
        got, message, text = tuple(frame.get("t", ())), frame.get("m", ""), frame["e"]
    else:
        return False, f"{check.label} did not raise {_short_names(names)}", weak
    if not any(name in got for name in names):
        return False, f"{check.label} raised {text}, expected {_short_names(names)}"[:300], weak
    if pattern is not None and assert_methods.not_regex(message, pattern):
        return False, f"{check.label} raised {text}, which does not match {pattern!r}"[:300], weak
    return True, "", weak


def _short_names(names: tuple) -> str:
    return " or ".join(n.rpartition(".")[2] for n in names)


def _parse_channel(data: bytes, plan: Plan, sent_at: list):
    """(load frame, {index: frame}, [(offset, body runner end frame)]) or None when any complete line is not a well-formed,
    in-order frame. A probe's frame counts only between the offsets at which its delivery and the next one were
    sent (``isolation.feeder``): written before, it answered inputs it never had; after, it had a later test's."""
    window = _windows(plan, sent_at, len(data))
    lines = data.split(b"\n")[:-1]  # a trailing partial line: the process died mid-write
    load, results, ended = None, {}, []
    offset = 0
    for raw in lines:
        start, offset = offset, offset + len(raw) + 1
        try:
            frame = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError):
            return None
        if type(frame) is not dict:
            return None
        kind = frame.get("k")
        if kind == "load" and load is None and set(frame) <= {"k", "e"} and type(frame.get("e", "")) is str:
            load = frame
            continue
        if (kind == "s" and load is not None and set(frame) <= {"k", "x", "c"}
                and (frame.get("x") is None or type(frame.get("x")) is int)
                and type(frame.get("c", 0.0)) in (int, float) and len(ended) < len(sent_at)):
            ended.append((start, frame))
            continue
        if kind == "q" and load is not None and set(frame) == {"k"}:  # the body runner ends after this body
            continue
        ok_result = (
            kind == "r"
            and load is not None
            and "e" not in load
            and set(frame) <= {"k", "i", "v", "e", "t", "m"}
            and not ("v" in frame and "e" in frame)
            and type(frame.get("i")) is int
            and 0 <= frame["i"] < len(plan.checks)
            and frame["i"] not in results
            and type(frame.get("e", "")) is str
            and type(frame.get("m", "")) is str
            and type(frame.get("t", [])) is list and all(type(n) is str for n in frame.get("t", []))
            and window[frame["i"]][0] <= start < window[frame["i"]][1]
        )
        if not ok_result:
            return None
        results[frame["i"]] = frame
    return load, results, ended


def _windows(plan: Plan, sent_at: list, size: int) -> list[tuple[int, int]]:
    """Per probe, the byte range of the result channel where its frame may start (empty: never sent)."""
    if type(sent_at) is not list or len(sent_at) != len(plan.deliveries):
        raise TypeError(f"sent_at has {len(sent_at)} entries for {len(plan.deliveries)} deliveries")
    window = [(1, 0)] * len(plan.checks)
    for d, (_, indices, _) in enumerate(plan.deliveries):
        if sent_at[d] is None:
            continue
        end = next((at for at in sent_at[d + 1:] if at is not None), size + 1)
        for i in indices:
            window[i] = (sent_at[d], end)
    return window


def _normalize(text: str) -> list[str]:
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _stdio_outcomes(plan: Plan, reports: list[dict], timeout_s: float, cpu_s: float):
    outcomes = []
    for i, (_, expected) in enumerate(plan.cases):
        if i >= len(reports):
            outcomes.append((False, "not run: an earlier case timed out"))
            continue
        report = reports[i]
        if report["timed_out"] or report["output_exceeded"] or report["exit_code"] != 0:
            why = death_reason(report, timeout_s, cpu_s)
            stderr = base64.b64decode(report["stderr"]).decode("utf-8", "replace").strip()
            last = stderr.splitlines()[-1:] if stderr else []
            if report["exit_code"] and report["exit_code"] > 0 and last:
                why = f"exited with code {report['exit_code']}: {last[0][:200]}"
            outcomes.append((False, why))
            continue
        if not report["stdout_rest_blank"]:
            outcomes.append((False, f"wrong output: longer than the expected {len(expected.encode())} bytes"))
            continue
        got = _normalize(base64.b64decode(report["stdout"]).decode("utf-8", "replace"))
        want = _normalize(expected)
        if got == want:
            outcomes.append((True, ""))
            continue
        k = next((j for j, (a, b) in enumerate(zip(got, want, strict=False)) if a != b), min(len(got), len(want)))
        g = short_repr(got[k]) if k < len(got) else "end of output"
        w = short_repr(want[k]) if k < len(want) else "end of output"
        outcomes.append((False, f"wrong output at line {k + 1}: got {g}, expected {w}"))
    return outcomes
