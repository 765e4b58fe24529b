"""Torch's CPU threads: OpenMP threads that sleep while they wait (``OMP_WAIT_POLICY=PASSIVE``, read by libgomp
when torch loads) and one torch thread per usable core, in the launcher and in the rendered train.py run on its
own; a value the user set wins. libgomp itself is asked what it uses: ``OMP_DISPLAY_ENV=VERBOSE`` makes it print
``GOMP_SPINCOUNT`` (0 under PASSIVE, 300000 by default, 3e10 under ACTIVE) as torch loads. The demo's own
process is checked in tests/demo/test_pipeline.py; benchmarks/bench_demo_load.py measures what it buys under load."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

from artifacts import make_artifact
from briefs import brief_for
from grpo_rlvr.cpu_threads import passive_openmp, usable_cores
from grpo_rlvr.run.launch import train
from grpo_rlvr.run.render import render

# Runs the rendered train.py as `python train.py` would once it has restarted itself as `python -I`, then prints
# torch's thread count. The run passes its gate and stops at the dashboard it names (swanlab, not installed here)
# after torch has loaded and before the model does (one process checks the gate before torch loads, so a refused run
# would show nothing). The probe starts isolated itself, so train.py does not exec a fresh interpreter, which would
# drop the probe's atexit hook.
PROBE = ("import runpy, sys, atexit; sys.argv = [sys.argv[1]]; "
         "atexit.register(lambda: print('TORCH-THREADS', sys.modules['torch'].get_num_threads(), file=sys.stderr)); "
         "runpy.run_path(sys.argv[0], run_name='__main__')")


def bare_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "OMP_NUM_THREADS", "GOMP_SPINCOUNT")}
    return {**env, "OMP_DISPLAY_ENV": "VERBOSE", "TOKENIZERS_PARALLELISM": "false", **extra}


def gated_run_stopping_before_the_model(workspace):
    """A reviewed run whose dashboard (swanlab) cannot start here: train.py stops after torch loads."""
    assert importlib.util.find_spec("swanlab") is None, "swanlab is installed here: pick a dashboard that is not"
    brief = brief_for(workspace, "dash", {"grpo": {"report_to": "swanlab"}})
    make_artifact(brief, workspace / "out" / "inspection")
    return render(brief).dir


def probe_train_py(run, env, cpus=None):
    out = subprocess.run([sys.executable, "-I", "-c", PROBE, str(run / "train.py")], cwd=run, capture_output=True,
                         text=True, timeout=300, env=env,
                         preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None)
    assert out.returncode == 2 and "SwanLabCallback cannot start" in out.stderr, out.stderr[-2000:]  # as meant
    threads = int(out.stderr.split("TORCH-THREADS ")[1].split()[0])
    return out.stderr, threads


def test_passive_is_a_default_the_user_can_override():
    assert passive_openmp({}) == {"OMP_WAIT_POLICY": "PASSIVE"}
    assert passive_openmp({"OMP_WAIT_POLICY": "ACTIVE"}) == {"OMP_WAIT_POLICY": "ACTIVE"}
    assert usable_cores() == len(os.sched_getaffinity(0))


def test_rendered_train_py_sleeps_its_waiting_threads_and_uses_the_cores_it_may(workspace):
    run = gated_run_stopping_before_the_model(workspace)
    one_cpu = {min(os.sched_getaffinity(0))}
    err, threads = probe_train_py(run, bare_env(), cpus=one_cpu)
    assert "GOMP_SPINCOUNT = '0'" in err and threads == 1
    # what the user set wins: their wait policy, and their thread count (torchrun sets OMP_NUM_THREADS=1)
    err, threads = probe_train_py(run, bare_env(OMP_WAIT_POLICY="ACTIVE", OMP_NUM_THREADS="1"))
    assert "GOMP_SPINCOUNT = '30000000000'" in err and threads == 1


def test_the_launcher_passes_passive_to_what_it_starts(workspace, monkeypatch):
    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    run = render(workspace / "brief.yaml").dir
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    assert train(run, dry_run=True).env["OMP_WAIT_POLICY"] == "PASSIVE"
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    assert train(run, dry_run=True).env["OMP_WAIT_POLICY"] == "ACTIVE"
