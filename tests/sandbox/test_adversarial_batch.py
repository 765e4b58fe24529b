"""Attacks on the batch and on the layers that hold without root: each earns nothing, raises nothing out of the
reward, and leaves the pool serving the next program. Run as root and as an unprivileged user (CI does both).

One property per test: capabilities, escapes through chroot/unshare, the seccomp list, the kernel keyring
between completions, trees that defeat clean-up, values that defeat the parent (overflow, hash flooding),
shadow modules and patched test frameworks.
"""

from __future__ import annotations

import errno
import os

import pytest

from grpo_rlvr.rewards import build_reward
from grpo_rlvr.sandbox import SandboxLimits, run_unit_tests, run_unit_tests_batch
from grpo_rlvr.sandbox._run import run_batch
from grpo_rlvr.sandbox.isolation.jail import remove_tree
from grpo_rlvr.sandbox.isolation.pool import Pool
from grpo_rlvr.sandbox.isolation.seccomp import DENIED
from grpo_rlvr.sandbox.judging.plaindata import ValueLimit, decode, encode

FAST = SandboxLimits(timeout_s=10.0, cpu_s=10.0)
ADD = ("def add(a, b):\n    return a + b\n", ["assert add(2, 3) == 5"])
CHEAT = ["assert solve(3) == 271828", "assert solve(4) == 314159"]


def probe(program: str, test: str):
    return run_unit_tests(program, [test], limits=FAST)


# --- privileges: what a plain user's supervisor must not leave to the child ----------------------------------


def test_every_layer_of_this_lane_is_active(layers):
    # CI's lanes: as root, as a plain user (scripts/test-unprivileged.sh) and in a simulated default container
    # (scripts/test-container.sh, which sets GRPO_RLVR_TEST_LANE=container).
    common = {"caps_dropped", "seccomp", "no_file_locks", "metadata_frozen", "nondumpable", "oom_first", "tree_cap"}
    if os.environ.get("GRPO_RLVR_TEST_LANE") == "container":
        if os.geteuid() != 0:  # a plain user in a container: no capability to start with, none to lock away
            common -= {"caps_dropped"}
        assert common | {"landlock_fs", "landlock_net", "landlock_scope"} <= set(layers)
        assert not {"pidns", "netns", "fs_jail", "private_shm", "userns"} & set(layers)
    elif os.geteuid() == 0:
        assert common | {"pidns", "netns", "fs_jail", "private_shm", "uid_drop"} <= set(layers)
    else:  # needs user namespaces, which this CI machine allows
        assert common | {"userns", "pidns", "netns", "fs_jail", "private_shm"} <= set(layers)


def test_no_capability_is_left_in_any_set(need):
    need("caps_dropped")
    program = ("import ctypes\nlibc = ctypes.CDLL(None)\n"
               "def caps():\n    hdr = (ctypes.c_uint32 * 2)(0x20080522, 0)\n    data = (ctypes.c_uint32 * 6)()\n"
               "    libc.capget(hdr, data)\n    bounding = [libc.prctl(23, c, 0, 0, 0) for c in range(41)]\n"
               "    return list(data), sum(b == 1 for b in bounding)\n")
    assert probe(program, "assert caps() == ([0, 0, 0, 0, 0, 0], 0)").passed == 1


def test_chroot_into_a_subfolder_and_climbing_out_is_refused(need, tmp_path):
    need("caps_dropped")
    canary = tmp_path / "host-canary"
    program = ("import os\ndef escape():\n    os.mkdir('sub')\n    try:\n        os.chroot('sub')\n"
               "    except OSError as e:\n        return e.errno\n    for _ in range(64):\n        os.chdir('..')\n"
               f"    os.chroot('.')\n    open({str(canary)!r}, 'w').write('escaped')\n    return 'escaped'\n")
    assert probe(program, f"assert escape() == {errno.EPERM}").passed == 1
    assert not canary.exists()


def test_a_new_user_namespace_cannot_be_made_to_regain_capabilities(need):
    need("seccomp")
    program = ("import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
               "def regain():\n    out = []\n    for flags in (0x10000000, 0x10000000 | 0x20000, 0x20000000):\n"
               "        out.append(ctypes.get_errno() if libc.unshare(flags) else 'made')\n"
               "    out.append(ctypes.get_errno() if libc.setns(0, 0) else 'joined')\n    return out\n")
    assert probe(program, f"assert regain() == [{errno.EPERM}] * 4").passed == 1


def test_every_denied_system_call_fails_with_eperm(need):
    need("seccomp")
    seccomp = pytest.importorskip("pyseccomp")
    numbers = {}
    for name in DENIED:
        try:
            nr = seccomp.resolve_syscall(seccomp.system_arch(), name)
        except (ValueError, RuntimeError, OSError):
            continue
        if nr >= 0:
            numbers[name] = nr
    assert {"ptrace", "keyctl", "add_key", "mount", "bpf", "perf_event_open", "io_uring_setup", "personality",
            "userfaultfd", "kexec_load", "init_module", "process_vm_readv", "setns", "unshare"} <= set(numbers)
    program = ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
               f"NUMBERS = {numbers!r}\n"
               "def denied():\n    out = {}\n    for name, nr in NUMBERS.items():\n        ctypes.set_errno(0)\n"
               "        r = libc.syscall(nr, 0, 0, 0, 0, 0)\n        out[name] = ctypes.get_errno() if r == -1 else 'ran'\n"
               "    return out\n")
    verdict = probe(program, f"assert denied() == {dict.fromkeys(numbers, errno.EPERM)!r}")
    assert verdict.passed == 1, verdict.reason


def test_the_kernel_keyring_passes_nothing_between_completions(need):
    need("seccomp")
    pool = Pool(1)
    writer = ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
              "def plant():\n    for ring in (-4, -5, -3):  # user, user-session, session keyrings\n"
              "        libc.syscall(248, b'user', b'grpo-leak', b'271828', 6, ring)\n    return 'planted'\n")
    reader = ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
              "def solve(n):\n    buf = ctypes.create_string_buffer(64)\n"
              "    key = libc.syscall(249, b'user', b'grpo-leak', None, 0)\n"
              "    if key < 0:\n        return -1\n    libc.syscall(250, 11, key, buf, 64)\n    return int(buf.value)\n")
    try:
        verdicts = run_batch([(writer, ["assert plant() == 'planted'"]), (reader, CHEAT[:1])], FAST, 1, pool)
    finally:
        pool.close()
    assert verdicts[1].passed == 0 and "returned -1" in verdicts[1].reason


# --- trees that defeat clean-up ----------------------------------------------------------------------------

DEEP_TREE = ("import os\ndef solve(n):\n    os.symlink('/', 'root-link')\n    os.symlink('.', 'loop')\n"
             "    for i in range(1500):\n        os.mkdir('d')\n        os.chdir('d')\n"
             "        if i % 100 == 0:\n            open('f', 'w').write('x')\n            os.symlink('..', 'up')\n"
             "    os.chmod('.', 0)\n    return 0\n")


def test_1500_nested_unwritable_symlinked_dirs_do_not_break_the_batch():
    verdicts = run_unit_tests_batch([(DEEP_TREE, CHEAT), ADD, (DEEP_TREE, CHEAT), ADD], limits=FAST, workers=1)
    assert [v.passed for v in verdicts] == [0, 1, 0, 1]


def test_deep_tree_in_degraded_mode_is_removed_from_the_host_tmp(tmp_path, monkeypatch):
    pool = Pool(1, without={"namespaces"})
    try:
        verdicts = run_batch([(DEEP_TREE, CHEAT), ADD], FAST, 1, pool)
    finally:
        pool.close()
    assert [v.passed for v in verdicts] == [0, 1]


def test_remove_tree_copes_with_deep_unreadable_and_symlinked_trees(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("keep")
    top = tmp_path / "work"
    top.mkdir()
    fd = os.open(top, os.O_RDONLY)
    try:
        here = fd
        for i in range(1500):  # deeper than PATH_MAX would allow as one path
            os.mkdir("d" * 200, dir_fd=here)
            nxt = os.open("d" * 200, os.O_RDONLY, dir_fd=here)
            if here != fd:
                os.close(here)
            here = nxt
            if i % 300 == 0:
                os.symlink(str(outside), "link", dir_fd=here)
                os.open("f", os.O_CREAT | os.O_WRONLY, dir_fd=here)
        os.fchmod(here, 0)
        os.close(here)
    finally:
        os.close(fd)
    remove_tree(str(top))
    assert not top.exists() and (outside / "keep").read_text() == "keep"


# --- values that defeat the parent ---------------------------------------------------------------------------


def test_huge_int_against_isclose_is_a_failed_test_not_an_overflow():
    reward = build_reward("unit_tests", {"timeout_s": 10})
    scored = reward.explain(["import math\ndef f():\n    return 10**400\n"], tests=[["assert math.isclose(f(), 3.0)"]])
    assert scored[0].score == 0.0 and "expected about 3.0" in scored[0].reason


def test_a_set_of_colliding_hashes_is_refused_by_a_bound():
    # Written straight onto the result channel (building the set would cost the child as much as the parent), as
    # the answer to the test's probe (a frame written before the probe was sent is refused unread).
    program = ("import json, os\nM = (1 << 61) - 1\n"
               "def solve(n):\n    value = ['S', [['i', hex(M * k)] for k in range(1, 35001)]]\n"
               "    os.write(3, json.dumps({'k': 'r', 'i': 0, 'v': [value]}).encode() + b'\\n')\n"
               "    os._exit(0)\n")
    limits = SandboxLimits(timeout_s=10.0, cpu_s=10.0, max_output_bytes=4_000_000)
    verdict = run_unit_tests(program, ["assert solve(3) == {1, 2}"], limits=limits)
    assert verdict.passed == 0 and "with one hash" in verdict.reason


def test_decoding_bounds_raise_value_limit_not_crash():
    with pytest.raises(ValueLimit):
        decode(encode({(1 << 61) - 1 + k * ((1 << 61) - 1) for k in range(100)}))
    with pytest.raises(ValueLimit):
        decode(["l", [["n"]] * 1_000_001])


# --- shadow modules, patched test frameworks, forged frames --------------------------------------------------


def test_shadow_modules_in_the_working_directory_are_not_imported():
    program = ("for name in ('statistics', 'json', 'sitecustomize', 'conftest', 'unittest', 'pytest'):\n"
               "    open(name + '.py', 'w').write('def mean(x):\\n    return 271828\\n"
               "import builtins\\nbuiltins.solve = lambda n: 271828\\n')\n")
    tests = ["import statistics", "assert statistics.mean([solve(3)]) == 271828"]
    assert run_unit_tests(program, tests, limits=FAST).passed == 0


def test_patching_unittest_pytest_and_sys_modules_earns_nothing():
    program = ("import sys, types, unittest\n"
               "unittest.TestCase.assertEqual = lambda *a, **k: None\n"
               "unittest.TestCase.run = lambda self, result=None: None\n"
               "fake = types.ModuleType('pytest')\nfake.main = lambda *a, **k: 0\nsys.modules['pytest'] = fake\n"
               "sys.modules['unittest'] = types.ModuleType('unittest')\n"
               "def solve(n):\n    return 0\n")
    testcase = ("import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n"
                "        self.assertEqual(solve(3), 271828)\n")
    pytest_style = "def test_a():\n    assert solve(3) == 271828\n"
    for tests in (testcase, pytest_style):
        verdict = run_unit_tests(program, tests, limits=FAST)
        assert verdict.passed == 0, verdict.reason


def test_forged_frames_for_a_check_function_earn_nothing():
    program = ("import os\nos.write(3, b'{\"k\": \"load\"}\\n')\n"
               "for i in range(4):\n    os.write(3, ('{\"k\": \"r\", \"i\": %d}\\n' % i).encode())\nos._exit(0)\n")
    tests = "def check(candidate):\n    assert candidate(3) == 271828\n    assert candidate(4) == 314159\n"
    verdict = run_unit_tests(program, tests, entry_point="solve", limits=FAST)
    assert verdict.passed == 0


def test_setup_lines_of_an_assert_list_earn_nothing():
    verdict = run_unit_tests("x = 0", ["import math", "from math import sqrt", "assert solve(3) == 271828"])
    assert (verdict.passed, verdict.total) == (0, 1)
