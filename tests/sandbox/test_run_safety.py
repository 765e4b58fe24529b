"""One sample cannot hurt the run: nothing of another sample's reaches it, and its memory, processes, time
and output are capped as a whole, each overrun scoring 0 with its reason. Run with every layer this machine
gives and without namespaces (a default container's situation), as root and as a plain user.
"""

from __future__ import annotations

import os
import uuid

import pytest

from grpo_rlvr.sandbox import SandboxLimits
from grpo_rlvr.sandbox._run import _message, run_batch
from grpo_rlvr.sandbox.isolation import framing as _framing
from grpo_rlvr.sandbox.isolation.pool import Pool, reply_limit
from grpo_rlvr.sandbox.judging.make_plan import make_plan

LIMITS = SandboxLimits(timeout_s=20.0, cpu_s=20.0)
MODES = [(), ("namespaces",)]


@pytest.fixture(params=MODES, ids=["all-layers", "no-namespaces"], scope="module")
def pool(request):
    pool = Pool(1, without=request.param)
    yield pool
    pool.close()


def run(pool, jobs, limits=LIMITS):
    return run_batch(jobs, limits, 1, pool)


def rss_kib() -> int:
    with open("/proc/self/status") as f:
        return int(next(line for line in f if line.startswith("VmRSS:")).split()[1])


# --- nothing of another sample's -------------------------------------------------------------------------

# Looks everywhere a forked process could find an earlier sample's data: its inherited heap (every page near
# the program break and near every object, read through write(2) so unmapped pages fail softly), all of its
# memory through /proc/self/mem where /proc is visible, its environment and every inherited descriptor.
LEAKER = r'''
import ctypes, gc, os, re
libc = ctypes.CDLL(None, use_errno=True)
libc.sbrk.restype = ctypes.c_void_p
PAGE = 4096
PATTERN = re.compile(rb"tok-[0-9a-f]{24}")
r, w = os.pipe()
FOUND = set()

def readable(addr):
    n = libc.write(w, ctypes.c_void_p(addr), PAGE)
    if n > 0:
        os.read(r, n)
    return n == PAGE

def regions():
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
                if "r" in line.split()[1]:
                    yield lo, hi
        return
    except OSError:
        pass
    starts = {libc.sbrk(0) & ~(PAGE - 1)}
    for obj in gc.get_objects()[:20000]:
        starts.add(id(obj) & ~((1 << 20) - 1))
    for base in sorted(starts):
        yield max(0, base - (4 << 20)), base + (4 << 20)

seen = set()
for lo, hi in regions():
    for page in range(lo, hi, PAGE):
        if page not in seen:
            seen.add(page)
            if readable(page):
                FOUND.update(PATTERN.findall(ctypes.string_at(page, PAGE)))
try:
    with open("/proc/self/mem", "rb", buffering=0) as mem:
        for lo, hi in regions():
            try:
                mem.seek(lo)
                FOUND.update(PATTERN.findall(mem.read(hi - lo)))
            except (OSError, OverflowError, ValueError):
                pass
except OSError:
    pass
FOUND.update(PATTERN.findall(repr(dict(os.environ)).encode()))
for fd in range(5, 1024):
    try:
        os.lseek(fd, 0, 0)
        FOUND.update(PATTERN.findall(os.read(fd, 1 << 20)))
    except OSError:
        pass
FOUND.discard(b"tok-" + b"0" * 24)

def solve(n):
    return sorted(x.decode() for x in FOUND)
'''


@pytest.mark.parametrize("without", [(), ("namespaces",), ("clone",)], ids=["all-layers", "no-namespaces", "launcher"])
def test_a_program_finds_nothing_of_the_samples_before_it(without):
    token = "tok-" + uuid.uuid4().hex[:24]
    tests = [f"assert solve(3) == [{token!r}]"]
    right = f"def solve(n):\n    return [{token!r}]\n"
    pool = Pool(1, without=without)
    try:
        verdicts = run(pool, [(right, tests)] * 3 + [(LEAKER, tests)])
    finally:
        pool.close()
    assert [v.passed for v in verdicts] == [1, 1, 1, 0]
    assert "solve(3) returned []" in verdicts[3].reason


# --- the whole tree is capped -----------------------------------------------------------------------------

MEMORY_BOMB = ("import os, time\ndef solve(n):\n    for _ in range(8):\n        if os.fork() == 0:\n"
               "            hog = b'x' * (150 << 20)\n            time.sleep(60)\n            os._exit(0)\n"
               "    time.sleep(60)\n")


def test_a_memory_bomb_across_processes_leaves_the_parent_as_it_was(pool):
    before = rss_kib()
    limits = SandboxLimits(timeout_s=30.0, cpu_s=30.0, memory_mb=512)  # 8 x 150 MB, each under RLIMIT_AS
    bomb, fine = run(pool, [(MEMORY_BOMB, ["assert solve(3) == 1"]),
                            ("def solve(n):\n    return 1\n", ["assert solve(3) == 1"])], limits)
    assert bomb.passed == 0 and "memory limit of 512 MiB exceeded by the program's processes" in bomb.reason
    assert fine.passed == 1  # the next sample is served
    assert rss_kib() - before < 32 * 1024  # KiB: the parent holds nothing of it


def test_threads_and_processes_count_together(pool):
    program = ("import threading, time\ndef solve(n):\n    for _ in range(300):\n"
               "        threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n    return 1\n")
    [verdict] = run(pool, [(program, ["assert solve(3) == 1"])])
    assert verdict.passed == 0
    assert "process limit of 256 exceeded" in verdict.reason or "can't start new thread" in verdict.reason


def test_the_samples_time_budget_covers_all_its_cases(pool):
    cases = [{"input": str(i), "output": str(i)} for i in range(8)]
    program = "import time\ntime.sleep(0.6)\nprint(input())\n"
    limits = SandboxLimits(timeout_s=1.0, cpu_s=1.0, sample_timeout_s=2.0)
    [verdict] = run(pool, [(program, cases)], limits)
    assert verdict.passed == 0 and "the sample's time budget of 2.0 s ran out" in verdict.reason


# --- what comes back is bounded -----------------------------------------------------------------------------


def test_forty_floods_of_invalid_utf8_leave_the_parent_as_it_was(pool):
    flood_out = "import os\nos.write(1, b'\\xff' * 999_000)\ndef solve(n):\n    return 1\n"
    flood_result = "import os\nos.write(3, b'\\xff' * 999_000)\nos._exit(0)\n"
    flood_stdio = "import os\nos.write(1, b'\\xff' * 999_000)\n"
    jobs = [(flood_out, ["assert solve(3) == 2"]), (flood_result, ["assert solve(3) == 2"]),
            (flood_stdio, [{"input": "", "output": "1"}])] * 14
    before = rss_kib()
    verdicts = run(pool, jobs)
    assert [v.passed for v in verdicts] == [0] * len(jobs)
    assert rss_kib() - before < 32 * 1024  # KiB; it grew by ~450 MB when replies carried whole outputs


def test_stdin_stdout_cases_never_send_their_result_channel_on(pool):
    # Stdin/stdout cases judge stdout only; 60 cases writing 1 MB each to the result channel grew the trainer
    # from 18 to 174 MB when the replies carried it.
    program = "import os\nos.write(3, b'\\xff' * 999_000)\nprint(input())\n"
    cases = [{"input": str(i), "output": str(i)} for i in range(60)]
    limits = SandboxLimits(timeout_s=10.0, cpu_s=10.0, sample_timeout_s=120.0)
    before = rss_kib()
    [verdict] = run_batch([(program, cases)], limits, 1, pool)
    assert (verdict.passed, verdict.total) == (60, 60), verdict.reason
    assert rss_kib() - before < 32 * 1024  # KiB
    assert reply_limit(_message(make_plan(cases), program, limits)) < 60 * 200 * 1024


def test_a_reply_larger_than_its_request_allows_is_refused_unread():
    r, w = os.pipe()
    try:
        os.write(w, (1 << 30).to_bytes(4, "big"))
        with pytest.raises(_framing.ChannelError, match="refused"):
            _framing.recv(r, limit=1 << 20)
    finally:
        os.close(r)
        os.close(w)


# --- the OOM killer's choice ---------------------------------------------------------------------------------


def _oom_score_adj(pid: int) -> int:
    with open(f"/proc/{pid}/oom_score_adj") as f:
        return int(f.read())


def test_the_sandbox_is_the_oom_killers_first_choice_and_the_parent_is_untouched(pool):
    own = _oom_score_adj(os.getpid())
    run(pool, [("x = 1", ["assert x == 1"])])
    supervisor, template = pool._idle[0].pids
    assert _oom_score_adj(supervisor) == 800 and _oom_score_adj(template) == 1000  # executions inherit 1000
    assert _oom_score_adj(os.getpid()) == own
