"""The tiny model's tokenizer keeps every character of its alphabet after save_pretrained and a reload with
AutoTokenizer (transformers loads a qwen2 folder's tokenizer as Qwen2Tokenizer, byte-level: a vocabulary spelled
in plain characters lost ' ' and '\\n' there)."""

from __future__ import annotations

import pytest
from transformers import AutoTokenizer

from grpo_rlvr.demo import tiny_model

TEXTS = ["a b\nc", " leading and trailing ", "two  spaces\n\nand a blank line\n", "\n", " ",
         "spell this word backward example: sun -> nus: ohmic", "3+4=<answer>7</answer>"]
CODE_TEXTS = ["def f(x):\n    return x*3+1\n", "```python\nprint('a b', {\"k\": [1, 2]})\n```",
              "if x != y:  # why\n\tpass"]


@pytest.fixture(scope="module", params=["CHARACTERS", "CODE_CHARACTERS"])
def saved(request, tmp_path_factory):
    """(alphabet, the tokenizer as built, the tokenizer AutoTokenizer reloads from the saved model folder)."""
    chars = getattr(tiny_model, request.param)
    tok = tiny_model.build_tokenizer() if request.param == "CHARACTERS" else tiny_model.build_tokenizer(chars)
    d = tmp_path_factory.mktemp("tiny") / "model"
    tiny_model.save_pretrained(tiny_model.build_model(tok, seed=0), tok, d, {"seed": 0})
    return chars, tok, AutoTokenizer.from_pretrained(d)


def test_every_character_of_the_alphabet_round_trips_after_reload(saved):
    chars, built, loaded = saved
    assert len(loaded) == len(built) == len(tiny_model.SPECIAL_TOKENS) + len(chars)
    for ch in chars:
        ids = loaded(ch, add_special_tokens=False)["input_ids"]
        assert len(ids) == 1 and loaded.decode(ids) == ch, repr(ch)
        assert built(ch, add_special_tokens=False)["input_ids"] == ids, repr(ch)
    whole = "".join(chars)
    ids = loaded(whole, add_special_tokens=False)["input_ids"]
    assert len(ids) == len(chars) and loaded.decode(ids) == whole


def test_spaces_and_newlines_round_trip_after_reload(saved):
    chars, built, loaded = saved
    texts = TEXTS + (CODE_TEXTS if "(" in chars else [])
    for text in texts:
        kept = "".join(c for c in text if c in chars)   # '\t' is outside both alphabets
        ids = loaded(text, add_special_tokens=False)["input_ids"]
        assert loaded.decode(ids) == kept and len(ids) == len(kept), repr(text)
        assert built(text, add_special_tokens=False)["input_ids"] == ids
    assert loaded.tokenize("a b\nc") == ["a", "Ġ", "b", "Ċ", "c"]   # the byte-level symbols of ' ' and '\n'


def test_the_chat_template_keeps_the_prompts_whitespace(saved):
    _, _, loaded = saved
    ids = loaded.apply_chat_template([{"role": "user", "content": "x y\nz"}], add_generation_prompt=True,
                                     tokenize=True)
    ids = list(ids["input_ids"] if hasattr(ids, "keys") else ids)
    assert loaded.decode(ids) == f"{tiny_model.USER}x y\nz{tiny_model.ASSISTANT}"
    assert ids[0] == loaded.convert_tokens_to_ids(tiny_model.USER) and len(ids) == 7


def test_an_alphabet_of_other_than_one_byte_characters_is_refused():
    with pytest.raises(ValueError, match="one-byte"):
        tiny_model.build_tokenizer(["a", "é"])
