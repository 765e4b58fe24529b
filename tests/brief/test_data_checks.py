"""Data at validate (missing local paths, columns of every local format, hub datasets said unchecked), no raw
traceback from dataset loading, and the brief's prompt section built alike for sampling and training."""

from __future__ import annotations

import ast
import json
import subprocess

import pytest
import yaml

from briefs import write_brief
from grpo_rlvr.brief import load_brief
from grpo_rlvr.dataset.rows import load_rows, load_split
from grpo_rlvr.errors import ConfigError, InputFileError
from grpo_rlvr.run.render import render
from paths import CLI

GSM_ROWS = [{"question": "Tom has 3 apples and buys 4 more. How many apples?", "answer": "3 + 4 = 7\n#### 7"},
            {"question": "A box holds 6 eggs. How many eggs in 5 boxes?", "answer": "6 * 5 = 30\n#### 30"}]
SYSTEM = "Think, then give the final number inside <answer></answer>."


def _brief(workspace, dataset: dict, **extra):
    return write_brief(workspace, "d.yaml", dataset=dataset, **extra)


def _gsm_jsonl(workspace):
    p = workspace / "gsm.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in GSM_ROWS))
    return p


def test_a_missing_local_file_is_an_error_not_a_hub_id(workspace):
    p = _brief(workspace, {"path": "gsm8k_missing.jsonl"})
    with pytest.raises(ConfigError, match="dataset.path: 'gsm8k_missing.jsonl' resolves to .* which does not exist"):
        load_brief(p)
    out = subprocess.run([*CLI, "validate", str(p)], capture_output=True, text=True)
    assert out.returncode == 2 and "does not exist" in out.stderr and "Traceback" not in out.stderr


def test_a_hub_dataset_is_said_unchecked(workspace):
    b = load_brief(_brief(workspace, {"path": "openai/gsm8k", "subset": "main"}))
    assert not b.dataset.is_local and b.dataset.subset == "main"
    assert any("'openai/gsm8k' (split 'train') is a hub dataset" in w and "columns were not checked" in w
               for w in b.warnings)
    out = subprocess.run([*CLI, "validate", str(workspace / "d.yaml")], capture_output=True, text=True)
    assert out.returncode == 0 and "(hub; columns not checked)" in out.stdout


@pytest.mark.parametrize("fmt", ["csv", "parquet", "folder"])
def test_columns_of_csv_parquet_and_folders_are_checked(workspace, fmt):
    import pandas as pd

    frame = pd.DataFrame(GSM_ROWS)
    if fmt == "csv":
        path = workspace / "gsm.csv"
        frame.to_csv(path, index=False)
    elif fmt == "parquet":
        path = workspace / "gsm.parquet"
        frame.to_parquet(path)
    else:
        path = workspace / "gsm_folder"
        (path / "data").mkdir(parents=True)
        frame.to_json(path / "data" / "train.jsonl", orient="records", lines=True)
    ref = f"./{path.name}"
    msg = str(pytest.raises(ConfigError, load_brief, _brief(workspace, {"path": ref})).value)
    assert "dataset.prompt_column: column 'prompt' is not in the dataset (columns: answer, question)" in msg
    b = load_brief(_brief(workspace, {"path": ref, "prompt_column": "question"}))
    assert b.dataset.is_local and not any("hub dataset" in w for w in b.warnings)
    rows = load_rows(b)
    assert rows[0]["prompt"] == GSM_ROWS[0]["question"] and rows[1]["answer"].endswith("#### 30")


def test_template_reads_only_existing_columns(workspace):
    _gsm_jsonl(workspace)
    bad = _brief(workspace, {"path": "./gsm.jsonl"}, prompt={"template": "{{ questoin }}"})
    with pytest.raises(ConfigError, match=r"prompt.template: reads 'questoin', not a column .*answer, question"):
        load_brief(bad)
    broken = _brief(workspace, {"path": "./gsm.jsonl"}, prompt={"template": "{{ question "})
    with pytest.raises(ConfigError, match="prompt.template: not valid Jinja at line 1"):
        load_brief(broken)
    hub = _brief(workspace, {"path": "openai/gsm8k"}, prompt={"template": "{% if %}"})
    with pytest.raises(ConfigError, match="not valid Jinja"):   # syntax is checked even when columns cannot be
        load_brief(hub)


def test_system_prompt_and_template_are_built_alike_for_sampling_and_training(workspace):
    _gsm_jsonl(workspace)
    p = _brief(workspace, {"path": "./gsm.jsonl"}, prompt={"system": SYSTEM, "template": "Q: {{ question }}"})
    b = load_brief(p)
    sampled = [r["prompt"] for r in load_rows(b)]               # what preflight and inspect sample from
    assert sampled[0] == [{"role": "system", "content": SYSTEM},
                          {"role": "user", "content": "Q: " + GSM_ROWS[0]["question"]}]
    run = render(p, out=workspace / "run").dir
    source = (run / "train.py").read_text()
    assert "return load(spec, PROMPT_COLUMN, COLUMN_MAP, PROMPT)" in source
    consts = {node.targets[0].id: ast.literal_eval(node.value) for node in ast.parse(source).body
              if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
              and node.targets[0].id in ("DATASET", "PROMPT_COLUMN", "COLUMN_MAP", "PROMPT")}
    trained = load_split(consts["DATASET"], consts["PROMPT_COLUMN"], consts["COLUMN_MAP"], consts["PROMPT"])
    assert trained["prompt"] == sampled and trained["answer"] == [r["answer"] for r in GSM_ROWS]
    assert b.fingerprint != load_brief(_brief(workspace, {"path": "./gsm.jsonl"},
                                              prompt={"template": "{{ question }}"})).fingerprint


def test_the_built_prompt_goes_through_the_chat_template(workspace, tiny_model_dir):
    """Sampling renders the built messages with the tokenizer's chat template, as the trainer does (the tiny model's
    own template drops system messages, so a template that writes every message stands in for an instruct
    model's)."""
    import shutil

    from transformers import AutoTokenizer

    from grpo_rlvr.rollout.road import roll_out

    shutil.copytree(tiny_model_dir, workspace / "model-all")
    tok = AutoTokenizer.from_pretrained(workspace / "model-all")
    tok.chat_template = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
    tok.save_pretrained(workspace / "model-all")
    p = _brief(workspace, {"path": "./data/train.jsonl"}, prompt={"system": "answer"})
    data = yaml.safe_load(p.read_text())
    data["model"]["name_or_path"] = "./model-all"
    p.write_text(yaml.safe_dump(data))
    brief = load_brief(p)
    rows = load_rows(brief)
    assert rows[0]["prompt"][0] == {"role": "system", "content": "answer"} and rows[0]["prompt"][1]["role"] == "user"
    ids = roll_out(brief, rows[:1], 8, seed=0).trajectories[0].prompt_ids
    assert tok.decode(list(ids)) == "answer" + rows[0]["prompt"][1]["content"]


def test_a_row_missing_a_template_column_is_a_clear_error(workspace):
    (workspace / "gaps.jsonl").write_text(json.dumps(GSM_ROWS[0]) + "\n" + json.dumps({"answer": "#### 1"}) + "\n")
    p = _brief(workspace, {"path": "./gaps.jsonl"}, prompt={"template": "{{ question }}"})
    with pytest.raises(InputFileError, match="dataset row 1 has no value for it"):
        load_rows(load_brief(p))


def test_preflight_on_an_unreachable_hub_dataset_has_no_traceback(workspace):
    p = _brief(workspace, {"path": "no-such-org/no-such-dataset"})
    out = subprocess.run([*CLI, "preflight", str(p)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 2, out.stderr[-2000:]
    assert "Traceback" not in out.stderr
    assert "dataset.path: cannot load 'no-such-org/no-such-dataset'" in out.stderr and "HF_HUB_OFFLINE" in out.stderr


def test_training_data_loading_fails_cleanly(workspace):
    """What the rendered train.py calls; train.py prints the error and exits 2 instead of a traceback."""
    spec = {"path": "no-such-org/no-such-dataset", "local": False, "split": "train", "subset": None,
            "field": "dataset.path"}
    with pytest.raises(InputFileError, match="dataset.path: cannot load 'no-such-org/no-such-dataset'"):
        load_split(spec, "prompt", {})
    local = {"path": str(workspace / "data" / "train.jsonl"), "local": True, "split": "train", "field": "dataset.path"}
    with pytest.raises(InputFileError, match="dataset.columns.target: 'solution' is not a column"):
        load_split(local, "prompt", {"target": "solution"})
    source = (render(workspace / "brief.yaml", out=workspace / "run").dir / "train.py").read_text()
    assert "except GrpoRlvrError as e:" in source and "return e.exit_code" in source
