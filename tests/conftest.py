"""Shared fixtures. Nothing is downloaded: HF_HUB_OFFLINE=1 makes an accidental hub access fail loudly, and the
tiny model is built locally from a seed.

Every test that starts a training is marked ``e2e``. The two ways the package starts one, the rendered train.py and
the demo's SFT warmup, record each start in the work trace (``grpo_rlvr.work_trace``, which every process of a
launch appends to); a test not marked ``e2e`` during which one started fails, its fixtures' set-up included, and a
test that requests a warmed-model fixture must be marked, whichever test happens to build it first. The session
sets ``GRPO_RLVR_TRACE`` to a file of its own (a value from outside is replaced) and removes it at the end.
Trainings outside the package (a plain TRL script, ``trl grpo``) record nothing: those tests are marked by hand."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from briefs import example_brief_text

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# OpenMP threads that sleep while they wait (what the CLI sets for itself, grpo_rlvr.cpu_threads): set before any
# test imports torch. scripts/test.sh runs two pytest workers, each with torch's threads; spinning libgomp threads
# of one worker would burn the time slices of the other.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
_TRACE = Path(tempfile.mkdtemp(prefix="grpo-rlvr-tests-trace-")) / "trace.jsonl"
os.environ["GRPO_RLVR_TRACE"] = str(_TRACE)
# trackio is in the dev stack, so rendered runs report to it by default: into the session's own folder, never
# the user's ~/.cache/huggingface/trackio (removed with the trace; a test may point it elsewhere)
os.environ["TRACKIO_DIR"] = str(_TRACE.parent / "trackio")


# tests/vllm_lane start real vLLM engines and run in their own lane (scripts/test-vllm.sh, .venv-vllm, which sets
# GRPO_RLVR_VLLM_LANE). An environment without vLLM (the main lane's .venv) never collects them.
if not os.environ.get("GRPO_RLVR_VLLM_LANE") and importlib.util.find_spec("vllm") is None:
    collect_ignore = ["vllm_lane"]


# Fixtures that train a model to build it (an SFT warmup), here and in tests/vllm_lane.
TRAINING_FIXTURES = ("warm_model_dir", "warm60_model_dir")


def pytest_collection_modifyitems(config, items):
    unmarked = [i.nodeid for i in items if i.get_closest_marker("e2e") is None
                and set(TRAINING_FIXTURES) & set(getattr(i, "fixturenames", ()))]
    if unmarked:
        raise pytest.UsageError(f"tests that request a warmed model ({', '.join(TRAINING_FIXTURES)}, whose set-up is "
                                f"an SFT training) but are not marked e2e: {unmarked}; mark them @pytest.mark.e2e")


def pytest_unconfigure(config):
    shutil.rmtree(_TRACE.parent, ignore_errors=True)


def _trace_size() -> int:
    return _TRACE.stat().st_size if _TRACE.exists() else 0


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    item.stash[_TRACE_START] = _trace_size()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    report = (yield).get_result()
    if call.when != "call" or not report.passed or item.get_closest_marker("e2e") or not _TRACE.exists():
        return
    with _TRACE.open(encoding="utf-8") as f:
        f.seek(item.stash.get(_TRACE_START, 0))
        started = [json.loads(line) for line in f if '"training_start"' in line]
    if started:
        kinds = sorted({e.get("kind", "grpo") for e in started})
        report.outcome = "failed"
        report.longrepr = (f"{item.nodeid} started {len(started)} training(s) ({', '.join(kinds)}) but is not marked "
                           "e2e: mark it @pytest.mark.e2e, or give it a model that needs no training")


_TRACE_START = pytest.StashKey[int]()


@pytest.fixture(autouse=True)
def _draws_log_of_the_test(tmp_path_factory, monkeypatch):
    """The account's log of inspection draws (``inspection/draws.py``) in the session's temporary folder, not the
    user's home: an inspect in this process logs there (a CLI subprocess still logs into the home's)."""
    from grpo_rlvr.inspection import draws

    log = tmp_path_factory.getbasetemp() / "draws.jsonl"
    monkeypatch.setattr(draws, "account_log", lambda: log)


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache(tmp_path_factory):
    """Each test session builds its own tiny models instead of reusing the user's cache."""
    os.environ["GRPO_RLVR_CACHE"] = str(tmp_path_factory.mktemp("grpo-rlvr-cache"))


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    """An untrained tiny model (character tokenizer + Qwen2), saved like any Hugging Face model."""
    from grpo_rlvr.demo import tiny_model

    d = tmp_path_factory.mktemp("models") / "tiny"
    tok = tiny_model.build_tokenizer()
    model = tiny_model.build_model(tok, seed=0)
    tiny_model.save_pretrained(model, tok, d, {"seed": 0, "kind": "untrained"})
    return d


@pytest.fixture(scope="session")
def warm_model_dir(tmp_path_factory) -> Path:
    """The tiny model warmed up as the training-outcome sweeps measured it (``outcome_seeds.SWEPT_WARMUP`` on 2000
    rows): it succeeds sometimes. Built once per session (by one of the xdist workers, tiny_runs.built_once), read by
    every test that starts from it."""
    from grpo_rlvr.demo import arithmetic_task as task
    from outcome_seeds import SWEPT_WARMUP
    from tiny_runs import answers, built_once, warmed_model

    rows = task.make_rows(2000, seed=1)
    return built_once(tmp_path_factory, "warm",
                      lambda d: warmed_model(tmp_path_factory, "warm", rows, answers(rows), dest=d, **SWEPT_WARMUP))


@pytest.fixture(scope="session")
def warm60_model_dir(tmp_path_factory) -> Path:
    """The tiny model after 60 steps of that warmup on 600 rows: it earns some reward (an untrained model earns
    none, so its groups carry no gradient), with room left for GRPO. The LoRA tests start from it."""
    from grpo_rlvr.demo import arithmetic_task as task
    from outcome_seeds import SWEPT_WARMUP
    from tiny_runs import answers, built_once, warmed_model

    rows = task.make_rows(600, seed=1)
    return built_once(tmp_path_factory, "warm60", lambda d: warmed_model(tmp_path_factory, "warm60", rows, answers(rows),
                                                                         dest=d, **{**SWEPT_WARMUP, "steps": 60}))


@pytest.fixture
def workspace(tmp_path, tiny_model_dir) -> Path:
    """A folder laid out like the demo's: brief.yaml, data/train.jsonl, model -> the tiny model."""
    from grpo_rlvr.demo import arithmetic_task
    from grpo_rlvr.files import write_jsonl_atomic

    (tmp_path / "brief.yaml").write_text(example_brief_text())
    write_jsonl_atomic(tmp_path / "data" / "train.jsonl", arithmetic_task.make_rows(200, seed=1))
    (tmp_path / "model").symlink_to(tiny_model_dir, target_is_directory=True)
    return tmp_path


@pytest.fixture
def clean_dir(tmp_path):
    yield tmp_path
    shutil.rmtree(tmp_path, ignore_errors=True)


@pytest.fixture
def own_model(workspace, monkeypatch):
    """The workspace with its own copy of the tiny model (so it can be rewritten), hashes cacheable at once."""
    import shutil

    from grpo_rlvr.identity import hash_cache

    monkeypatch.setattr(hash_cache, "RACY_NS", 0)
    link = workspace / "model"
    target = link.resolve()
    link.unlink()
    shutil.copytree(target, link)
    return workspace
