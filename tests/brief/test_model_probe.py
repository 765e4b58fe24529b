"""Model facts: read from config.json (a local folder, or a fake Hugging Face cache laid out as the hub writes it),
else from the brief, else guessed from the name and said so; MoE/VLM status never silently assumed."""

from __future__ import annotations

import json

import pytest
import yaml

from briefs import write_brief
from grpo_rlvr.brief import load_brief
from grpo_rlvr.brief.model_probe import (
    cached_config_path,
    is_mixture_of_experts,
    is_vision_language,
    model_facts,
    params_from_name,
)
from grpo_rlvr.errors import ConfigError

# Numbers from the models' config.json on the hub (shapes only).
MIXTRAL = {"architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "hidden_size": 4096,
           "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
           "vocab_size": 32000, "num_local_experts": 8, "num_experts_per_tok": 2, "max_position_embeddings": 32768}
QWEN7B = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 3584, "num_hidden_layers": 28,
          "num_attention_heads": 28, "num_key_value_heads": 4, "intermediate_size": 18944, "vocab_size": 152064,
          "tie_word_embeddings": False, "max_position_embeddings": 32768}
GLM_AIR = {"architectures": ["Glm4MoeForCausalLM"], "model_type": "glm4_moe", "hidden_size": 4096,
           "num_hidden_layers": 46, "num_attention_heads": 96, "num_key_value_heads": 8, "head_dim": 128,
           "intermediate_size": 10944, "moe_intermediate_size": 1408, "n_routed_experts": 128, "n_shared_experts": 1,
           "num_experts_per_tok": 8, "first_k_dense_replace": 1, "vocab_size": 151552}
MISTRAL_SMALL_31 = {"architectures": ["Mistral3ForConditionalGeneration"], "model_type": "mistral3",
                    "image_token_index": 10, "vision_config": {"hidden_size": 1024},
                    "text_config": {"hidden_size": 5120, "num_hidden_layers": 40, "num_attention_heads": 32,
                                    "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 32768,
                                    "vocab_size": 131072}}


def _fake_cache(root, repo_id: str, config: dict, commit: str = "a1b2c3", ref: str | None = "main"):
    repo = root / ("models--" + repo_id.replace("/", "--"))
    snap = repo / "snapshots" / commit
    snap.mkdir(parents=True)
    (snap / "config.json").write_text(json.dumps(config))
    if ref:
        (repo / "refs").mkdir()
        (repo / "refs" / ref).write_text(commit)
    return snap / "config.json"


@pytest.fixture
def hf_cache(tmp_path, monkeypatch):
    root = tmp_path / "hub"
    root.mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(root))
    monkeypatch.delenv("HF_HOME", raising=False)
    return root


def test_local_folder_config_gives_size_moe_and_context(tmp_path, hf_cache):
    (tmp_path / "mixtral").mkdir()
    (tmp_path / "mixtral" / "config.json").write_text(json.dumps(MIXTRAL))
    f = model_facts({"name_or_path": "./mixtral"}, str(tmp_path / "mixtral"), True)
    assert f.params == pytest.approx(46.7e9, rel=0.01)       # Mixtral-8x7B's published total
    assert f.moe and not f.vision and f.context_length == 32768 and f.warnings == ()
    assert f.params_from.startswith("config.json (") and f.moe_from == f.params_from


def test_hf_cache_snapshot_named_by_refs_is_read(hf_cache):
    _fake_cache(hf_cache, "zai-org/GLM-4.5-Air", GLM_AIR)
    f = model_facts({"name_or_path": "zai-org/GLM-4.5-Air"}, "zai-org/GLM-4.5-Air", False)
    assert f.moe and f.config_path.endswith("snapshots/a1b2c3/config.json") and f.warnings == ()
    assert 100e9 < f.params < 115e9                          # published 106B; MLA/bias details approximated
    # a revision that is not cached is not answered by another snapshot
    assert cached_config_path("zai-org/GLM-4.5-Air", "v2") is None
    assert cached_config_path("zai-org/GLM-4.5-Air", "a1b2c3").name == "config.json"


def test_cache_without_refs_takes_the_snapshot(hf_cache):
    _fake_cache(hf_cache, "Qwen/Qwen2.5-7B-Instruct", QWEN7B, ref=None)
    f = model_facts({"name_or_path": "Qwen/Qwen2.5-7B-Instruct"}, "Qwen/Qwen2.5-7B-Instruct", False)
    assert f.params == pytest.approx(7.62e9, rel=0.01) and not f.moe and f.warnings == ()


def test_vision_config_makes_a_vlm(hf_cache):
    _fake_cache(hf_cache, "mistralai/Mistral-Small-3.1-24B-Instruct-2503", MISTRAL_SMALL_31)
    f = model_facts({"name_or_path": "mistralai/Mistral-Small-3.1-24B-Instruct-2503"},
                    "mistralai/Mistral-Small-3.1-24B-Instruct-2503", False)
    assert f.vision and f.vision_from.startswith("config.json")
    assert 22e9 < f.params < 25e9                            # the text model, read through text_config


def test_without_config_the_size_is_a_guess_that_says_so(hf_cache):
    mixtral = model_facts({"name_or_path": "mistralai/Mixtral-8x7B-v0.1"}, "mistralai/Mixtral-8x7B-v0.1", False)
    mine = model_facts({"name_or_path": "my-org/my-model-7b"}, "my-org/my-model-7b", False)
    assert mixtral.params == 46.7e9 and mine.params == 7e9   # no longer the same size
    assert mixtral.params_from == mine.params_from == "name"
    text = " ".join(mine.warnings)
    assert "guessed from the name" in text and "hf download my-org/my-model-7b config.json" in text
    assert "model.moe: whether 'my-org/my-model-7b' is a mixture-of-experts model is unknown" in text
    assert "model.vision:" in text
    unknown = model_facts({"name_or_path": "my-org/chatbot"}, "my-org/chatbot", False)
    assert unknown.params is None and any("size of 'my-org/chatbot' is unknown" in w for w in unknown.warnings)


def test_the_brief_can_state_what_cannot_be_read(hf_cache):
    f = model_facts({"name_or_path": "my-org/chatbot", "params": "13.2B", "moe": True, "vision": False},
                    "my-org/chatbot", False)
    assert f.params == 13.2e9 and f.moe and not f.vision and f.warnings == ()
    assert f.params_from == "brief (model.params)" and f.moe_from == "brief (model.moe)"
    assert model_facts({"name_or_path": "x/y", "params": 0.5, "moe": False, "vision": False}, "x/y",
                       False).params == 0.5e9


def test_config_wins_over_a_brief_that_disagrees(hf_cache):
    _fake_cache(hf_cache, "Qwen/Qwen2.5-7B-Instruct", QWEN7B)
    f = model_facts({"name_or_path": "Qwen/Qwen2.5-7B-Instruct", "params": "70B", "moe": True},
                    "Qwen/Qwen2.5-7B-Instruct", False)
    assert f.params == pytest.approx(7.62e9, rel=0.01) and not f.moe
    assert any("model.params: the brief says 70B" in w for w in f.warnings)
    assert any("model.moe: the brief says True" in w for w in f.warnings)


MOE_NAMES = ["meta-llama/Llama-4-Scout-17B-16E-Instruct", "meta-llama/Llama-4-Maverick-17B-128E-Instruct",
             "moonshotai/Kimi-K2-Instruct", "zai-org/GLM-4.5-Air", "mistralai/Mixtral-8x22B-Instruct-v0.1",
             "Qwen/Qwen3-30B-A3B", "Qwen/Qwen3-235B-A22B-Instruct-2507", "deepseek-ai/DeepSeek-V3",
             "openai/gpt-oss-20b", "allenai/OLMoE-1B-7B-0924"]
DENSE_NAMES = ["Qwen/Qwen2.5-7B-Instruct", "meta-llama/Llama-3.1-8B-Instruct",
               "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "zai-org/GLM-4-9B-0414", "google/gemma-3-1b-it"]
VLM_NAMES = ["meta-llama/Llama-4-Scout-17B-16E-Instruct", "mistralai/Mistral-Small-3.1-24B-Instruct-2503",
             "Qwen/Qwen2.5-VL-7B-Instruct", "Qwen/Qwen3-VL-8B-Instruct", "google/gemma-3-27b-it",
             "llava-hf/llava-1.5-7b-hf", "meta-llama/Llama-3.2-11B-Vision-Instruct", "zai-org/GLM-4.5V"]


@pytest.mark.parametrize("name", MOE_NAMES)
def test_moe_names(name):
    assert is_mixture_of_experts(name, None)


@pytest.mark.parametrize("name", DENSE_NAMES)
def test_dense_names(name):
    assert not is_mixture_of_experts(name, None) and not is_vision_language(name, None)


@pytest.mark.parametrize("name", VLM_NAMES)
def test_vlm_names(name):
    assert is_vision_language(name, None)


def test_known_moe_totals_from_names():
    assert params_from_name("meta-llama/Llama-4-Scout-17B-16E-Instruct") == 109e9   # not the 17B active
    assert params_from_name("moonshotai/Kimi-K2-Instruct") == 1000e9
    assert params_from_name("zai-org/GLM-4.5-Air") == 106e9
    assert params_from_name("Qwen/Qwen3-30B-A3B") == 30e9
    assert params_from_name("HuggingFaceTB/SmolLM2-360M-Instruct") == 360e6


def _brief(workspace, model: dict, **extra):
    return write_brief(workspace, "m.yaml", model=model, **extra)


def test_brief_on_a_name_guessed_moe_gets_gspo_and_a_warning(workspace, hf_cache):
    b = load_brief(_brief(workspace, {"name_or_path": "zai-org/GLM-4.5-Air"}))
    assert b.model.is_moe and b.variant.name == "gspo" and b.model.facts.moe_from == "name"
    assert any("taken as yes from its name" in w for w in b.warnings)


def test_vlm_guessed_from_the_name_is_refused_with_the_way_out(workspace, hf_cache):
    with pytest.raises(ConfigError, match="guessed from its name: if it is text-only, state model.vision: false"):
        load_brief(_brief(workspace, {"name_or_path": "mistralai/Mistral-Small-3.1-24B-Instruct-2503"}))
    b = load_brief(_brief(workspace, {"name_or_path": "mistralai/Mistral-Small-3.1-24B-Instruct-2503",
                                      "vision": False, "params": "24B"}))
    assert not b.model.facts.vision


def test_validate_sizes_memory_from_the_cached_config(workspace, hf_cache):
    from grpo_rlvr.validate.report import validate_report

    _fake_cache(hf_cache, "mistralai/Mixtral-8x7B-Instruct-v0.1", MIXTRAL)
    hw = {"accelerator": "gpu", "num_gpus": 8, "vllm_gpus": 2, "sharding": "zero3", "gpu_type": "141GB"}
    p = _brief(workspace, {"name_or_path": "mistralai/Mixtral-8x7B-Instruct-v0.1"}, hardware=hw, method="lora")
    data = yaml.safe_load(p.read_text())
    data["grpo"]["per_device_train_batch_size"] = 8
    p.write_text(yaml.safe_dump(data))
    mem = validate_report(p)["memory"]
    assert mem["params_b"] == pytest.approx(46.7, rel=0.01) and mem["size_from"].startswith("config.json")
    assert mem["shape"] == "mistralai/Mixtral-8x7B-Instruct-v0.1"  # the config's own shape, experts included
    named = _brief(workspace, {"name_or_path": "my-org/my-model-7b"}, hardware=hw, method="lora")
    data["model"] = {"name_or_path": "my-org/my-model-7b"}
    named.write_text(yaml.safe_dump(data))
    report = validate_report(named)
    assert report["memory"]["size_from"] == "name" and report["memory"]["params_b"] == 7.0
    assert report["memory"]["total_gib"] < mem["total_gib"]
    assert any("guessed from the name" in w for w in report["warnings"])


def test_bad_params_text_is_a_schema_error(workspace, hf_cache):
    with pytest.raises(ConfigError, match="model.params"):
        load_brief(_brief(workspace, {"name_or_path": "x/y", "params": "seven billion"}))


def test_memory_command_reads_a_cached_hub_config(hf_cache):
    from grpo_rlvr.cli.memory import model_for

    _fake_cache(hf_cache, "mistralai/Mixtral-8x7B-v0.1", MIXTRAL)
    shape = model_for("mistralai/Mixtral-8x7B-v0.1")["shape"]
    assert shape.num_experts == 8 and shape.total_params() == pytest.approx(46.7e9, rel=0.01)


def test_a_fit_error_on_a_guessed_size_says_it_was_a_guess(workspace, hf_cache):
    from grpo_rlvr.validate.report import validate_report

    p = _brief(workspace, {"name_or_path": "my-org/my-model-70b"},
               hardware={"accelerator": "gpu", "num_gpus": 1, "gpu_type": "24GB"})
    with pytest.raises(ConfigError, match="sized for 70B parameters guessed from the model's name"):
        validate_report(p)
