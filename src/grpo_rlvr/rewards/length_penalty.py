"""``length_penalty``: wrap any reward and subtract a penalty for length beyond a budget.

Modes (length in tokens when the trainer passes ``completion_ids`` or a ``tokenizer`` is given, else in
characters with ``unit="chars"``):

- ``linear``: penalty = weight × min(1, (length − budget) / budget) once over budget.
- ``soft_overlong`` (DAPO's soft overlong punishment): no penalty up to budget − cache; a penalty rising
  linearly to weight between budget − cache and budget; the full weight beyond budget.

The wrapped reward's kind is kept, so a wrapped correctness reward still counts as correctness at the gate.
"""

from __future__ import annotations

from collections.abc import Callable

from grpo_rlvr.errors import RewardError
from grpo_rlvr.rewards._reward import Reward, Scored, source_fingerprint

MODES = ("linear", "soft_overlong")
UNITS = ("tokens", "chars")


def length_penalty_reward(reward: str = "exact_match", reward_params: dict | None = None, budget: int = 512,
                          unit: str = "tokens", mode: str = "soft_overlong", cache: int | None = None,
                          weight: float = 1.0, tokenizer: str | None = None, *,
                          build: Callable[[str, dict], Reward] | None = None) -> Reward:
    """Build a length-penalized version of ``reward``.

    Args:
        reward: the wrapped reward's name (a built-in or a user reward reference).
        reward_params: its parameters.
        budget: the length budget (``max_completion_length`` for DAPO's form).
        unit: ``tokens`` (uses ``completion_ids``, or ``tokenizer`` when ids are absent) or ``chars``.
        mode: ``linear`` or ``soft_overlong``.
        cache: soft_overlong's interval below the budget where the penalty ramps up (default budget / 4).
        weight: the largest penalty.
        tokenizer: a tokenizer path/id for counting tokens outside training (inspection, gate, score).
        build: how the wrapped reward is built from its name and params (the registry passes its own
            ``build_reward``; this module does not import the registry that lists it).
    Raises:
        RewardError: bad parameters or an unknown wrapped reward.
    """
    problems = []
    if mode not in MODES:
        problems.append(f"params.mode is {mode!r}; use one of {', '.join(MODES)}")
    if unit not in UNITS:
        problems.append(f"params.unit is {unit!r}; use one of {', '.join(UNITS)}")
    if not isinstance(budget, int) or budget < 1:
        problems.append(f"params.budget is {budget!r}; use a positive integer")
    cache = cache if cache is not None else max(1, (budget if isinstance(budget, int) else 4) // 4)
    if not isinstance(cache, int) or not 0 < cache <= (budget if isinstance(budget, int) else 0):
        problems.append(f"params.cache is {cache!r}; use an integer in (0, budget]")
    if not isinstance(weight, (int, float)) or weight < 0:
        problems.append(f"params.weight is {weight!r}; use a number ≥ 0")
    if reward == "length_penalty":
        problems.append("params.reward cannot be length_penalty itself")
    if build is None:
        problems.append("it wraps another reward, so build it by name: grpo_rlvr.rewards.build_reward('length_penalty', "
                        "params)")
    if problems:
        raise RewardError("reward 'length_penalty': " + "; ".join(problems))
    inner = build(reward, reward_params or {})
    tok = None
    if unit == "tokens" and tokenizer:
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(tokenizer)

    def length_of(text: str, row: dict) -> int:
        if unit == "chars":
            return len(text)
        ids = row.get("completion_ids")
        if ids is not None:
            return len(ids)
        if tok is not None:
            return len(tok(text, add_special_tokens=False)["input_ids"])
        raise RewardError("reward 'length_penalty': unit 'tokens' needs completion_ids (passed by the trainer) or "
                          "params.tokenizer to count tokens outside training; or use unit: chars")

    def penalty(n: int) -> float:
        if mode == "linear":
            return weight * min(1.0, max(0, n - budget) / budget)
        start = budget - cache
        if n <= start:
            return 0.0
        if n >= budget:
            return weight
        return weight * (n - start) / cache

    def scorer(texts: list[str], rows: list[dict]) -> list[Scored]:
        base = inner.scorer(texts, rows)
        out = []
        for text, row, s in zip(texts, rows, base, strict=True):
            n = length_of(text, row)
            p = penalty(n)
            if s.score is None:
                out.append(s)
            elif p:
                out.append(Scored(s.score - p, f"{s.reason}; length {n} {unit} > {budget - (cache if mode == 'soft_overlong' else 0)}: −{p:.3f}"))
            else:
                out.append(Scored(s.score, f"{s.reason}; length {n} {unit} within budget"))
        return out

    params = {"reward": reward, "reward_params": reward_params or {}, "budget": budget, "unit": unit, "mode": mode,
              "cache": cache, "weight": weight, "tokenizer": tokenizer}
    return Reward("length_penalty", inner.kind, params, scorer,
                  source_fingerprint(length_penalty_reward, extra={**params, "inner": inner.fingerprint}),
                  columns=inner.columns, warmer=inner.warmer, check_row=inner.check_row)
