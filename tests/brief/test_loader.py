"""The brief: loaded once into a frozen object; every bad brief gives exit 2 with field path and fix."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest
import yaml

from briefs import example_brief_text
from grpo_rlvr.brief import RECIPE, load_brief
from grpo_rlvr.errors import ConfigError, InputFileError


def test_example_brief_loads_with_recipe_defaults(workspace):
    b = load_brief(workspace / "brief.yaml")
    assert b.grpo["num_generations"] == 8 and b.origin["num_generations"] == "recipe"
    assert b.grpo["loss_type"] == "grpo" and b.grpo["beta"] == 0.01
    assert b.grpo["learning_rate"] == 2e-4 and b.origin["learning_rate"] == "brief"
    assert b.grpo["use_vllm"] is False and b.origin["use_vllm"] == "hardware"
    assert b.grpo["reward_weights"] == [0.2, 1.0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        b.method = "lora"
    with pytest.raises(TypeError):
        b.grpo["beta"] = 1.0


def test_gpu_defaults_colocate_on_one_and_server_on_several(workspace):
    base = yaml.safe_load(example_brief_text())
    base["hardware"] = {"accelerator": "gpu", "num_gpus": 1}
    (workspace / "g1.yaml").write_text(yaml.safe_dump(base))
    b1 = load_brief(workspace / "g1.yaml")
    assert b1.grpo["use_vllm"] and b1.grpo["vllm_mode"] == "colocate" and b1.grpo["bf16"]
    base["hardware"] = {"accelerator": "gpu", "num_gpus": 8, "vllm_gpus": 2}
    base["grpo"]["per_device_train_batch_size"] = 8
    (workspace / "g8.yaml").write_text(yaml.safe_dump(base))
    b8 = load_brief(workspace / "g8.yaml")
    assert b8.grpo["vllm_mode"] == "server" and b8.hardware.num_processes == 6


def _bad(workspace, mutate) -> str:
    data = yaml.safe_load(example_brief_text())
    mutate(data)
    p = workspace / "bad.yaml"
    p.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError) as e:
        load_brief(p)
    return str(e.value)


def _set(path: str, value):
    def mutate(d):
        keys = path.split(".")
        for k in keys[:-1]:
            d = d.setdefault(k, {})
        d[keys[-1]] = value
    return mutate


BAD = [
    ("num_generations below floor", _set("grpo.num_generations", 4), "grpo.num_generations: 4 is below the recipe's floor"),
    ("batch not divisible", _set("grpo.per_device_train_batch_size", 3), "must be divisible by num_generations"),
    ("gbs and spg", lambda d: d["grpo"].update(generation_batch_size=64, steps_per_generation=2), "mutually exclusive"),
    ("gbs vs global", lambda d: d["grpo"].update(generation_batch_size=40), "divisible by the global batch size"),
    ("loss_type", _set("grpo.loss_type", "ppo"), "grpo.loss_type: 'ppo' is not a value TRL 1.16 accepts"),
    ("scale_rewards", _set("grpo.scale_rewards", "std"), "grpo.scale_rewards"),
    ("is level", _set("grpo.importance_sampling_level", "batch"), "grpo.importance_sampling_level"),
    ("vllm_mode", _set("grpo.vllm_mode", "remote"), "grpo.vllm_mode"),
    ("lr range", _set("grpo.learning_rate", 0.5), "grpo.learning_rate: 0.5 is outside"),
    ("beta range", _set("grpo.beta", -0.1), "grpo.beta"),
    ("temperature", _set("grpo.temperature", 0), "grpo.temperature"),
    ("unknown grpo key", _set("grpo.learning_rat", 1e-5), "did you mean 'learning_rate'"),
    ("reserved key", _set("grpo.output_dir", "x"), "grpo.output_dir: set by grpo-rlvr"),
    ("wrong type", _set("grpo.num_generations", "eight"), "grpo.num_generations: expected an integer"),
    ("unknown top key", _set("modle", {}), "modle: unknown key; did you mean 'model'"),
    ("missing rewards", lambda d: d.pop("rewards"), "'rewards' is a required property"),
    ("empty rewards", _set("rewards", []), "rewards"),
    ("unknown reward", lambda d: d["rewards"].append({"name": "exact_mach"}), "Did you mean 'exact_match'"),
    ("reward bad param", lambda d: d["rewards"][0].update(params={"pattern": "("}), "not a valid regular expression"),
    ("reward wrong type weight", lambda d: d["rewards"][0].update(weight="high"), "rewards[0].weight: expected number"),
    ("duplicate reward", lambda d: d["rewards"].append({"name": "format"}), "listed more than once"),
    ("method enum", _set("method", "dora"), "method: 'dora' is not allowed"),
    ("dataset missing", _set("dataset.path", "./nope.jsonl"), "does not exist"),
    ("prompt column", _set("dataset.prompt_column", "question"), "dataset.prompt_column: column 'question'"),
    ("column map", _set("dataset.columns", {"answer": "solution"}), "dataset.columns.answer: column 'solution'"),
    ("model path", _set("model.name_or_path", "./no-model"), "is not a directory"),
    ("vlm", _set("model.name_or_path", "Qwen/Qwen2.5-VL-7B-Instruct"), "vision-language"),
    ("variant without diagnosis", _set("variant", {"name": "dapo"}), "variant.diagnosis: variant 'dapo' needs"),
    ("variant unknown", _set("variant", {"name": "ppo"}), "variant.name: 'ppo' is not allowed"),
    ("vllm server on cpu", lambda d: d["grpo"].update(use_vllm=True, vllm_mode="server"),
     "grpo.vllm_mode: 'server' on CPU: the trainer sends new weights to a vLLM server over NCCL"),
    ("vllm sleep mode on cpu", lambda d: d["grpo"].update(use_vllm=True, vllm_enable_sleep_mode=True),
     "grpo.vllm_enable_sleep_mode: vLLM's CPU platform has no sleep mode"),
    ("server without gpus", lambda d: d.update(hardware={"accelerator": "gpu", "num_gpus": 1},
                                               grpo={**d["grpo"], "vllm_mode": "server"}), "'server' needs GPUs"),
    ("no training gpu", lambda d: d.update(hardware={"accelerator": "gpu", "num_gpus": 2, "vllm_gpus": 2}),
     "leave no GPU for training"),
    ("inspection bounds", _set("inspection.samples", 20), "inspection.samples"),
    ("completion vs context", _set("grpo.max_completion_length", 4096), "leaves no room for the prompt"),
    ("eval file missing", _set("dataset.eval_path", "./data/held-out.jsonl"), "dataset.eval_path: './data/held-out"),
    ("eval without held-out", _set("grpo.eval_strategy", "steps"), "grpo.eval_strategy: 'steps' needs held-out"),
    ("eval split alone", _set("dataset.eval_split", "test"), "dataset.eval_split: set without dataset.eval_path"),
    ("eval batch", lambda d: d["dataset"].update(eval_path="./data/train.jsonl")
     or d["grpo"].update(per_device_eval_batch_size=12), "e.g. set per_device_eval_batch_size: 16"),
    ("eval_strategy unquoted no", _set("grpo.eval_strategy", False), 'write "no"'),
    ("eval batch negative", lambda d: d["dataset"].update(eval_path="./data/train.jsonl")
     or d["grpo"].update(per_device_eval_batch_size=-8), "grpo.per_device_eval_batch_size: -8 must be ≥ 1"),
    ("logging_steps text", _set("grpo.logging_steps", "ten"), "grpo.logging_steps: expected a number"),
    ("watch stop_on", _set("watch.stop_on", "warning"), "watch.stop_on"),
    ("watch window zero", _set("watch.window", 0), "watch.window"),
]


@pytest.mark.parametrize("name,mutate,expect", BAD, ids=[b[0] for b in BAD])
def test_bad_briefs_name_field_and_fix(workspace, name, mutate, expect):
    assert expect in _bad(workspace, mutate)


def test_a_missing_section_points_at_an_example_that_exists(workspace):
    from paths import REPO

    msg = _bad(workspace, lambda d: d.pop("rewards"))
    cited = msg.split("(see ", 1)[1].split(",", 1)[0]
    assert (REPO / cited).is_file() and cited.endswith("brief.yaml"), cited
    assert "the briefs in examples/" in msg and (REPO / "examples").is_dir()


def test_all_problems_are_reported_at_once(workspace):
    msg = _bad(workspace, lambda d: d["grpo"].update(num_generations=4, loss_type="ppo", learning_rat=1))
    assert "3 problems" in msg


def test_variant_with_matching_diagnosis_is_accepted(workspace):
    (workspace / "diagnosis.json").write_text('{"findings": [{"id": "entropy_collapse"}]}')
    data = yaml.safe_load(example_brief_text())
    data["variant"] = {"name": "dapo", "diagnosis": "diagnosis.json"}
    (workspace / "v.yaml").write_text(yaml.safe_dump(data))
    b = load_brief(workspace / "v.yaml")
    assert b.grpo["loss_type"] == "dapo" and b.grpo["epsilon_high"] == 0.28 and b.origin["epsilon_high"] == "variant:dapo"
    data["variant"] = {"name": "dr_grpo", "diagnosis": "diagnosis.json"}
    (workspace / "v2.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match="none of which calls for 'dr_grpo'"):
        load_brief(workspace / "v2.yaml")


def test_moe_model_gets_gspo_automatically(workspace, tiny_model_dir, tmp_path):
    import json
    import shutil

    moe = tmp_path / "moe"
    shutil.copytree(tiny_model_dir, moe)
    cfg = json.loads((moe / "config.json").read_text())
    cfg["num_experts"] = 8
    (moe / "config.json").write_text(json.dumps(cfg))
    data = yaml.safe_load(example_brief_text())
    data["model"]["name_or_path"] = str(moe)
    (workspace / "m.yaml").write_text(yaml.safe_dump(data))
    b = load_brief(workspace / "m.yaml")
    assert b.variant.name == "gspo" and b.variant.automatic and b.grpo["importance_sampling_level"] == "sequence"
    data["grpo"]["importance_sampling_level"] = "token"          # GSPO cannot be overridden away on MoE
    (workspace / "m.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match="grpo.importance_sampling_level: 'token' on a mixture-of-experts"):
        load_brief(workspace / "m.yaml")


def test_missing_and_unparsable_files(tmp_path):
    with pytest.raises(InputFileError, match="file not found"):
        load_brief(tmp_path / "none.yaml")
    (tmp_path / "x.yaml").write_text("model: [unclosed\n")
    with pytest.raises(InputFileError, match="not valid YAML at line"):
        load_brief(tmp_path / "x.yaml")


def test_malformed_brief_cli_exit_2_no_traceback(workspace):
    (workspace / "bad.yaml").write_text(example_brief_text().replace("num_generations", "x") + "\ngrpo_typo: 1\n")
    out = subprocess.run([sys.executable, "-m", "grpo_rlvr", "validate", str(workspace / "bad.yaml")],
                         capture_output=True, text=True)
    assert out.returncode == 2
    assert "grpo_typo: unknown key" in out.stderr and "Traceback" not in out.stderr


def test_recipe_is_the_skills_not_trls():
    assert RECIPE["loss_type"] == "grpo" and RECIPE["learning_rate"] == 5e-7 and RECIPE["beta"] == 0.01
    assert RECIPE["num_generations"] == 8


def test_shipped_grpo_field_list_matches_installed_trl():
    import json
    from importlib import resources

    from trl import GRPOConfig

    shipped = json.loads(resources.files("grpo_rlvr.brief").joinpath("grpo_config_fields.json").read_text())
    installed = {f.name for f in dataclasses.fields(GRPOConfig) if not f.name.startswith("_")}
    assert set(shipped["fields"]) == installed
    # and the kinds of value: regenerate with scripts/gen-grpo-fields.py when TRL changes
    import runpy

    from paths import REPO

    assert shipped["fields"] == runpy.run_path(str(REPO / "scripts" / "gen-grpo-fields.py"))["fields"]()


def test_held_out_set_turns_on_evaluation_with_a_baseline(workspace):
    data = yaml.safe_load(example_brief_text())
    data["dataset"]["eval_path"] = "./data/train.jsonl"
    data["grpo"]["eval_steps"] = 7
    (workspace / "e.yaml").write_text(yaml.safe_dump(data))
    b = load_brief(workspace / "e.yaml")
    assert b.dataset.eval_resolved == str((workspace / "data" / "train.jsonl").resolve()) and b.dataset.eval_is_local
    assert b.grpo["eval_strategy"] == "steps" and b.origin["eval_strategy"] == "eval"
    assert b.grpo["eval_on_start"] is True                  # the held-out baseline before the first step
    assert b.grpo["eval_steps"] == 7 and b.origin["eval_steps"] == "brief"
    assert b.grpo["per_device_eval_batch_size"] == 64       # the training batch: divisible by num_generations
    assert "eval_strategy" not in load_brief(workspace / "brief.yaml").grpo


def test_held_out_file_needs_the_columns_rewards_read(workspace):
    (workspace / "data" / "held.jsonl").write_text('{"prompt": [{"role": "user", "content": "1+2="}]}\n')
    msg = _bad(workspace, _set("dataset.eval_path", "./data/held.jsonl"))
    assert "rewards[1] (exact_match) reads column 'answer', which dataset.eval_path lacks" in msg


def test_eval_steps_follow_a_fractional_logging_interval(workspace):
    data = yaml.safe_load(example_brief_text())
    data["dataset"]["eval_path"] = "./data/train.jsonl"
    data["grpo"]["logging_steps"] = 0.05                        # TRL: a share of the run
    (workspace / "f.yaml").write_text(yaml.safe_dump(data))
    assert load_brief(workspace / "f.yaml").grpo["eval_steps"] == 0.25


def test_runs_report_to_trackio_when_it_is_installed_unless_the_brief_says(workspace):
    import importlib.util

    b = load_brief(workspace / "brief.yaml")
    installed = importlib.util.find_spec("trackio") is not None
    assert b.grpo["report_to"] == ("trackio" if installed else "none")
    assert b.origin["report_to"] == ("dashboard" if installed else "recipe")
    data = yaml.safe_load(example_brief_text())
    data["grpo"]["report_to"] = "tensorboard"
    (workspace / "tb.yaml").write_text(yaml.safe_dump(data))
    tb = load_brief(workspace / "tb.yaml")
    assert tb.grpo["report_to"] == "tensorboard" and tb.origin["report_to"] == "brief"
