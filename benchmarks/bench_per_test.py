"""Benchmark: what per-test isolation costs. The same asserts given to the sandbox as an assert list (one process runs
them all in order) and as pytest functions, one ``test_*`` per assert (the test bodies run one after the other in
one process forked from the loaded program, the body runner), on the finishing programs of ``bench_unit_tests``'s
corpus (right and wrong ones).

Run: ``python benchmarks/bench_per_test.py [--programs 200] [--workers N] [--rounds 3]``

Measured: CPU seconds of the whole run, this process (judging) and each supervisor's tree (the supervisor, its
executions and their test bodies: ``utime + stime + cutime + cstime`` of the supervisor before and after, as
``/proc`` counts them, in 10 ms ticks) together, for each format, and the same counted exactly (this process's
``getrusage``, each supervisor's ``schedstat``, each execution's ``wait4`` as its report gives it); plans are made before the clock starts (in training a row's plan
is cached for its whole group). Printed: CPU and wall time per format, the ratio pytest / asserts of CPU (the
issue's bound: 1.5x), and whether both formats agree on every program's verdict. Rounds alternate the formats and
the median of each is kept. Also printed: the floors of that ratio with a fresh process per test body (the design
before the body runner) and with one runner per program, the CPU of a bare ``fork()`` + ``_exit`` + ``waitpid`` of a
loaded program in the sandbox (measured there, in the same rounds) once per fork, over the asserts' CPU: what no
change to the test bodies' own work can go below.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_unit_tests import as_format, build_corpus  # noqa: E402
from grpo_rlvr.sandbox import SandboxLimits, plan_tests  # noqa: E402
from grpo_rlvr.sandbox._run import run_batch, run_code_in  # noqa: E402
from grpo_rlvr.sandbox.isolation.pool import Pool  # noqa: E402

_TICK = os.sysconf("SC_CLK_TCK")
# Run in the sandbox as a program: the CPU (its own and its children's) of one bare fork of it, in ms.
_BARE_FORK = """import os, resource
def cpu():
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
start = cpu()
for _ in range(200):
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
print((cpu() - start) / 200 * 1000)
"""


def tree_cpu(pool: Pool) -> float:
    """CPU seconds of every supervisor of ``pool`` and of what it has reaped (its executions and their bodies)."""
    total = 0.0
    for supervisor in list(pool._idle):
        fields = Path(f"/proc/{supervisor.pids[0]}/stat").read_text().rsplit(")", 1)[1].split()
        total += sum(int(v) for v in fields[11:15]) / _TICK  # utime stime cutime cstime
    return total


def exact_cpu(pool: Pool) -> float:
    """CPU seconds the supervisors of ``pool`` have run, exactly (``/proc/PID/schedstat``, in ns; each is one thread)."""
    return sum(int(Path(f"/proc/{s.pids[0]}/schedstat").read_text().split()[0]) for s in list(pool._idle)) / 1e9


class Executions:
    """Wraps ``pool.run``: adds up each execution's CPU as its supervisor reaped it (``wait4``: exact, its test bodies'
    included)."""

    def __init__(self, pool: Pool):
        self.cpu_s, self._run = 0.0, pool.run
        pool.run = self

    def __call__(self, message: dict, *args, **kwargs) -> dict:
        reply = self._run(message, *args, **kwargs)
        self.cpu_s += sum(r.get("cpu_s", 0.0) for r in reply.get("reports", []))
        return reply


def measure(pool: Pool, jobs: list, workers: int, executions: Executions) -> tuple[float, float, float, list]:
    """(CPU seconds in ticks, CPU seconds counted exactly, wall seconds, verdicts) of one batch."""
    limits = SandboxLimits(timeout_s=5.0, cpu_s=5.0)
    before_self, before_tree, start = resource.getrusage(resource.RUSAGE_SELF), tree_cpu(pool), time.perf_counter()
    before_exact, before_executions = exact_cpu(pool), executions.cpu_s
    verdicts = run_batch(jobs, limits, workers, pool)
    wall = time.perf_counter() - start
    after_self, after_tree = resource.getrusage(resource.RUSAGE_SELF), tree_cpu(pool)
    own = (after_self.ru_utime + after_self.ru_stime) - (before_self.ru_utime + before_self.ru_stime)
    exact = own + exact_cpu(pool) - before_exact + executions.cpu_s - before_executions
    return own + after_tree - before_tree, exact, wall, [(v.passed, v.total) for v in verdicts]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", type=int, default=200)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    corpus = [c for c in build_corpus(args.programs) if c["kind"] != "timeout"]
    jobs = {fmt: [as_format(c, fmt) for c in corpus] for fmt in ("asserts", "pytest")}
    for fmt_jobs in jobs.values():  # planned outside the clock, as a GRPO group reuses its row's plan
        for _, tests, entry in fmt_jobs:
            plan_tests(tests if isinstance(tests, str) else list(tests), entry)
    pool = Pool(args.workers)
    executions = Executions(pool)
    try:
        measure(pool, jobs["asserts"][: args.workers], args.workers, executions)  # supervisors started off the clock
        cpu: dict[str, list[float]] = {"asserts": [], "pytest": []}
        exact: dict[str, list[float]] = {"asserts": [], "pytest": []}
        wall: dict[str, list[float]] = {"asserts": [], "pytest": []}
        verdicts, bare_fork_ms = {}, []
        for _ in range(args.rounds):
            for fmt in ("asserts", "pytest"):
                c, e, w, verdicts[fmt] = measure(pool, jobs[fmt], args.workers, executions)
                cpu[fmt].append(c)
                exact[fmt].append(e)
                wall[fmt].append(w)
            bare_fork_ms.append(float(run_code_in(pool, _BARE_FORK, limits=SandboxLimits(timeout_s=60, cpu_s=60)).stdout))
    finally:
        pool.close()
    bodies = [_bodies(jobs["pytest"][i][1]) for i in range(len(corpus))]
    per_body = sum(max(0, b - 1) for b in bodies)  # a fork per body, the last in the loaded program (the old design)
    runners = sum(b > 0 for b in bodies)  # one body runner per program with bodies (none of them ends it early)
    tests = sum(len(c["tests"]) for c in corpus)
    print(f"{len(corpus)} finishing programs ({sum(c['kind'] == 'correct' for c in corpus)} right), {tests} asserts; "
          f"{args.workers} workers; {os.cpu_count()} CPUs; median of {args.rounds} rounds")
    for fmt in ("asserts", "pytest"):
        c, w = statistics.median(cpu[fmt]), statistics.median(wall[fmt])
        print(f"  {fmt:8s} CPU {c:6.2f} s ({c / len(corpus) * 1000:.2f} ms per program)  wall {w:6.2f} s")
    ratio = statistics.median(cpu["pytest"]) / statistics.median(cpu["asserts"])
    print(f"per-test isolation: pytest functions cost {ratio:.2f}x the CPU of the same asserts as a list "
          f"(bound 1.5x)")
    exact_ratio = statistics.median(exact["pytest"]) / statistics.median(exact["asserts"])
    print(f"  counted exactly (this process's getrusage, the supervisors' schedstat, each execution's wait4, not in "
          f"10 ms ticks): {exact_ratio:.2f}x ({statistics.median(exact['asserts']) / len(corpus) * 1000:.2f} against "
          f"{statistics.median(exact['pytest']) / len(corpus) * 1000:.2f} ms per program)")
    fork_ms, asserts_cpu = statistics.median(bare_fork_ms), statistics.median(cpu["asserts"])
    print(f"floors: a bare fork+exit+wait of a loaded program costs {fork_ms:.2f} ms CPU here; a fresh process per "
          f"body but each program's last ({per_body} forks) -> {(asserts_cpu + per_body * fork_ms / 1000) / asserts_cpu:.2f}x; "
          f"one body runner per program ({runners} forks) -> {(asserts_cpu + runners * fork_ms / 1000) / asserts_cpu:.2f}x; "
          f"load average {os.getloadavg()[0]:.2f}")
    agree = sum(a == p for a, p in zip(verdicts["asserts"], verdicts["pytest"], strict=True))
    print(f"verdicts agree (passed, total) on {agree}/{len(corpus)} programs")
    return 0 if agree == len(corpus) else 1


def _bodies(tests: str) -> int:
    """Test bodies the body runner runs: every unit of the plan but the loaded program's (0)."""
    return len({unit for unit, _, _ in plan_tests(tests).deliveries} - {0})


if __name__ == "__main__":
    sys.exit(main())
