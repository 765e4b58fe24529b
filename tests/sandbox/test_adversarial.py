"""Hostile programs: each gets no credit and leaves the host untouched. One property per test.

The tests ask for values the programs cannot compute (``solve(3) == 271828``), so the only way to score is
to cheat. Host effects are checked from outside: canary files, the environment, the network, processes.
"""

from __future__ import annotations

import os
import uuid

import pytest

from grpo_rlvr.sandbox import SandboxLimits, isolation_layers, run_unit_tests

from . import procs

TESTS = ["assert solve(3) == 271828", "assert solve(4) == 314159"]
FAST = SandboxLimits(timeout_s=1.0, cpu_s=2.0)


def run(program: str, tests=TESTS, limits: SandboxLimits = FAST):
    verdict = run_unit_tests(program, tests, limits=limits)
    assert verdict.passed == 0, verdict
    return verdict


def sandbox_processes() -> list[int]:
    """Processes left under this test run's own sandbox supervisors, but their templates (none when no
    execution is in flight). Other sandboxes on a shared machine are not counted."""
    from grpo_rlvr.sandbox.isolation import pool as _pool

    pool = _pool._shared
    found = []
    for supervisor in pool._idle if pool is not None else []:
        supervisor, template = supervisor.pids
        todo = [supervisor]
        while todo:
            pid = todo.pop()
            try:
                tasks = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for task in tasks:
                try:
                    with open(f"/proc/{pid}/task/{task}/children") as f:
                        kids = [int(k) for k in f.read().split()]
                except OSError:
                    continue
                found += [k for k in kids if k != template]
                todo += [k for k in kids if k != template]
    return found


def canary_path() -> str:
    return f"/tmp/grpo-canary-{uuid.uuid4().hex}"


# --- early exits -----------------------------------------------------------------------------------------


def test_sys_exit_zero_at_load():
    run("import sys\nsys.exit(0)\ndef solve(n):\n    return 0\n")


def test_os_exit_zero_at_load():
    run("import os\nos._exit(0)\n")


def test_os_exit_zero_inside_the_function():
    verdict = run("import os\ndef solve(n):\n    os._exit(0)\n")
    assert "exited with code 0" in verdict.reason


def test_system_exit_raised_from_atexit():
    run("import atexit, sys\natexit.register(lambda: sys.exit(0))\natexit.register(lambda: print('PASSED'))\n"
        "def solve(n):\n    raise SystemExit(0)\n")


# --- objects that claim equality ----------------------------------------------------------------------------


def test_always_equal_object():
    verdict = run("class Eq:\n    def __eq__(self, other):\n        return True\n    __hash__ = object.__hash__\n"
                  "def solve(n):\n    return Eq()\n")
    assert "not plain data" in verdict.details[0]


def test_int_subclass_with_patched_eq():
    # It crosses as the int it holds (read with int's own methods): its __eq__ decides nothing here.
    verdict = run("class I(int):\n    def __eq__(self, other):\n        return True\n    __hash__ = int.__hash__\n"
                  "def solve(n):\n    return I(0)\n")
    assert "returned 0 (a I, compared as a int)" in verdict.details[0]


def test_str_subclass_and_container_of_impostors():
    run("class S(str):\n    __eq__ = lambda self, o: True\n    __hash__ = str.__hash__\n"
        "def solve(n):\n    return [S('x')]\n", tests=["assert solve(3) == ['271828']"])


# --- patched builtins, tracing, the runner itself -----------------------------------------------------------


def test_patched_assertion_error_and_builtins():
    run("import builtins\nbuiltins.AssertionError = type('Nope', (Exception,), {})\n"
        "builtins.isinstance = lambda *a: True\nbuiltins.type = lambda *a: int\nbuiltins.repr = lambda x: '271828'\n"
        "def solve(n):\n    return None\n")


def test_settrace_skipping_lines():
    run("import sys\ndef tracer(frame, event, arg):\n    frame.f_lineno = frame.f_lineno\n    return tracer\n"
        "sys.settrace(tracer)\nsys.setprofile(lambda *a: None)\ndef solve(n):\n    return n\n")


def test_monkeypatched_encoder_sends_a_wildcard():
    verdict = run("import sys\nchild = sys.modules['grpo_rlvr.sandbox.isolation.child']\n"
                  "child.encode_as_python = lambda value, depth=0: ['anything']\ndef solve(n):\n    return 0\n")
    assert "tampered" in verdict.reason


def test_monkeypatched_encoder_claims_true_for_weak_checks():
    # A weak (in-sandbox) check still needs a truthy plain value; a forged one must still be well-formed.
    run("import sys\nchild = sys.modules['grpo_rlvr.sandbox.isolation.child']\nchild.encode_as_python = lambda v, d=0: ['b', 1]\n"
        "def solve(n):\n    return 0\n", tests=["assert solve(3) > 271828"])


# --- fake success markers and forged results ----------------------------------------------------------------


def test_fake_success_prints_on_stdout():
    run("print('PASSED')\nprint('ok')\nprint('2/2 passed')\n"
        "print('{\"k\": \"load\"}')\nprint('{\"k\": \"r\", \"i\": 0, \"v\": [\"b\", true]}')\n"
        "def solve(n):\n    print('test passed')\n    return None\n")


def test_forged_frames_on_the_result_channel():
    verdict = run("import os\nos.write(3, b'{\"k\": \"load\"}\\n')\n"
                  "for i in range(2):\n    os.write(3, ('{\"k\": \"r\", \"i\": %d, \"v\": [\"i\", \"0x1\"]}\\n' % i).encode())\n"
                  "def solve(n):\n    return 1\n")
    assert "tampered" in verdict.reason


def test_writing_to_every_descriptor():
    run("import os\nfor fd in range(64):\n    try:\n        os.write(fd, b'\\n{\"k\": \"r\", \"i\": 0}\\nPASSED\\n')\n"
        "    except OSError:\n        pass\ndef solve(n):\n    return 0\n")


def test_closing_the_result_channel():
    verdict = run("import os\nos.close(3)\ndef solve(n):\n    return 0\n")
    assert "exited" in verdict.reason or "not run" in verdict.reason or "load" in verdict.reason


def test_deeply_nested_forged_frame_does_not_crash_the_parent():
    run("import os\nos.write(3, b'{\"k\": \"load\"}\\n' + b'[' * 100000 + b'\\n')\ndef solve(n):\n    return 0\n")


# --- reading what it should not --------------------------------------------------------------------------


def test_reading_the_test_file_for_expected_values():
    here = os.path.abspath(__file__)
    verdict = run(f"import re\ndef solve(n):\n    text = open({here!r}).read()\n"
                  "    return int(re.findall(r'solve\\(%d\\) == (\\d+)' % n, text)[0])\n")
    assert "FileNotFoundError" in verdict.details[0] or "PermissionError" in verdict.details[0]


def test_reading_expected_values_from_a_temp_file(tmp_path):
    leak = tmp_path / "expected.txt"
    leak.write_text("271828 314159")
    run(f"def solve(n):\n    return int(open({str(leak)!r}).read().split()[n - 3])\n")


def test_reading_own_memory_and_proc_self():
    run("import os, re\ndef solve(n):\n    found = []\n"
        "    for name in ('cmdline', 'environ', 'maps'):\n        found.append(open('/proc/self/' + name, 'rb').read())\n"
        "    mem = open('/proc/self/mem', 'rb')\n    for line in open('/proc/self/maps'):\n"
        "        lo, hi = (int(x, 16) for x in line.split()[0].split('-'))\n        try:\n"
        "            mem.seek(lo)\n            found.append(mem.read(min(hi - lo, 1 << 20)))\n        except OSError:\n"
        "            pass\n    blob = b''.join(found)\n"
        "    nums = re.findall(rb'== (\\d{6})', blob)\n    return int(nums[n - 3]) if len(nums) > n - 3 else -1\n")


def test_reading_parent_memory_and_environ(monkeypatch):
    monkeypatch.setenv("GRPO_TEST_SECRET", "hunter2-" + uuid.uuid4().hex)
    parent = os.getpid()
    verdict = run(f"import os\ndef solve(n):\n    out = []\n    for pid in ({parent}, os.getppid(), 1):\n"
                  "        for name in ('environ', 'mem', 'cmdline'):\n            try:\n"
                  "                with open(f'/proc/{pid}/{name}', 'rb') as f:\n                    out.append(f.read(4096))\n"
                  "            except OSError as e:\n                out.append(repr(e).encode())\n    return b''.join(out)\n")
    assert os.environ["GRPO_TEST_SECRET"] not in verdict.reason + "".join(verdict.details)


def test_environment_secret_is_not_visible(monkeypatch):
    secret = "hunter2-" + uuid.uuid4().hex
    monkeypatch.setenv("GRPO_TEST_SECRET", secret)
    from grpo_rlvr.sandbox._run import run_batch
    from grpo_rlvr.sandbox.isolation.pool import Pool

    pool = Pool(1)  # a fresh supervisor, started while the secret is in our environment
    try:
        program = "import os\ndef solve(n):\n    return os.environ.get('GRPO_TEST_SECRET', 'absent')\n"
        [verdict] = run_batch([(program, [f"assert solve(3) == {secret!r}"])], FAST, 1, pool)
    finally:
        pool.close()
    assert verdict.passed == 0 and "returned 'absent'" in verdict.details[0]


# --- resource bombs --------------------------------------------------------------------------------------


def test_fork_bomb(layers):
    run("import os\ndef solve(n):\n    while True:\n        try:\n            os.fork()\n        except OSError:\n"
        "            pass\n")
    assert sandbox_processes() == []


def test_memory_bomb():
    # A generous wall limit, so the address-space limit (not the clock) is what stops it even on a loaded machine.
    verdict = run("def solve(n):\n    hog = []\n    while True:\n        hog.append(bytearray(10 ** 7))\n",
                  limits=SandboxLimits(timeout_s=30, cpu_s=30, memory_mb=512))
    assert "MemoryError" in verdict.details[0]


def test_recursion_bomb():
    # Depending on the Python version this ends in RecursionError, MemoryError, a C-stack SIGSEGV or the clock.
    run("import sys\nsys.setrecursionlimit(10 ** 8)\ndef solve(n):\n    return solve(n + 1)\n")
    assert sandbox_processes() == []


def test_infinite_loop_ignoring_sigterm():
    verdict = run("import signal\nfor s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGXCPU):\n"
                  "    signal.signal(s, signal.SIG_IGN)\nwhile True:\n    pass\n")
    assert verdict.timed_out or "CPU limit" in verdict.reason
    assert sandbox_processes() == []


def test_sleeping_loop_hits_the_wall_clock():
    verdict = run("import time\ndef solve(n):\n    while True:\n        time.sleep(0.01)\n")
    assert verdict.timed_out


def test_output_flood():
    verdict = run("import sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n")
    assert verdict.reason == "output limit exceeded"


def test_result_channel_flood():
    run("import os\ndef solve(n):\n    while True:\n        os.write(3, b'x' * 65536)\n")


def test_setrlimit_cannot_be_raised():
    program = ("import resource\ndef raise_limits():\n    try:\n"
               "        resource.setrlimit(resource.RLIMIT_CPU, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))\n"
               "        resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))\n"
               "        return 'raised'\n    except (ValueError, OSError):\n        return 'denied'\n")
    verdict = run(program, tests=["assert raise_limits() == 'raised'"])
    assert "returned 'denied'" in verdict.details[0]


# --- the host: files, network, processes ----------------------------------------------------------------


def test_file_writes_outside_the_sandbox(tmp_path):
    targets = [canary_path(), str(tmp_path / "written"), os.path.join(os.path.dirname(__file__), "written.txt")]
    run(f"def solve(n):\n    for path in {targets!r}:\n        try:\n            open(path, 'w').write('pwned')\n"
        "        except OSError:\n            pass\n    return 0\n")
    assert not any(os.path.exists(p) for p in targets)


def test_deleting_a_file_outside_the_sandbox(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    run(f"import os, shutil\ndef solve(n):\n    for f in (os.remove, shutil.rmtree):\n        try:\n"
        f"            f({str(victim)!r})\n        except OSError:\n            pass\n"
        f"    shutil.rmtree({str(tmp_path)!r}, ignore_errors=True)\n    return 0\n")
    assert victim.read_text() == "keep me"


def test_killing_the_parent_and_everything_else():
    run("import os, signal\ndef solve(n):\n    for target in (os.getppid(), 1, -1, 0):\n        try:\n"
        "            os.kill(target, signal.SIGKILL)\n        except OSError:\n            pass\n"
        "    for pid in range(2, 5000):\n        try:\n            os.kill(pid, signal.SIGKILL)\n        except OSError:\n"
        "            pass\n    return 0\n")
    assert run_unit_tests("def solve(n):\n    return n\n", ["assert solve(3) == 3"]).passed == 1  # still works


@pytest.mark.parametrize("without", [(), ("namespaces",), ("namespaces", "clone")],
                         ids=["pid-namespace", "subreaper-sweep", "launcher-and-sweep"])
def test_double_forked_daemon_does_not_survive(without):
    # The daemon names itself with a token of this test's own and is known to run before solve() returns, so
    # "none left" means the sweep removed it, not that it had not started yet. The sweep is done before the
    # verdict comes back (PID namespace teardown, or the supervisor's subreaper sweep); the wait is a bound
    # for /proc to catch up, not a fixed sleep.
    from grpo_rlvr.sandbox._run import run_batch
    from grpo_rlvr.sandbox.isolation.pool import Pool

    name = procs.token()
    pool = Pool(1, without=without)
    program = ("import os, time\ndef solve(n):\n    r, w = os.pipe()\n    if os.fork() == 0:\n        os.setsid()\n"
               f"        if os.fork() == 0:\n            {procs.name_self(name)}\n"
               "            os.write(w, b'up')\n            time.sleep(60)\n"
               "        os._exit(0)\n    os.read(r, 2)\n    return 0\n")
    try:
        [verdict] = run_batch([(program, TESTS)], FAST, 1, pool)
    finally:
        pool.close()
    assert verdict.passed == 0 and "solve(3) returned 0" in verdict.reason  # the daemon was up when it returned
    assert procs.wait_until_gone(name) == []


def test_threads_that_outlive_main():
    run("import os, threading, time\ndef late():\n    time.sleep(0.2)\n    os.write(3, b'{\"k\": \"r\", \"i\": 1}\\n')\n"
        "threading.Thread(target=late).start()\ndef solve(n):\n    return 0\n")
    assert sandbox_processes() == []


def test_ctypes_setuid_root_and_chroot_escape():
    program = ("import ctypes, os\ndef escape():\n    libc = ctypes.CDLL(None)\n    libc.setuid(0)\n    libc.setgid(0)\n"
               "    try:\n        os.chroot('..')\n    except OSError:\n        pass\n"
               "    return 'root' if os.getuid() == 0 else 'user'\n")
    layers = isolation_layers()
    if "uid_drop" not in layers:
        pytest.skip("not root: there is no uid to drop")
    verdict = run(program, tests=["assert escape() == 'root'"])
    assert "returned 'user'" in verdict.details[0]


def test_huge_int_result_is_judged_not_crashing():
    verdict = run("def solve(n):\n    return 7 ** 300000\n")
    assert "bits" in verdict.details[0]


def test_expected_values_are_nowhere_in_the_child():
    # Scans every object the child can reach (gc containers, all frames) for the expected value of test 1.
    # (The needle is built at run time: a constant like '27182' + '8' would be folded into the code object.)
    program = (
        "import gc, sys\n"
        "def solve(n):\n    return 0\n"
        "def leak():\n"
        "    needle_str = ''.join(map(str, [2, 7, 1, 8, 2, 8]))\n    needle_int = int(needle_str)\n"
        "    frame = sys._getframe()\n    while frame is not None:\n"
        "        for v in list(frame.f_locals.values()) + list(frame.f_globals.values()):\n"
        "            if (type(v) is int and v == needle_int and v is not needle_int) or "
        "(type(v) is str and needle_str in v and v is not needle_str):\n"
        "                return True\n        frame = frame.f_back\n"
        "    for obj in gc.get_objects():\n"
        "        items = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, (list, tuple, set)) else ()\n"
        "        for v in items:\n"
        "            if (type(v) is int and v == needle_int and v is not needle_int) or "
        "(type(v) is str and needle_str in v and v is not needle_str):\n"
        "                return True\n"
        "    return False\n"
    )
    verdict = run_unit_tests(program, ["assert solve(3) == 271828", "assert leak() is False"], limits=FAST)
    assert verdict.details == ("test 1 failed: solve(3) returned 0, expected 271828", "test 2 passed")
