"""The demo on a task nobody here wrote: reasoning-gym's ``spell_backward``, scored by its own ``score_answer``.

``grpo-rlvr demo --task spell_backward`` runs the same pipeline as the arithmetic demo on this task: the rows come
from reasoning-gym's generator (words of 3 to 5 letters, ``data.py``), the correctness reward is the user reward
module ``grpo_rlvr.examples.reasoning_gym.reward:score`` (the task's own verifier, partial credit for a right
prefix), read inside the ``<answer>`` tag. The tiny model's 52-character alphabet has no capitals or brackets and
it reads 256 positions, so the prompt is the task's question lowercased, with other characters dropped
("spell this word backward example: sun -> nus: ohmic"); the verifier gets the entry as the task made it. The oracle
that stands in for the human reviewer is independent of the reward code: it reverses the prompt's last word itself.
Needs the ``reasoning-gym`` extra (``pip install 'grpo-rlvr[reasoning-gym]'``).
"""

from __future__ import annotations

import re

from grpo_rlvr.demo.tiny_model import CHARACTERS

NAME = "spell_backward"
ORACLE_REVIEWER = "oracle:spell-backward-demo"
BRIEF_PACKAGE = "grpo_rlvr.examples.reasoning_gym"
CORRECTNESS = "score"  # the user reward's name, as TRL logs it (rewards/score/mean)
CONFIG = {"min_word_len": 3, "max_word_len": 5}
# Measured (seed 0, 100 held-out words, 4 samples each at temperature 1, the prompts with their spaces): after 400
# steps the warmed-up model reverses 0.062 of them and writes the format 0.27 of the time, and 150 GRPO steps take
# it to 0.39. Reversing is harder for it than one-digit sums, so it gets more warmup than the arithmetic demo's 250.
WARMUP = {"steps": 400, "lr": 1e-3, "batch_size": 32, "label_smoothing": 0.075}
_ALPHABET = set(CHARACTERS)
_WORD = re.compile(r"[a-z]+")


def tiny_prompt(question: str) -> str:
    """The task's question in the tiny model's alphabet: lowercased, other characters dropped."""
    return "".join(c for c in question.lower() if c in _ALPHABET)


def make_rows(n: int, seed: int) -> list[dict]:
    """``n`` rows ``{"prompt": [user message], "answer", "question", "task", "entry"}`` drawn with ``seed``; only
    words of lowercase ASCII letters once lowercased, so that the prompt keeps the whole word."""
    from grpo_rlvr.examples.reasoning_gym.data import make_rows as rg_rows

    rows = rg_rows(NAME, n, seed, CONFIG, keep=lambda e: bool(_WORD.fullmatch(e["metadata"]["word"].lower())))
    for r in rows:
        r["prompt"] = [{"role": "user", "content": tiny_prompt(r["question"])}]
        r["answer"] = r["answer"].lower()
    return rows


def target_completion(answer: str) -> str:
    return f"<answer>{answer}</answer>"


def oracle_judgement(prompt_text: str, completion_text: str) -> tuple[bool, bool]:
    """(well_formed, correct) decided without the reward code: the prompt's last word reversed, exactly."""
    words = _WORD.findall(prompt_text.split(":")[-1])
    if not words:
        raise ValueError(f"not a spell_backward prompt: {prompt_text!r}")
    truth = words[-1][::-1]
    text = completion_text.strip()
    well_formed = text.startswith("<answer>") and text.endswith("</answer>") and text.count("<answer>") == 1
    inner = text[len("<answer>"):-len("</answer>")].strip() if well_formed else ""
    return well_formed, well_formed and inner.lower() == truth
