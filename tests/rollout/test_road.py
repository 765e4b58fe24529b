"""The rollout road samples with the trainer that trains: one brief with ``model_init_kwargs``, ``model.dtype``,
``model.attn_implementation``, ``generation_kwargs``, a system prompt and a chat-template kwarg; the objects the
rollout road built and the ones the rendered ``train.py`` builds (its own constants, through the builder its
``main`` calls) are compared on what each actually used: the loaded model (config, layer count, dtype, attention),
the prompt token ids, and the sampling settings. Real TRL, real tiny model, no training step."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest
import yaml

from briefs import brief_for
from grpo_rlvr.brief import load_brief
from grpo_rlvr.dataset.rows import load_rows
from grpo_rlvr.messages import final_text
from grpo_rlvr.rollout import road
from grpo_rlvr.rollout.trajectory import Trajectory, turns

# Writes every message, and <t> when the template kwarg `think` is set: the prompt shows both.
TEMPLATE = ("{% for m in messages %}{% if m['role'] == 'system' %}{{ m['content'] }}:{% elif m['role'] == 'user' %}"
            "<|user|>{{ m['content'] }}{% else %}<|assistant|>{{ m['content'] }}<|eos|>{% endif %}{% endfor %}"
            "{% if think is defined and think %}<t>{% endif %}{% if add_generation_prompt %}<|assistant|>{% endif %}")
SETTINGS = {"model": {"name_or_path": "./model-t", "dtype": "bfloat16", "attn_implementation": "eager"},
            "prompt": {"system": "be-brief"},
            "grpo": {"model_init_kwargs": {"num_hidden_layers": 2}, "generation_kwargs": {"max_new_tokens": 3},
                     "chat_template_kwargs": {"think": True}}}


@pytest.fixture
def brief_path(workspace, tiny_model_dir):
    from transformers import AutoTokenizer

    model = workspace / "model-t"
    shutil.copytree(tiny_model_dir, model)
    tok = AutoTokenizer.from_pretrained(model)
    tok.chat_template = TEMPLATE
    tok.save_pretrained(model)
    return brief_for(workspace, "road", SETTINGS)


def training_trainer(run):
    """The trainer the rendered train.py builds, from its own constants and through the call its main() makes."""
    from grpo_rlvr.rewards import build_reward
    from grpo_rlvr.trainer.trainer_build import build_trainer, grpo_config

    source = (run / "train.py").read_text()
    main = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == "main")
    assert "build_trainer(\n            SETUP, config, rewards, train_dataset, eval_dataset," in ast.get_source_segment(
        source, main), "train.py no longer builds its trainer through build_trainer(SETUP, config, ...)"
    namespace = {"__file__": str(run / "train.py"), "__name__": "rendered_train"}
    exec(compile(source, str(run / "train.py"), "exec"), namespace)   # constants and load_split; main() not run
    cfg = yaml.safe_load((run / "grpo_config.yaml").read_text())
    cfg["output_dir"] = str(run / cfg["output_dir"])
    rewards = [build_reward(r["name"], r["params"], kind=r["kind"]) for r in namespace["REWARDS"]]
    return build_trainer(namespace["SETUP"], grpo_config(cfg), rewards, namespace["load_split"](namespace["DATASET"]))


def test_inspect_and_training_sample_with_the_same_objects(brief_path, workspace):
    from grpo_rlvr.run.render import render

    brief = load_brief(brief_path)
    assert brief.grpo["model_init_kwargs"] == {"num_hidden_layers": 2, "dtype": "bfloat16",
                                               "attn_implementation": "eager"}
    rows = load_rows(brief)[:2]
    drawn = road.roll_out(brief, rows, 8, seed=5)
    sampler = road._kept[1]
    trainer = training_trainer(render(brief_path, out=workspace / "run").dir)

    # the loaded model: what TRL loaded with model_init_kwargs, the same on both roads
    for t in (sampler, trainer):
        assert t.model.config.num_hidden_layers == 2 and len(t.model.model.layers) == 2
        assert str(t.model.dtype) == "torch.bfloat16" and t.model.config._attn_implementation == "eager"
    assert sampler.model.config.to_dict() == trainer.model.config.to_dict()
    assert type(sampler.model) is type(trainer.model)

    # the sampling settings: TRL's generation config, generation_kwargs, chat template kwargs, stop tokens
    assert sampler.generation_config.to_dict() == trainer.generation_config.to_dict()
    assert sampler.generation_kwargs == trainer.generation_kwargs
    assert sampler.chat_template_kwargs == trainer.chat_template_kwargs == {"think": True}
    assert sampler.eos_token_ids == trainer.eos_token_ids
    for key in ("temperature", "top_p", "top_k", "min_p", "repetition_penalty", "max_completion_length",
                "generation_kwargs", "chat_template_kwargs", "model_init_kwargs", "use_vllm"):
        assert getattr(sampler.args, key) == getattr(trainer.args, key), key

    # the prompt token ids the rollout actually generated from are the ones the trainer renders for that row
    first = drawn.trajectories[0]
    assert list(first.prompt_ids) == list(trainer._tokenize_prompts([rows[0]["prompt"]])[0][0])
    shown = trainer.processing_class.decode(list(first.prompt_ids))
    assert shown.startswith("be-brief:") and shown.endswith("<t><|assistant|>")
    # generation_kwargs over max_completion_length, as TRL applies them: at most 3 new tokens
    assert all(len(t.completion_ids) <= 3 for t in drawn.trajectories)
    assert len(drawn.trajectories) == 16 and drawn.prompt_index == [0] * 8 + [1] * 8
    assert drawn.engine.name == "transformers" and drawn.engine.settings["dtype"] == "bfloat16"

    # the rollout trainer's temporary output_dir goes with it (430 were left in /tmp by the suite before)
    kept_dir = Path(sampler.args.output_dir)
    assert kept_dir.is_dir() and kept_dir.name.startswith("grpo-rlvr-rollout-")
    road.release()
    assert not kept_dir.exists()


def test_a_trajectory_keeps_every_message_and_reads_the_final_answer():
    prompt = [{"role": "system", "content": "s"}, {"role": "user", "content": "u1"},
              {"role": "assistant", "content": "a1"}, {"role": "user", "content": "u2"}]
    completion = [{"role": "assistant", "content": "", "tool_calls": [
                      {"type": "function", "function": {"name": "add", "arguments": {"a": 1, "b": 2}}}]},
                  {"role": "tool", "name": "add", "content": "3"},
                  {"role": "assistant", "content": "<answer>3</answer>"}]
    t = Trajectory(prompt, completion, (1, 2), (5, 6, 7, 8), (1, 1, 0, 1), "eos")
    assert t.text == final_text(completion) == "<answer>3</answer>" and t.num_tokens == 3 and t.tool_calls == 1
    assert t.messages == [*prompt, *completion]
    assert turns(prompt) == [("system", "s"), ("user", "u1"), ("assistant", "a1"), ("user", "u2")]
    assert turns(completion) == [("assistant → call", 'add {"a": 1, "b": 2}'), ("tool add", "3"),
                                 ("assistant", "<answer>3</answer>")]
    assert Trajectory.from_record(t.to_record()) == t
    assert turns("plain text") == [("", "plain text")]


def test_the_engine_follows_training_and_vllm_where_it_is_missing_names_the_fix(workspace):
    from grpo_rlvr.errors import MachineError

    plain = load_brief(workspace / "brief.yaml")
    assert road.choose_engine(plain) == "transformers"
    colocate = load_brief(brief_for(workspace, "colocate", {"grpo": {"use_vllm": True}}))
    assert road.choose_engine(colocate) == "transformers", "vLLM is not installed in this lane"
    asked = load_brief(brief_for(workspace, "asked", {"sampling": {"engine": "vllm"}}))
    with pytest.raises(MachineError, match="sampling.engine: 'vllm', but vLLM is not installed here"):
        road.choose_engine(asked)


def test_the_rollout_config_changes_only_what_cannot_reach_a_sample(workspace):
    from grpo_rlvr.brief.bound_settings import UNBOUND
    from grpo_rlvr.rollout.trainer_setup import grpo_config_dict

    brief = load_brief(workspace / "brief.yaml")
    rendered = grpo_config_dict(brief)
    rolled = road.rollout_config(brief, seed=11, engine="transformers")
    changed = {k for k in set(rendered) | set(rolled) if rendered.get(k) != rolled.get(k)}
    # beta weighs the loss, seed is the phase's own, use_cpu picks the device on a machine without a GPU, and a
    # rollout pushes nothing to the Hub nor reloads a best checkpoint; the rest is logging, saving and evaluation
    # cadence (UNBOUND: shown not to change what is sampled)
    assert changed - set(UNBOUND) <= {"seed", "use_cpu", "fp16", "use_vllm", "push_to_hub",
                                      "load_best_model_at_end"}, changed - set(UNBOUND)
    assert rolled["beta"] == 0.0 and rolled["seed"] == 11
