"""The command line: every subcommand has --help, exit codes are 0/1/2, and --help imports no torch."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from grpo_rlvr.cli import build_parser

COMMANDS = ["demo", "validate", "preflight", "score", "inspect", "review", "gate", "render", "train", "diagnose",
            "memory", "merge", "watch", "report"]


def run(*args, **kw):
    return subprocess.run([sys.executable, "-m", "grpo_rlvr", *args], capture_output=True, text=True, **kw)


def test_every_design_command_is_registered():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert sorted(sub.choices) == sorted(COMMANDS)


@pytest.mark.parametrize("cmd", [None, *COMMANDS])
def test_help_works_and_is_fast(cmd):
    t0 = time.monotonic()
    out = run(*([cmd] if cmd else []), "--help")
    elapsed = time.monotonic() - t0
    assert out.returncode == 0, out.stderr
    assert "usage: grpo-rlvr" in out.stdout
    print(f"grpo-rlvr {cmd or ''} --help: {elapsed:.2f}s")  # measured, not asserted


def test_help_does_not_import_heavy_modules():
    code = ("import sys\nfrom grpo_rlvr.cli import main\ntry:\n    main(['gate', '--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('torch', 'transformers', 'trl', 'datasets') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_usage_errors_exit_2():
    out = run("gate")
    assert out.returncode == 2 and "Try 'grpo-rlvr gate --help'" in out.stderr
    out = run("frobnicate")
    assert out.returncode == 2
    assert run().returncode == 2


def test_score_with_one_reward_and_json(tmp_path):
    import json

    f = tmp_path / "in.jsonl"
    f.write_text('{"prompt": "1+1=", "completion": "<answer>2</answer>", "answer": "2"}\n'
                 '{"prompt": "1+1=", "completion": "<answer>3</answer>", "answer": "2"}\n')
    out = run("score", "--reward", "exact_match", "--input", str(f), "--json")
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert rows == [{"index": 0, "score": 1.0, "reason": "answer 2 = 2"},
                    {"index": 1, "score": 0.0, "reason": "answer 3 ≠ 2"}]
    out = run("score", "--reward", "exact_match", "--option", "extract=last_number", "--input", str(f))
    assert out.returncode == 0 and "2 scored" in out.stdout


def test_score_with_brief_composite(workspace):
    import json

    f = workspace / "in.jsonl"
    f.write_text('{"prompt": "1+1=", "completion": "<answer>3</answer>", "answer": "2"}\n')
    out = run("score", "--brief", str(workspace / "brief.yaml"), "--input", str(f), "--json")
    row = json.loads(out.stdout)
    assert row["score"] == pytest.approx(0.2) and row["parts"]["exact_match"]["reason"] == "answer 3 ≠ 2"


def test_score_bad_input_is_exit_2_naming_the_line(tmp_path):
    f = tmp_path / "in.jsonl"
    f.write_text('{"completion": "x", "answer": "1"}\n{broken\n')
    out = run("score", "--reward", "exact_match", "--input", str(f))
    assert out.returncode == 2 and "line 2: not valid JSON" in out.stderr and "Traceback" not in out.stderr
    out = run("score", "--reward", "nope", "--input", str(f))
    assert out.returncode == 2 and "Unknown reward 'nope'" in out.stderr


def test_validate_prints_resolved_config(workspace):
    import json

    out = run("validate", str(workspace / "brief.yaml"), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["grpo_config"]["loss_type"] == {"value": "grpo", "from": "recipe", "bound": False}
    assert data["grpo_config"]["learning_rate"]["from"] == "brief"
    text = run("validate", str(workspace / "brief.yaml")).stdout
    assert "is valid" in text and "← recipe" in text


def test_memory_command(tmp_path):
    import json

    out = run("memory", "--size", "7B", "--method", "qlora", "--gpu", "24GB", "--json")
    assert out.returncode == 0
    assert json.loads(out.stdout)["estimate"]["fits"] is True
    out = run("memory", "--size", "70B", "--method", "full", "--gpu", "24GB")
    assert out.returncode == 1 and "DOES NOT FIT" in out.stdout
    out = run("memory", "--size", "huge", "--gpu", "24GB")
    assert out.returncode == 2 and "--size 'huge'" in out.stderr


def test_validate_refuses_a_config_that_cannot_fit_its_gpu(workspace):
    import yaml

    from briefs import example_brief_text

    data = yaml.safe_load(example_brief_text())
    data["model"]["name_or_path"] = "Qwen/Qwen2.5-32B-Instruct"
    data["hardware"] = {"accelerator": "gpu", "num_gpus": 1, "gpu_type": "24GB"}
    (workspace / "big.yaml").write_text(yaml.safe_dump(data))
    out = run("validate", str(workspace / "big.yaml"))
    assert out.returncode == 2 and "hardware.gpu_type" in out.stderr and "does not fit" in out.stderr


def test_public_api_names_resolve_lazily():
    """Every name in grpo_rlvr.api.__all__ resolves, and `import grpo_rlvr.api` alone loads no torch."""
    code = ("import sys, grpo_rlvr.api as api; light = 'torch' not in sys.modules; "
            "[getattr(api, n) for n in api.__all__]; print(light, len(api.__all__))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    light, count = out.stdout.split()
    assert light == "True" and int(count) >= 20


def test_every_error_the_api_raises_is_exported():
    import inspect

    from grpo_rlvr import api, errors
    from grpo_rlvr.run.launch import GateRefused

    raised = {n for n, c in vars(errors).items() if inspect.isclass(c) and issubclass(c, errors.GrpoRlvrError)}
    assert raised <= set(api.__all__), raised - set(api.__all__)
    assert api.GateRefused is GateRefused  # still importable from where the launcher raises it


def test_exported_functions_are_not_shadowed_by_submodules():
    """Each room may share a command's name (``grpo_rlvr.preflight`` is a package): the functions live in
    ``grpo_rlvr.api``, where importing any room changes nothing."""
    import importlib

    from grpo_rlvr import api

    for name, module in api._EXPORTS.items():
        importlib.import_module(module)
        assert callable(getattr(api, name)) and not isinstance(getattr(api, name), type(api)), name


def test_missing_column_fix_depends_on_where_the_data_came_from(tmp_path, workspace):
    f = tmp_path / "in.jsonl"
    f.write_text('{"prompt": "1+1=", "completion": "<answer>2</answer>", "gold": "2"}\n')
    out = run("score", "--reward", "exact_match", "--input", str(f))
    assert out.returncode == 2 and "--option answer_column=COLUMN" in out.stderr and "'gold'" in out.stderr
    assert "dataset.columns" not in out.stderr  # there is no brief here
    assert run("score", "--reward", "exact_match", "--option", "answer_column=gold", "--input",
               str(f)).returncode == 0
    out = run("score", "--brief", str(workspace / "brief.yaml"), "--input", str(f))
    assert out.returncode == 2 and "map it under dataset.columns in the brief" in out.stderr


def test_a_hub_warning_prints_once():
    """huggingface_hub's logger has a handler of its own and propagates to the root, which the CLI configures: its
    retry warnings printed twice. Once the CLI has set up logging, one warning is one line."""
    code = ("import sys; from grpo_rlvr.cli.main import main; code = main(['validate', '/nonexistent/brief.yaml']); "
            "from huggingface_hub.utils import logging as hub; "
            "hub.get_logger('huggingface_hub.utils._http').warning('Retrying in 1s [Retry 1/5].'); sys.exit(code)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("Retrying in 1s [Retry 1/5].") == 1, done.stderr
