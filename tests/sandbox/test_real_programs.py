"""Right programs that real tasks hold, each first run in plain Python (a subprocess of this interpreter, or pytest's
own semantics), then in the sandbox: a script's ``sys.argv``, ``__file__`` and ``sys.executable``, an expected
output past the old 1 MB cap, the output limit as configured, ``spawn`` and ``Manager`` (script and tests), 100
threads, a test's ``random.seed``, NaN identity in containers, a trainer started through a symlinked venv."""

from __future__ import annotations

import math
import os
import random
import subprocess
import sys
import textwrap

import pytest

from grpo_rlvr.sandbox import SandboxLimits, run_code, run_unit_tests

from .plain_runs import pytest_tests

SCRIPT = """import os, sys
print(sys.argv == [__file__], os.path.basename(__file__))
print(open(__file__).read().splitlines()[0])
"""

SPAWN = textwrap.dedent("""\
    import multiprocessing as mp


    def square(x):
        return x * x


    def squares(n):
        with mp.get_context("spawn").Pool(2) as pool:
            return pool.map(square, range(n))


    def shared():
        with mp.Manager() as manager:
            d = manager.dict()
            p = mp.Process(target=_fill, args=(d,))
            p.start()
            p.join()
            return dict(d)


    def _fill(d):
        d["child"] = 1
    """)
MAIN = 'if __name__ == "__main__":\n    print(squares(5), shared())\n'

THREADS = textwrap.dedent("""\
    import threading


    def count(n):
        done = []
        lock = threading.Lock()
        barrier = threading.Barrier(n)

        def work():
            barrier.wait()
            with lock:
                done.append(1)
        threads = [threading.Thread(target=work) for _ in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return len(done)
    """)


def plain(code: str, tmp_path, stdin: str = "") -> str:
    """What ``python main.py`` prints, run by this interpreter in a fresh directory."""
    path = tmp_path / "main.py"
    path.write_text(code)
    done = subprocess.run([sys.executable, str(path)], input=stdin, capture_output=True, text=True, cwd=tmp_path,
                          timeout=60, check=True)
    return done.stdout


def test_a_script_gets_its_argv_file_and_a_working_interpreter(tmp_path):
    code = SCRIPT + ("import subprocess\nrun = subprocess.run([sys.executable, '-c', 'import numpy; print(numpy.int64(6) * 7)'],"
                     " capture_output=True, text=True)\nprint(run.stdout.strip(), run.returncode)\n")
    expected = "True main.py\nimport os, sys\n42 0\n"
    assert plain(code, tmp_path) == expected
    run = run_code(code)
    assert (run.stdout, run.reason) == (expected, "")
    assert run_unit_tests(code, [{"input": "", "output": expected}]).passed == 1


def test_an_expected_output_past_a_megabyte_fits_and_the_limit_is_configurable(tmp_path):
    code = "n = int(input())\nfor i in range(n):\n    print(i * 7919 % 1000003)\n"
    expected = plain(code, tmp_path, "200000\n")
    assert len(expected) > 1_300_000
    tight = SandboxLimits(max_output_bytes=100_000)  # below the expected output: still room for it
    verdict = run_unit_tests(code, [{"input": "200000\n", "output": expected}], limits=tight)
    assert (verdict.passed, verdict.total) == (1, 1), verdict.reason
    flood = "print('x' * 3_000_000)"
    assert run_code(flood, limits=SandboxLimits(max_output_bytes=1_000_000)).reason == "output limit exceeded"
    assert len(run_code(flood, limits=SandboxLimits(max_output_bytes=4_000_000)).stdout) == 3_000_001


def test_spawn_and_a_manager_work_in_a_script_and_under_tests(tmp_path, layers):
    """With the jail both work as in plain Python. Without it (a default container) a spawn pool needs a POSIX
    semaphore, and the only /dev/shm is shared by every program: the documented PermissionError, never a pass."""
    expected = "[0, 1, 4, 9, 16] {'child': 1}\n"
    assert plain(SPAWN + MAIN, tmp_path) == expected
    run = run_code(SPAWN + MAIN, limits=SandboxLimits(timeout_s=30.0, cpu_s=30.0))
    tests = ["assert squares(4) == [0, 1, 4, 9]", "assert shared() == {'child': 1}"]
    verdict = run_unit_tests(SPAWN, tests, limits=SandboxLimits(timeout_s=30.0, cpu_s=30.0))
    if "fs_jail" in layers:
        assert (run.stdout, run.reason) == (expected, ""), run.stderr
        assert (verdict.passed, verdict.total) == (2, 2), verdict.reason
    else:
        assert run.stdout == "" and "PermissionError" in run.stderr, run.stderr
        assert verdict.passed == 0 and verdict.total == 2, verdict.reason


def test_a_hundred_threads_are_below_the_limit_and_a_flood_is_not(tmp_path):
    assert plain(THREADS + "print(count(100))\n", tmp_path) == "100\n"
    assert run_unit_tests(THREADS, ["assert count(100) == 100"]).passed == 1
    verdict = run_unit_tests(THREADS, ["assert count(1000) == 1000"])
    assert verdict.passed == 0 and ("process limit" in verdict.reason or "can't start" in verdict.reason), \
        verdict.reason


def _dealt(seed: int) -> list:
    random.seed(seed)
    xs = list(range(8))
    random.shuffle(xs)
    return xs


PROGRAM_DEAL = "import random\ndef deal(xs):\n    xs = list(xs)\n    random.shuffle(xs)\n    return xs\n"


@pytest.mark.parametrize("tests", [
    "import random\n\n\ndef test_deal():\n    random.seed(3)\n    assert deal(range(8)) == {expected!r}\n",
    "import random\nrandom.seed(3)\n\n\ndef test_deal():\n    assert deal(range(8)) == {expected!r}\n",
    "import random\nimport unittest\n\n\nclass T(unittest.TestCase):\n    def setUp(self):\n        random.seed(3)\n\n"
    "    def test_deal(self):\n        self.assertEqual(deal(range(8)), {expected!r})\n",
    ["random.seed(3)", "assert deal(range(8)) == {expected!r}"],
], ids=["in-the-test", "module-level", "setUp", "assert-list"])
def test_a_tests_seed_seeds_the_programs_generator(tests, tmp_path):
    expected = _dealt(3)
    tests = [t.format(expected=expected) for t in tests] if isinstance(tests, list) else tests.format(expected=expected)
    if isinstance(tests, str):  # plain pytest agrees
        (tmp_path / "deal.py").write_text(PROGRAM_DEAL)
        (tmp_path / "test_deal.py").write_text("from deal import deal\n" + tests)
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                              capture_output=True, text=True, cwd=tmp_path, timeout=120)
        assert done.returncode == 0, done.stdout
    verdict = run_unit_tests(PROGRAM_DEAL, tests)
    assert (verdict.passed, verdict.total) == (1, 1), verdict.reason
    wrong = run_unit_tests(PROGRAM_DEAL.replace("random.shuffle(xs)", "random.shuffle(xs)\n    xs.reverse()"), tests)
    assert wrong.passed == 0


def test_nan_keeps_its_identity_in_containers():
    program = ("import math\ndef same():\n    return [math.nan]\ndef fresh():\n    return [float('nan')]\n"
               "def keyed():\n    return {'x': math.nan}\n")
    tests = ["assert same() == [math.nan]", "assert fresh() != [math.nan]", "assert keyed() == {'x': math.nan}",
             "assert math.nan in same()", "assert same() != [float('nan')]"]
    scope = {"math": math}
    exec(program, scope)  # noqa: S102 - our own program, checked in plain Python first
    for test in tests:
        exec(test, scope)  # noqa: S102
    verdict = run_unit_tests(program, tests)
    assert (verdict.passed, verdict.total, verdict.weak) == (5, 5, 0), verdict.reason


def test_a_trainer_started_through_a_symlinked_venv_gives_programs_its_site_packages(tmp_path):
    """The venv reached through a symlink (``/home/u/venv -> /data/venv``): the interpreter names its paths by the
    link, and the jail shows them by that name too, so numpy imports, in the program and in its subprocess."""
    venv = os.path.dirname(os.path.dirname(os.path.abspath(sys.executable)))
    if not os.path.isfile(os.path.join(venv, "pyvenv.cfg")):
        pytest.skip("this interpreter is not a venv's")
    link = tmp_path / "venv-link"
    link.symlink_to(venv)
    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    check = ("import sys\nfrom grpo_rlvr.sandbox import run_unit_tests\n"
             "program = 'import numpy, subprocess, sys\\ndef twice(x):\\n    return numpy.int64(x) * 2\\n"
             "def child():\\n    return subprocess.run([sys.executable, \"-c\", \"import numpy; print(1)\"], "
             "capture_output=True, text=True).stdout'\n"
             "v = run_unit_tests(program, ['assert twice(21) == 42', \"assert child() == '1\\\\n'\"])\n"
             "print(sys.prefix, v.passed, v.total, v.reason)\n")
    env = {**os.environ, "PYTHONPATH": os.path.join(src, "src"), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([str(link / "bin" / "python"), "-c", check], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    prefix, passed, total = done.stdout.split()[:3]
    assert prefix == str(link)  # the interpreter did name its paths by the link
    assert (passed, total) == ("2", "2"), done.stdout


def test_a_named_seed_seeds_the_programs_generator_too():
    expected = _dealt(3)
    tests = f"import random\nSEED = 3\n\n\ndef test_deal():\n    random.seed(SEED)\n    assert deal(range(8)) == {expected!r}\n"
    verdict = run_unit_tests(PROGRAM_DEAL, tests)
    assert (verdict.passed, verdict.total) == (1, 1), verdict.reason


def test_a_module_level_seed_carries_from_one_test_body_to_the_next(tmp_path):
    """As under pytest: the bodies run one after the other in one process, so the second test draws on from where
    the first left the generator (the first starts from the seed the loaded program set)."""
    first = _dealt(3)
    xs = list(range(8))
    random.shuffle(xs)  # the generator as the first deal left it
    tests = (f"import random\nrandom.seed(3)\n\n\ndef test_one():\n    assert deal(range(8)) == {first!r}\n\n\n"
             f"def test_two():\n    assert deal(range(8)) == {xs!r}\n")
    assert first != xs and pytest_tests({"p": (PROGRAM_DEAL, tests)}, tmp_path)["p"] == {"test_one": True,
                                                                                        "test_two": True}
    verdict = run_unit_tests(PROGRAM_DEAL, tests)
    assert (verdict.passed, verdict.total) == (2, 2), verdict.reason


def test_a_seed_set_otherwise_leaves_the_programs_generator_alone():
    """Not covered (documented): ``random.setstate`` of a state the test computed is not repeated in the sandbox."""
    expected = _dealt(3)
    program = PROGRAM_DEAL + "import random as _r\n_r.seed(11)\n"  # the program's own seed: deterministic here
    tests = (f"import random\nSTATE = random.Random(3).getstate()\n\n\ndef test_deal():\n"
             f"    random.setstate(STATE)\n    assert deal(range(8)) == {expected!r}\n")
    scope: dict = {}
    exec(program + tests.replace("def test_deal", "def check"), scope)  # noqa: S102 - plain Python: it passes
    scope["check"]()
    verdict = run_unit_tests(program, tests)
    assert verdict.passed == 0, verdict.reason


def test_every_call_of_an_assert_runs_even_past_a_short_circuit():
    """Not covered (documented): Python skips ``count()`` in ``ok() or count() == 5``; the sandbox evaluates every
    call into the program in an assert, so the count has moved when the next assert reads it."""
    program = "calls = []\ndef ok():\n    return True\ndef count():\n    calls.append(1)\n    return len(calls)\n"
    tests = ["assert ok() or count() == 5", "assert count() == 1"]
    scope: dict = {}
    exec(program, scope)  # noqa: S102 - plain Python: both pass
    for test in tests:
        exec(test, scope)  # noqa: S102
    verdict = run_unit_tests(program, tests)
    assert (verdict.passed, verdict.total) == (1, 2), verdict.reason
    assert "count() returned 2" in verdict.reason, verdict.reason


def test_without_the_jail_disk_is_capped_per_file_only():
    """Not covered (documented): without the jail's size-capped tmpfs, a file past 16 MiB fails (``RLIMIT_FSIZE``)
    but many files under it do not."""
    from grpo_rlvr.sandbox._run import run_batch
    from grpo_rlvr.sandbox.isolation.pool import Pool

    program = ("def write(n, mib):\n    try:\n        for i in range(n):\n"
               "            with open(f'f{i}', 'wb') as f:\n                f.write(b'x' * (mib << 20))\n"
               "    except OSError:\n        return 'capped'\n    return 'written'\n")
    pool = Pool(1, without=("namespaces",))
    try:
        [verdict] = run_batch([(program, ["assert write(1, 20) == 'capped'", "assert write(6, 10) == 'written'"])],
                              SandboxLimits(memory_mb=256), 1, pool, allow_degraded=True)
    finally:
        pool.close()
    assert (verdict.passed, verdict.total) == (2, 2), verdict.reason
