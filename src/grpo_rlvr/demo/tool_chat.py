"""The tiny model's tool-calling chat format: two more special tokens, a chat template that renders a whole tool
conversation, and the ``response_template`` that parses what the model writes back into a message with
``tool_calls``, as TRL's tool loop (``GRPOTrainer(tools=...)``) needs.

The model reads and writes one token per character, so a call costs few tokens: ``<|call|>`` (one token), the
tool's name, then ``key=value`` pairs separated by spaces, and the assistant turn ends with EOS as every turn does.
The tool's reply is its own turn after ``<|tool|>``, and the model answers after a new ``<|assistant|>``::

    <|user|>123+456=<|assistant|><|call|>add a=123 b=456<|eos|><|tool|>579<|assistant|><answer>579</answer><|eos|>

The template renders no tool schema into the prompt: the demo's model has one tool, learns it in the warmup, and
reads 256 positions. It is prefix-preserving (each message renders the same whatever follows it), which TRL's loop
relies on when it appends the tool's reply to the tokens already generated, and its assistant turns sit inside
``{% generation %}`` markers, so ``apply_chat_template(..., return_assistant_tokens_mask=True)`` gives the loss mask
of a multi-turn warmup (the model's own tokens, EOS included; never the tool's reply).

Arguments are parsed as text (``kv-lines``); ``parse_response(..., tools=[add])`` (transformers >= 5.15, which TRL
1.16 passes its tools to) types them from the tool's JSON schema, so ``a=123`` reaches ``add`` as the int 123 and
``a=12x`` stays the string ``"12x"``. transformers keeps ``response_template`` in ``tokenizer_config.json``, so a
model folder saved with this tokenizer parses tool calls after ``AutoTokenizer.from_pretrained`` with nothing set
by hand (``tests/demo/test_tool_chat.py`` holds it to that).
"""

from __future__ import annotations

from grpo_rlvr.demo import tiny_model
from grpo_rlvr.demo.tiny_model import ASSISTANT, EOS, USER

CALL, TOOL = "<|call|>", "<|tool|>"
SPECIAL_TOKENS = [CALL, TOOL]

# A tool call's arguments are a mapping (TRL, apply_chat_template's callers) or, in some datasets, a JSON string:
# both render; the string as it is.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{% if message['role'] == 'user' %}" + USER + "{{ message['content'] }}"
    "{% elif message['role'] == 'assistant' %}" + ASSISTANT + "{% generation %}{{ message['content'] or '' }}"
    "{% for call in message.get('tool_calls') or [] %}"
    "{% set fn = call['function'] if call['function'] is defined else call %}" + CALL + "{{ fn['name'] }}"
    "{% if fn['arguments'] is mapping %}{% for key, value in fn['arguments'].items() %} {{ key }}={{ value }}"
    "{% endfor %}{% elif fn['arguments'] %} {{ fn['arguments'] }}{% endif %}"
    "{% endfor %}" + EOS + "{% endgeneration %}"
    "{% elif message['role'] == 'tool' %}" + TOOL + "{{ message['content'] }}"
    "{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}" + ASSISTANT + "{% endif %}"
)


def _escaped(token: str) -> str:
    import re

    return re.escape(token)


# transformers' response_template (>= 5.13): the assistant turn starts after the last <|assistant|>; each
# <|call|>NAME opens a call (its name captured by the pattern) that ends at EOS or at the next <|call|>; what is
# outside a call is the message's content, up to EOS.
RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": ASSISTANT,
    "fields": {
        "tool_calls": {
            "open_pattern": _escaped(CALL) + r"(?P<name>[A-Za-z_]\w*)",
            "close_pattern": _escaped(EOS) + "|(?=" + _escaped(CALL) + ")",
            "repeats": True,
            "content": "kv-lines",
            "content_args": {"line_sep": " ", "kv_sep": "="},
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
        },
        "content": {"close_pattern": _escaped(EOS), "content": "text"},
    },
}


def build_tokenizer(characters: list[str] | None = None):
    """The tiny model's character tokenizer (``tiny_model.build_tokenizer``) with this format: its two special
    tokens, its chat template and its response template."""
    return tiny_model.build_tokenizer(characters, extra_special_tokens=SPECIAL_TOKENS, chat_template=CHAT_TEMPLATE,
                                      response_template=RESPONSE_TEMPLATE)
