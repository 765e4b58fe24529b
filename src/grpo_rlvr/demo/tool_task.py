"""The demo's tool-use task: sums of 2- and 3-digit numbers, with a calculator tool the model may call.

A prompt is the user turn ``"123+456="``; a correct completion calls the tool and answers from its reply::

    <|call|>add a=123 b=456      (the model's turn, closed by EOS)
    <|tool|>579                  (the tool's reply: masked out of the loss)
    <answer>579</answer>         (the model's answer, after a new <|assistant|>)

or answers directly (``<answer>579</answer>``), which a 1M-parameter model gets right only by luck. The rewards read
the last assistant message (format: the tag; exact_match: the number in it), so a sum is worth the same whichever way
it was reached: the tool pays because it is right more often, and GRPO has that to find. The tool is
``grpo_rlvr.examples.tool.tools:add``, offered to TRL as ``GRPOTrainer(tools=[add])``.

The warmup (``demonstrations``) trains on conversations: ``TOOL_SHARE`` (half) of the rows call the tool and answer
from its reply, the rest answer directly with the right sum; the loss is on the model's own turns only. So the warmed model
calls the tool sometimes and copies its reply sometimes, and GRPO raises both.

The oracle that stands in for the human reviewer is independent of the reward code and of the tool: it recomputes
the sum from the prompt and reads ``<answer>N</answer>`` itself.
"""

from __future__ import annotations

import random
import re

from grpo_rlvr.demo.arithmetic_task import number_read
from grpo_rlvr.examples.tool.tools import add

NAME = "tool"
ORACLE_REVIEWER = "oracle:tool-demo"
BRIEF_PACKAGE = "grpo_rlvr.examples.tool"
TOOLS = [add]            # what the brief's tools section names (grpo_rlvr.examples.tool.tools:add)
OPERANDS = (10, 999)     # each operand has 2 or 3 digits
TOOL_SHARE = 0.5         # share of the warmup's rows that demonstrate the tool
# At 0.3, seed 2's warmed model got 18% of its tool rollouts right (it miscopied the reply) while its direct answers
# were well-formed 71% of the time, so the format reward paid answering without the tool about as well, and GRPO
# trained the calls away (accuracy 0.085 → 0.045, tool calls 0.235 → 0.030). At 0.5 its tool rollouts are right 44%
# of the time, and the tool pays.
# Measured at seed 0 (TOOL_SHARE 0.3): 300 steps at smoothing 0.05 left a model that miscopies the tool's reply
# (sampled accuracy 0.000, tool-call rate 0.29: preflight routes to SFT); 1000 steps at 0.02 copies it often enough
# (preflight pass@1 0.090, sampled accuracy 0.095 at temperature 1, tool-call rate 0.25).
WARMUP = {"steps": 1000, "lr": 1e-3, "batch_size": 32, "label_smoothing": 0.02}


def make_rows(n: int, seed: int) -> list[dict]:
    """``n`` rows ``{"prompt": [user message], "answer": "579"}`` drawn with ``seed``."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        a, b = rng.randint(*OPERANDS), rng.randint(*OPERANDS)
        rows.append({"prompt": [{"role": "user", "content": f"{a}+{b}="}], "answer": str(a + b)})
    return rows


def target_completion(answer: str) -> str:
    return f"<answer>{answer}</answer>"


def tool_conversation(row: dict) -> list[dict]:
    """The row's prompt, then a call of ``add`` with the prompt's numbers, the tool's reply and the answer from it."""
    a, b = _operands(row["prompt"][-1]["content"])
    reply = add(a, b)
    return [*row["prompt"],
            {"role": "assistant", "content": "",
             "tool_calls": [{"type": "function", "function": {"name": "add", "arguments": {"a": a, "b": b}}}]},
            {"role": "tool", "name": "add", "content": str(reply)},
            {"role": "assistant", "content": target_completion(str(reply))}]


def demonstrations(rows: list[dict], seed: int, tool_share: float = TOOL_SHARE) -> list[list[dict]]:
    """The warmup's conversations: a ``tool_share`` of the rows (drawn with ``seed``) call the tool, the others
    answer directly."""
    rng = random.Random(seed)
    return [tool_conversation(r) if rng.random() < tool_share
            else [*r["prompt"], {"role": "assistant", "content": target_completion(r["answer"])}] for r in rows]


# --- the oracle ---------------------------------------------------------------------------------------------------

_PROMPT = re.compile(r"^(\d+)\+(\d+)=$")


def _operands(prompt_text: str) -> tuple[int, int]:
    m = _PROMPT.match(prompt_text.strip())
    if m is None:
        raise ValueError(f"not a tool-task prompt: {prompt_text!r}")
    return int(m.group(1)), int(m.group(2))


def oracle_judgement(prompt_text: str, completion_text: str) -> tuple[bool, bool]:
    """(well_formed, correct) of the final answer, decided without the reward code or the tool: exactly one
    ``<answer>…</answer>`` and nothing around it, and inside it the prompt's sum, recomputed here, as a person reads a
    number (``579.`` ends a sentence: it is 579)."""
    a, b = _operands(prompt_text)
    text = completion_text.strip()
    well_formed = text.startswith("<answer>") and text.endswith("</answer>") and text.count("<answer>") == 1 \
        and text.count("</answer>") == 1
    inner = text[len("<answer>"):-len("</answer>")] if well_formed else ""
    return well_formed, well_formed and number_read(inner) == a + b   # "579." is 579, as in the arithmetic demo
