"""``isolation_layers()`` tells the truth: each reported layer is observed from inside the sandbox.

Also the degraded mode (no namespaces, as in an unprivileged container): fewer layers reported, and the
process-tree guarantees still hold through the process group kill and the subreaper sweep.
"""

from __future__ import annotations

import os
import socket

import pytest

from grpo_rlvr.sandbox import SandboxLimits, missing_layers, run_unit_tests
from grpo_rlvr.sandbox._run import run_batch
from grpo_rlvr.sandbox.isolation.pool import Pool

from . import procs

FAST = SandboxLimits(timeout_s=1.0, cpu_s=2.0)


def needs(layers, name):
    if name not in layers:
        pytest.skip(f"layer {name!r} is not active on this machine")


def passes(program: str, test: str, limits: SandboxLimits = FAST) -> bool:
    verdict = run_unit_tests(program, [test], limits=limits)
    return verdict.passed == 1


def test_always_present_layers(layers):
    for name in ("process", "tmpdir", "env_scrubbed", "rlimit_cpu", "rlimit_as", "pgroup_kill", "sweep"):
        assert name in layers


def test_layers_match_each_verdict(layers):
    assert run_unit_tests("x = 1", ["assert x == 1"]).layers == layers


def test_netns_blocks_loopback(layers):
    needs(layers, "netns")
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    try:
        program = (f"import socket\ndef probe():\n    try:\n        socket.create_connection(('127.0.0.1', {port}), 1)\n"
                   "        return 'connected'\n    except OSError:\n        return 'failed'\n")
        assert passes(program, "assert probe() == 'failed'")
    finally:
        server.close()


def test_uid_drop_means_not_root(layers):
    needs(layers, "uid_drop")
    assert passes("import os\ndef uid():\n    return os.getuid()\n", "assert uid() != 0")


def test_pidns_makes_the_program_pid_1(layers):
    needs(layers, "pidns")
    program = "import os\ndef pids():\n    return (os.getpid(), os.getppid())\n"
    assert passes(program, "assert pids() == (1, 0)")


def test_fs_jail_has_no_proc(layers):
    needs(layers, "fs_jail")
    assert passes("import os\ndef proc():\n    return os.path.exists('/proc/self')\n", "assert proc() is False")


def test_fs_jail_hides_host_files(layers, tmp_path):
    needs(layers, "fs_jail")
    secret = tmp_path / "host-only.txt"
    secret.write_text("x")
    program = f"import os\ndef seen():\n    return os.path.exists({str(secret)!r}) or os.path.exists('/root/.bashrc')\n"
    assert passes(program, "assert seen() is False")


def test_tmpdir_is_empty_and_fresh(layers):
    program = "import os\nopen('mine.txt', 'w').write('x')\ndef listing():\n    return sorted(os.listdir('.'))\n"
    assert passes(program, "assert listing() == ['mine.txt']")
    assert passes(program, "assert listing() == ['mine.txt']")  # the previous run's file is gone


def test_environment_is_the_allowlist(layers):
    program = "import os\ndef env():\n    return sorted(os.environ)\n"
    assert passes(program, "assert env() == ['HOME', 'LANG', 'PATH', 'PYTHONIOENCODING', 'TMPDIR']")


def test_rlimit_as_is_the_limit(layers):
    program = "import resource\ndef limit():\n    return resource.getrlimit(resource.RLIMIT_AS)\n"
    mib = FAST.memory_mb * 1024 * 1024
    assert passes(program, f"assert limit() == ({mib}, {mib})")


def test_rlimit_nproc_reported_only_when_enforced(layers):
    if os.geteuid() == 0 and "uid_drop" not in layers:
        assert "rlimit_nproc" not in layers  # root ignores RLIMIT_NPROC
    if "rlimit_nproc" in layers:
        program = ("import os\ndef spawn():\n    kids = 0\n    try:\n        for _ in range(200):\n"
                   "            if os.fork() == 0:\n                os._exit(0)\n            kids += 1\n"
                   "    except OSError:\n        return 'limited'\n    return 'unlimited'\n")
        # children exit at once but stay zombies (unreaped) and keep counting against RLIMIT_NPROC
        assert passes(program, "assert spawn() == 'limited'", SandboxLimits(timeout_s=30.0, cpu_s=30.0, max_processes=64))


# --- degraded mode: no namespaces ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bare_pool():
    pool = Pool(1, without={"namespaces"})
    yield pool
    pool.close()


def bare_run(pool, program, tests, limits=FAST):
    return run_batch([(program, tests)], limits, 1, pool)[0]


def test_degraded_mode_reports_fewer_layers(bare_pool):
    verdict = bare_run(bare_pool, "x = 1", ["assert x == 1"])
    assert verdict.passed == 1
    for name in ("netns", "pidns", "fs_jail", "userns"):
        assert name not in verdict.layers
    assert {"process", "tmpdir", "env_scrubbed", "pgroup_kill", "sweep"} <= set(verdict.layers)
    assert "no namespaces (switched off)" in missing_layers()


def test_degraded_mode_kills_a_timed_out_group(bare_pool):
    # The forked child names itself before the parent starts looping; the daemon across sessions is
    # test_adversarial::test_double_forked_daemon_does_not_survive.
    name = procs.token()
    program = (f"import os, time\nr, w = os.pipe()\nif os.fork() == 0:\n    {procs.name_self(name)}\n    os.write(w, b'up')\n"
               "    time.sleep(60)\nos.read(r, 2)\nwhile True:\n    pass\n")
    verdict = bare_run(bare_pool, program, ["assert solve(3) == 271828"], SandboxLimits(timeout_s=0.5, cpu_s=1.0))
    assert verdict.timed_out
    assert procs.wait_until_gone(name) == []


def test_degraded_mode_temp_dir_is_removed(bare_pool):
    program = "import os\ndef where():\n    return os.getcwd()\n"
    verdict = bare_run(bare_pool, program, ["assert where() == ''"])
    cwd = verdict.details[0].split("returned '")[1].split("'")[0]
    assert cwd.startswith("/tmp/") and not os.path.exists(cwd)
