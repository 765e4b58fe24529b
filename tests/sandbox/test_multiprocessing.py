"""``multiprocessing`` in the sandbox: with the jail, each execution has a ``/dev/shm`` of its own (on its own
tmpfs, gone with it), so ``Pool``, ``Queue``, ``Lock``, ``Value`` and ``ProcessPoolExecutor`` work, and fork is the
default start method on every Python (3.14's forkserver needs a bound UNIX socket, which the filter denies). Without
the jail (a default container) there is no private ``/dev/shm`` to give: processes, pipes and
``multiprocessing.Process``/``Pipe`` work; what needs a POSIX semaphore (``Pool``, ``Queue``, ``Lock``...) fails
with PermissionError, as the shared ``/dev/shm`` is out of reach."""

from __future__ import annotations

import pytest

from grpo_rlvr.sandbox import SandboxLimits, run_unit_tests
from grpo_rlvr.sandbox._run import run_batch
from grpo_rlvr.sandbox.isolation.pool import Pool

LIMITS = SandboxLimits(timeout_s=20.0, cpu_s=20.0)
PROGRAM = """import multiprocessing as mp
from concurrent.futures import ProcessPoolExecutor


def square(x):
    return x * x


def pool_squares(xs):
    with mp.Pool(2) as pool:
        return pool.map(square, xs)


def _double_into(queue, xs):
    for x in xs:
        queue.put(2 * x)


def queue_doubles(xs):
    queue = mp.Queue()
    worker = mp.Process(target=_double_into, args=(queue, xs))
    worker.start()
    out = [queue.get() for _ in xs]
    worker.join()
    return out


def executor_squares(xs):
    with ProcessPoolExecutor(2) as ex:
        return list(ex.map(square, xs))


def shared_total(xs):
    total = mp.Value("i", 0)
    lock = mp.Lock()

    def add(x):
        with lock:
            total.value += x

    workers = [mp.Process(target=add, args=(x,)) for x in xs]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return total.value


def start_method():
    return mp.get_start_method()
"""
ASSERTS = ["assert pool_squares([1, 2, 3]) == [1, 4, 9]", "assert queue_doubles([1, 2]) == [2, 4]",
           "assert executor_squares([2, 3]) == [4, 9]", "assert shared_total([1, 2, 3]) == 6",
           "assert start_method() == 'fork'"]


def test_pool_queue_lock_value_and_executors_work_in_the_jail(need):
    need("fs_jail")
    verdict = run_unit_tests(PROGRAM, ASSERTS, limits=LIMITS)
    assert verdict.score == 1.0, verdict.details
    pytest_style = "".join(f"def test_{k}():\n    {line}\n\n\n" for k, line in enumerate(ASSERTS))
    verdict = run_unit_tests(PROGRAM, pytest_style, limits=LIMITS)  # each in a body of its own
    assert verdict.score == 1.0, verdict.details
    wrong = PROGRAM.replace("return x * x", "return x + x")
    assert run_unit_tests(wrong, ASSERTS, limits=LIMITS).score < 1.0


def test_dev_shm_is_each_executions_own(need):
    need("fs_jail")
    program = ("import os\ndef leave():\n    open('/dev/shm/grpo-left', 'w').write('x')\n    return os.listdir('/dev/shm')\n"
               "def found():\n    return os.listdir('/dev/shm')\n")
    assert run_unit_tests(program, ["assert leave() == ['grpo-left']"], limits=LIMITS).passed == 1
    assert run_unit_tests(program, ["assert found() == []"], limits=LIMITS).passed == 1


@pytest.fixture(scope="module")
def container():
    pool = Pool(1, without={"namespaces"})
    yield pool
    pool.close()


def test_without_the_jail_processes_and_pipes_work_and_semaphores_are_refused(container):
    program = PROGRAM + ("\ndef piped(x):\n    a, b = mp.Pipe()\n    p = mp.Process(target=lambda: a.send(x * 3))\n"
                         "    p.start()\n    out = b.recv()\n    p.join()\n    return out\n"
                         "def semaphore_refused():\n    try:\n        mp.Lock()\n    except PermissionError:\n"
                         "        return True\n    return False\n")
    [verdict] = run_batch([(program, ["assert piped(4) == 12", "assert start_method() == 'fork'",
                                      "assert semaphore_refused()"])], LIMITS, 1, container)
    assert verdict.score == 1.0, verdict.details


def test_what_a_test_body_leaves_running_ends_with_it(need):
    # The pytest functions run one after the other in the body runner; the processes one leaves behind (started,
    # never joined) are killed and reaped when it ends, so forty such bodies do not add up to the process cap.
    need("fs_jail")
    program = PROGRAM + ("\nimport time\ndef leave_two():\n    for _ in range(2):\n"
                         "        mp.Process(target=time.sleep, args=(60,)).start()\n    return 9\n")
    tests = "".join(f"def test_{k}():\n    assert leave_two() == 9\n\n\n" for k in range(40))
    verdict = run_unit_tests(program, tests, limits=SandboxLimits(timeout_s=60.0, cpu_s=60.0, max_processes=32))
    assert verdict.score == 1.0, verdict.reason


@pytest.fixture(params=[(), ("namespaces",)], ids=["all-layers", "no-namespaces"])
def every_mode(request):
    pool = Pool(1, without=request.param)
    yield pool
    pool.close()


def test_what_a_test_body_orphans_is_reaped_when_it_ends(every_mode):
    # Each body forks a child that forks a grandchild and exits: the grandchild, orphaned, is reparented to the
    # body runner (a subreaper once a body has started a process: the first body's goes to the loaded program) and
    # killed and reaped with the body's group when the body ends, so forty of them never reach the sample's cap of
    # 32 processes.
    program = ("import os, time\ndef leave_orphan():\n    if os.fork() == 0:\n        if os.fork() == 0:\n"
               "            time.sleep(60)\n            os._exit(0)\n        os._exit(0)\n    os.wait()\n    return 9\n")
    tests = "".join(f"def test_{k}():\n    assert leave_orphan() == 9\n\n\n" for k in range(40))
    limits = SandboxLimits(timeout_s=60.0, cpu_s=60.0, max_processes=32)
    [verdict] = run_batch([(program, tests)], limits, 1, every_mode, allow_degraded=True)
    assert verdict.score == 1.0, verdict.reason
