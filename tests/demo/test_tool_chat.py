"""The tiny model's tool-calling chat format, checked by TRL's own checks and parser, before and after a save and an
``AutoTokenizer`` reload: TRL's ``GRPOTrainer(tools=...)`` accepts it (it renders a whole tool conversation, it is
prefix-preserving, it ends its turns on a trained stop token), ``parse_response`` turns what the model writes into
a message with typed ``tool_calls``, and TRL's own tool-reply suffix is ``<|tool|>REPLY<|assistant|>``. No training
(the trainer is built, never stepped)."""

from __future__ import annotations

import pytest
from transformers import AutoTokenizer
from trl.chat_template_utils import (
    is_chat_template_prefix_preserving,
    is_chat_template_stop_token_trained,
    parse_response,
    supports_tool_calling,
)

from grpo_rlvr.demo import tiny_model, tool_chat, tool_task
from grpo_rlvr.examples.tool.tools import add


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """An untrained tiny model with the tool-calling format, saved like any Hugging Face model."""
    tok = tool_chat.build_tokenizer()
    d = tmp_path_factory.mktemp("tool") / "model"
    tiny_model.save_pretrained(tiny_model.build_model(tok, seed=0), tok, d, {"seed": 0})
    return d


@pytest.fixture(scope="module", params=["built", "reloaded"])
def tok(request, folder):
    return tool_chat.build_tokenizer() if request.param == "built" else AutoTokenizer.from_pretrained(folder)


def _ids(tok, text: str) -> list[int]:
    return tok(text, add_special_tokens=False)["input_ids"]


def _prompt_ids(tok, content: str = "123+456=") -> list[int]:
    return list(tok.apply_chat_template([{"role": "user", "content": content}], add_generation_prompt=True,
                                        tokenize=True, return_dict=False))


def test_trl_accepts_the_template_for_its_tool_loop(tok):
    assert supports_tool_calling(tok) and is_chat_template_prefix_preserving(tok)
    assert is_chat_template_stop_token_trained(tok)     # each assistant turn's EOS is in the loss mask


def test_a_tool_conversation_renders_in_the_compact_format(tok):
    row = {"prompt": [{"role": "user", "content": "123+456="}], "answer": "579"}
    text = tok.apply_chat_template(tool_task.tool_conversation(row), tokenize=False, tools=[add])
    assert text == ("<|user|>123+456=<|assistant|><|call|>add a=123 b=456<|eos|><|tool|>579<|assistant|>"
                    "<answer>579</answer><|eos|>")
    ids = _ids(tok, text)
    # 4 headers + <|call|> + 2 EOS as one token each, 46 characters as one token each
    assert len(ids) == 53 and ids.count(tok.convert_tokens_to_ids(tool_chat.CALL)) == 1   # one token per character


def test_the_response_template_is_saved_with_the_tokenizer(folder):
    """transformers keeps ``response_template`` in tokenizer_config.json: nothing is set by hand after a reload."""
    loaded = AutoTokenizer.from_pretrained(folder)
    assert loaded.response_template == tool_chat.RESPONSE_TEMPLATE
    assert loaded.chat_template == tool_chat.CHAT_TEMPLATE
    assert len(loaded) == len(tiny_model.SPECIAL_TOKENS) + 2 + len(tiny_model.CHARACTERS)
    plain = tiny_model.build_tokenizer()   # the other demos' tokenizer is unchanged: no tool tokens, no parser
    assert getattr(plain, "response_template", None) is None and len(plain) == len(loaded) - 2


@pytest.mark.parametrize("written, expected", [
    ("<|call|>add a=123 b=456<|eos|>",
     {"role": "assistant", "content": "",
      "tool_calls": [{"type": "function", "function": {"name": "add", "arguments": {"a": 123, "b": 456}}}]}),
    ("<answer>579</answer><|eos|>", {"role": "assistant", "content": "<answer>579</answer>"}),
    ("<|call|>add a=12x b=4<|eos|>",     # typed by add's schema: what is not an int stays text (add refuses it)
     {"role": "assistant", "content": "",
      "tool_calls": [{"type": "function", "function": {"name": "add", "arguments": {"a": "12x", "b": 4}}}]}),
    ("<|call|>add a=1 b=2<|call|>add a=3 b=4<|eos|>",
     {"role": "assistant", "content": "",
      "tool_calls": [{"type": "function", "function": {"name": "add", "arguments": {"a": 1, "b": 2}}},
                     {"type": "function", "function": {"name": "add", "arguments": {"a": 3, "b": 4}}}]}),
    ("<|call|>add a=12",                 # cut by the completion budget: still a call, add then says b is missing
     {"role": "assistant", "content": "",
      "tool_calls": [{"type": "function", "function": {"name": "add", "arguments": {"a": 12}}}]}),
    ("to <|call|> 1<|eos|>", {"role": "assistant", "content": "to <|call|> 1"}),   # no tool name: plain text
])
def test_trl_parses_what_the_model_writes(tok, written, expected):
    assert parse_response(tok, _ids(tok, written), prefix=_prompt_ids(tok), tools=[add]) == expected


def test_the_parser_reads_only_the_turn_after_the_last_assistant_header(tok):
    """After the tool's reply TRL parses the new turn with the whole conversation as its prefix."""
    prefix = _ids(tok, "<|user|>1+2=<|assistant|><|call|>add a=1 b=2<|eos|><|tool|>3<|assistant|>")
    assert parse_response(tok, _ids(tok, "<answer>3</answer><|eos|>"), prefix=prefix, tools=[add]) == \
        {"role": "assistant", "content": "<answer>3</answer>"}


def test_the_warmup_trains_the_models_turns_and_never_the_tools_reply(tok):
    row = {"prompt": [{"role": "user", "content": "123+456="}], "answer": "579"}
    out = tok.apply_chat_template(tool_task.tool_conversation(row), tokenize=True, return_dict=True,
                                  return_assistant_tokens_mask=True, tools=[add])
    trained = "".join(tok.decode([i]) if m else "_" for i, m in zip(out["input_ids"], out["assistant_masks"],
                                                                     strict=True))
    # the prompt (<|user|>, 8 characters, <|assistant|>) and the tool turn (<|tool|>579<|assistant|>) train nothing
    assert trained == "_" * 10 + "<|call|>add a=123 b=456<|eos|>" + "_" * 5 + "<answer>579</answer><|eos|>"


def test_trls_trainer_takes_the_tool_and_appends_its_reply_as_the_template_renders_it(folder, tmp_path):
    """GRPOTrainer(tools=[add]) on the saved model: it keeps the model's own template (TRL swaps in a training
    template for one that is not prefix-preserving) and the tokens it appends after a call are the tool's turn
    and the next assistant header, nothing else."""
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    config = GRPOConfig(output_dir=str(tmp_path), use_cpu=True, report_to="none", per_device_train_batch_size=8,
                        num_generations=8, max_completion_length=48)
    trainer = GRPOTrainer(model=str(folder), reward_funcs=lambda completions, **kw: [0.0] * len(completions),
                          args=config, train_dataset=Dataset.from_list([{"prompt": [{"role": "user",
                                                                                     "content": "1+2="}]}]),
                          tools=[add])
    assert trainer.chat_template is None and trainer.tools == [add]
    suffix = trainer._get_tool_suffix_ids([{"role": "tool", "name": "add", "content": "579"}])
    assert trainer.processing_class.decode(suffix) == "<|tool|>579<|assistant|>"


def test_the_tool_refuses_what_is_not_a_whole_number():
    """A value the parser could not type arrives as text; add raises, and TRL sends the error back as the reply."""
    assert add(123, 456) == 579
    for a, b in (("12x", 4), (1, "2"), (1.5, 2)):
        with pytest.raises(TypeError, match="two whole numbers"):
            add(a, b)
