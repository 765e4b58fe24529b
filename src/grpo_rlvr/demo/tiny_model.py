"""Build the embedded tiny causal LM: a character tokenizer with a chat template and a ~1M-parameter Qwen2.

Everything is made locally and deterministically from a seed; nothing is downloaded. The result is a normal
Hugging Face model directory (``config.json``, ``model.safetensors``, tokenizer files), so every later phase
loads it with ``from_pretrained`` exactly as it would load a hub model.

The tokenizer is Qwen2's own (byte-level BPE) with one token per character and no merges. transformers 5 loads
the tokenizer of any ``qwen2`` model folder as ``Qwen2Tokenizer``, whatever ``tokenizer_config.json`` names, and
that tokenizer maps text to byte-level symbols before the vocabulary lookup (``' '`` → ``'Ġ'``, ``'\n'`` →
``'Ċ'``): a vocabulary spelled in plain characters loses spaces and newlines on reload. So the vocabulary is
spelled in those symbols and the tokenizer built here is the one a reload gives. Two alphabets: ``CHARACTERS``
(the arithmetic and spell_backward demos) and ``CODE_CHARACTERS`` (printable ASCII and newline: enough to write
Python). A character outside the alphabet is dropped on encode, as Qwen2's tokenizer drops what its vocabulary
lacks.
"""

from __future__ import annotations

import json
import logging
import string
from pathlib import Path

log = logging.getLogger(__name__)

# --- vocabulary -------------------------------------------------------------------------------------------
# Special tokens first (ids 0..3), then one token per character. The chat roles are single tokens so the
# template costs two tokens per turn, not a dozen characters.
PAD, EOS, USER, ASSISTANT = "<|pad|>", "<|eos|>", "<|user|>", "<|assistant|>"
SPECIAL_TOKENS = [PAD, EOS, USER, ASSISTANT]
CHARACTERS = list("0123456789+-*=<>/ abcdefghijklmnopqrstuvwxyz?.:\n")
# Printable ASCII (space to '~') and newline: 96 characters, every one Python source needs (indentation is spaces)
CODE_CHARACTERS = [c for c in string.printable if c.isprintable()] + ["\n"]

# A plain chat template: user turns after <|user|>, assistant turns after <|assistant|> and closed by EOS.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{% if message['role'] == 'user' %}" + USER + "{{ message['content'] }}"
    "{% elif message['role'] == 'assistant' %}" + ASSISTANT + "{{ message['content'] }}" + EOS + ""
    "{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}" + ASSISTANT + "{% endif %}"
)

MODEL_SHAPE = {  # ~1.06M parameters: 4 layers, hidden 128
    "hidden_size": 128,
    "intermediate_size": 384,
    "num_hidden_layers": 4,
    "num_attention_heads": 4,
    "num_key_value_heads": 4,
    "max_position_embeddings": 256,
}


def byte_level(ch: str) -> str:
    """The byte-level symbol Qwen2's tokenizer maps a one-byte character to (``' '`` → ``'Ġ'``), from the
    ``tokenizers`` library's own ByteLevel pre-tokenizer."""
    from tokenizers import pre_tokenizers

    ((symbol, _),) = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False).pre_tokenize_str(ch)
    return symbol


def build_tokenizer(characters: list[str] | None = None, extra_special_tokens: list[str] | None = None,
                    chat_template: str = CHAT_TEMPLATE, response_template: dict | None = None):
    """A character-level ``Qwen2Tokenizer`` over ``characters`` (default ``CHARACTERS``), with the chat template
    above: what ``AutoTokenizer`` gives back after ``save_pretrained`` beside a Qwen2 config. Another chat format
    (``tool_chat.build_tokenizer``) adds its ``extra_special_tokens`` after ours and sets ``chat_template`` and a
    ``response_template`` (saved in tokenizer_config.json)."""
    from transformers import Qwen2Tokenizer

    chars = CHARACTERS if characters is None else characters
    if any(len(c.encode()) != 1 for c in chars) or len(set(chars)) != len(chars):
        raise ValueError("tiny model alphabet: each character must be one distinct one-byte (ASCII) character")
    specials = SPECIAL_TOKENS + list(extra_special_tokens or [])
    vocab = {tok: i for i, tok in enumerate(specials + [byte_level(c) for c in chars])}
    tok = Qwen2Tokenizer(vocab=vocab, merges=[], unk_token=None, eos_token=EOS, pad_token=PAD,
                         extra_special_tokens=[t for t in specials if t not in (PAD, EOS)])
    tok.chat_template = chat_template
    if response_template is not None:
        tok.response_template = response_template
    tok.padding_side = "left"
    return tok


def build_model(tokenizer, seed: int, shape: dict | None = None):
    """A freshly initialised Qwen2 causal LM sized for the character vocabulary (``shape`` overrides
    ``MODEL_SHAPE`` keys: the GPU smoke test and the sampling benchmark build larger ones)."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
        tie_word_embeddings=True,
        **{**MODEL_SHAPE, **(shape or {})},
    )
    model = Qwen2ForCausalLM(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    return model


def save_pretrained(model, tokenizer, out_dir: Path, meta: dict) -> Path:
    """Write model + tokenizer + a provenance file into ``out_dir`` atomically (via a sibling temp dir)."""
    from grpo_rlvr.files import atomic_directory

    with atomic_directory(out_dir) as tmp:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        (tmp / "grpo_rlvr_model.json").write_text(json.dumps(meta, indent=2) + "\n")
    return out_dir
