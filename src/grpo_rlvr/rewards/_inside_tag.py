"""Correctness reads what format checks: the one place a brief's correctness rewards are tied to its format.

When a brief's ``format`` reward defines an answer tag, the brief loader (``with_brief_format``) copies that
reward's params into every correctness reward's ``format`` param: the built-in ``math``, ``exact_match``,
``tool_call``, ``json_schema`` and ``unit_tests`` (also when wrapped by ``length_penalty``), and user rewards that
opt in with ``require_format: true``. ``build_reward`` then wraps the reward (``inside_tag``): a completion that
is not well-formed by the format's rules scores 0 with the reason ("no <answer> tag", "malformed, answer not
counted: text after </answer>: '…'"), and a well-formed one is scored on the text inside the tag only, so an
answer outside the tag, or a second answer in the reasoning before it, is never read. ``require_format: false``
on a reward opts it out (it then reads the whole completion). ``math`` and ``exact_match`` given
``extract: tag`` without a brief's format check their own tag the same way.
"""

from __future__ import annotations

from grpo_rlvr.errors import RewardError
from grpo_rlvr.rewards._reward import Reward, Scored, source_fingerprint
from grpo_rlvr.rewards.format import Structure, not_counted

# Built-in correctness rewards that read an answer, and so read it inside the brief's format tag by default.
ANSWER_READERS = ("math", "exact_match", "json_schema", "tool_call", "unit_tests")
# Params every answer reader (and a user reward) takes besides its own; build_reward handles them.
PARAMS = {
    "require_format": "score the answer only inside the brief's format tag, and 0 when the completion is not "
                      "well-formed (default true; false reads the whole completion; a user reward opts in with "
                      "true)",
    "format": "the params of the brief's format reward (tag, pattern, allow_text_before); the brief "
              "loader fills it in, do not set it by hand",
}


def brief_structure(specs: list[tuple[str, dict]]) -> dict | None:
    """The params of the brief's first ``format`` reward when it defines an answer tag, else None.
    ``specs``: (name, params) in brief order."""
    for name, params in specs:
        if name != "format":
            continue
        try:
            s = Structure.build("format", params.get("tag", "answer"), params.get("pattern"),
                                params.get("allow_text_before", False))
        except RewardError:
            return None  # the format reward itself reports it
        return s.params() if s.tagged else None
    return None


def with_brief_format(specs: list[tuple[str, dict]]) -> tuple[list[dict], list[str]]:
    """Each spec's params with ``format`` filled in where the reward reads inside the brief's format tag, and
    the problems found (a user reward asking for ``require_format`` in a brief with no tagged format)."""
    fmt = brief_structure(specs)
    out, problems = [], []
    for i, (name, params) in enumerate(specs):
        params = dict(params)
        user = ":" in name or name.endswith(".py")
        if name == "length_penalty" and params.get("reward", "exact_match") in ANSWER_READERS:
            inner = dict(params.get("reward_params") or {})
            if fmt is not None and inner.get("require_format", True) is not False:
                inner.setdefault("format", fmt)
                params["reward_params"] = inner
        elif name in ANSWER_READERS or (user and params.get("require_format") is True):
            if fmt is not None and params.get("require_format", True) is not False:
                params.setdefault("format", fmt)
            elif fmt is None and user:
                problems.append(f"rewards[{i}].params.require_format: true, but the brief has no format reward "
                                "with an answer tag to read inside; add one (`name: format`) or drop the param")
        out.append(params)
    return out, problems


def take_params(name: str, params: dict, user: bool) -> tuple[Structure | None, dict]:
    """Pop the shared params from ``params``: the structure to read inside (None: the whole completion), and
    what is left for the reward's own factory.

    Raises:
        RewardError: a bad ``require_format`` or ``format``.
    """
    params = dict(params)
    if not user and name not in ANSWER_READERS:
        return None, params
    require = params.pop("require_format", not user)
    fmt = params.pop("format", None)
    if not isinstance(require, bool):
        raise RewardError(f"reward {name!r}: params.require_format is {require!r}; use true or false")
    if fmt is None and name in ("math", "exact_match") and params.get("extract") == "tag":
        fmt = {"tag": params.get("tag", "answer")}  # its own tag, checked as the format checks it
        if require:
            params["extract"] = "auto"  # the wrapper hands over the tag's content
    if fmt is None or not require:
        return None, params
    if not isinstance(fmt, dict) or set(fmt) - {"tag", "pattern", "allow_text_before"}:
        raise RewardError(f"reward {name!r}: params.format is {fmt!r}; it holds the brief's format params "
                          "(tag, pattern, allow_text_before) and is filled in by the brief loader")
    return Structure.build(name, **fmt), params


def inside_tag(reward: Reward, structure: Structure, params: dict) -> Reward:
    """``reward`` scoring only the inside of ``structure``'s tag, 0 with the reason for a malformed completion.
    ``params``: every param as the brief gives it (the shared ones too), recorded as the reward's params."""
    inner = reward.scorer

    def scorer(texts: list[str], rows: list[dict]) -> list[Scored]:
        out: list[Scored | None] = [None] * len(texts)
        keep = []
        for i, text in enumerate(texts):
            content, problem = structure.split(text)
            if problem is not None:
                out[i] = Scored(0.0, not_counted(problem, structure.tag))
            else:
                keep.append((i, content))
        if keep:
            got = inner([c for _, c in keep], [rows[i] for i, _ in keep])
            for (i, _), s in zip(keep, got, strict=True):
                out[i] = s
        return out  # type: ignore[return-value]

    fp = source_fingerprint(inside_tag, Structure, extra={"inner": reward.fingerprint, **structure.params()})
    return Reward(reward.name, reward.kind, params, scorer, fp, columns=reward.columns, notes=reward.notes,
                  warmer=reward.warmer, check_row=reward.check_row)
