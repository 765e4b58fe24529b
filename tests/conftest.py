"""Shared fixtures. Nothing is downloaded: HF_HUB_OFFLINE=1 makes an accidental hub access fail loudly, and the
tiny model is built locally from a seed."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from importlib import resources
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "grpo_rlvr"]

# tests/vllm_lane start real vLLM engines and run in their own lane (scripts/test-vllm.sh, .venv-vllm, which sets
# GRPO_RLVR_VLLM_LANE). An environment without vLLM (the main lane's .venv) never collects them.
if not os.environ.get("GRPO_RLVR_VLLM_LANE") and importlib.util.find_spec("vllm") is None:
    collect_ignore = ["vllm_lane"]


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


def example_brief_text() -> str:
    return resources.files("grpo_rlvr.examples.arithmetic").joinpath("brief.yaml").read_text()


@pytest.fixture
def workspace(tmp_path, tiny_model_dir) -> Path:
    """A folder laid out like the demo's: brief.yaml, data/train.jsonl, model -> the tiny model."""
    from grpo_rlvr.demo import arithmetic_task
    from grpo_rlvr.files import write_jsonl_atomic

    (tmp_path / "brief.yaml").write_text(example_brief_text())
    write_jsonl_atomic(tmp_path / "data" / "train.jsonl", arithmetic_task.make_rows(200, seed=1))
    (tmp_path / "model").symlink_to(tiny_model_dir, target_is_directory=True)
    return tmp_path


def write_brief(workspace: Path, name: str, **sections) -> Path:
    """The demo's brief with whole top-level sections replaced (``dataset={...}``), written to ``workspace/name``."""
    import yaml

    data = yaml.safe_load(example_brief_text())
    data.update(sections)
    p = workspace / name
    p.write_text(yaml.safe_dump(data))
    return p


def copy_brief(workspace: Path, text: str, name: str = "brief.yaml") -> Path:
    p = workspace / name
    p.write_text(text)
    return p


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
