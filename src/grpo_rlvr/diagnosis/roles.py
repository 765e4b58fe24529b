"""The role of each reward a run logged (``rewards/<name>/mean``): *format*, *correctness*, *length* or *other*.
The detectors work from roles, so a plain TRL run whose rewards carry their authors' names is diagnosed like
a grpo-rlvr run.

Where a role comes from, first that applies:
1. ``--role NAME=ROLE`` (stated by the user);
2. the run's brief lock (grpo-rlvr's reward kinds: format, correctness; shaping rewards named for length);
3. the name, split into words at ``_ - . /``, spaces, camelCase and digits (``xmlcount`` and
   ``strictFormat`` work too): length words (length, len, overlong, long, short, concise, verbose, …) win over
   format words (format, structure, tag, xml, think, int, …), which win over correctness words (accuracy,
   correct, exact, math, pass, test, answer, code, verify, …), so ``match_format_exactly`` is a format
   reward and ``soft_overlong_punishment`` a length one;
4. behaviour, for names that say nothing (``reward_func``, ``r2``):
   - *binary*: its values take two levels, 0 and a scale c (from the logged completions; else from the logged
     mean m and std s: a reward in [0, c] has (m² + s²)/m ≤ c, with equality only when it is 0/c, so most
     logs landing near one round level c (1, 0.5, 2, …) means binary);
   - *length*: not binary, and it follows completion length (Pearson r ≥ 0.7 with the characters of each
     logged completion, or ≥ 0.9 with ``completions/mean_length`` across ≥ 8 logs);
   - among binary rewards, the one nearest its ceiling at the end is *format* (format saturates early) when
     there are two or more, and the rest are *correctness*; a lone binary reward is correctness unless it rose
     from below half its scale to ≥ 0.95 of it (a format part saturating);
   - anything else is *other*.

Limits: behaviour needs a few logs (3 with a non-zero mean for the binary test); a reward at 0 throughout
says nothing and is *other*; from the metrics alone, a continuous reward whose (m² + s²)/m stays near a round
level reads as binary; a binary reward saturated from the start reads as correctness on an easy dataset.
State any of these with ``--role``.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass

from grpo_rlvr.errors import ConfigError

ROLES = ("format", "correctness", "length", "other")
# A reward's kind (rewards.KINDS, recorded in the lock) -> its role here. None: the kind says nothing about the
# role (a shaping reward may pay for length or for anything else), so the name and the behaviour decide.
ROLE_OF_KIND = {"format": "format", "correctness": "correctness", "shaping": None, "judge": None, "custom": None}

_LENGTH = {"length", "len", "lengths", "overlong", "long", "longer", "short", "shorter", "brevity",
           "concise", "conciseness", "verbose", "verbosity", "wordcount", "tokens", "chars", "characters"}
_FORMAT = {"format", "formats", "formatted", "formatting", "structure", "structured", "struct", "tag", "tags",
           "xml", "think", "thinking", "schema", "template", "syntax", "int", "integer", "digit", "markup",
           "boxed", "style", "layout", "parse", "parsable", "parseable", "wellformed"}
_CORRECT = {"accuracy", "acc", "accurate", "correct", "correctness", "exact", "em", "math", "pass", "passed",
            "passes", "test", "tests", "unittest", "unittests", "answer", "answers", "solution", "solve",
            "solved", "verify", "verified", "verifier", "code", "equal", "equality", "gold", "label", "judge",
            "bleu", "rouge", "f1", "reference", "result", "outcome", "success", "equation"}
# A compound word (xmlcount, formatreward) counts when it starts with one of these.
_PREFIXES = (("overlong", "length"), ("length", "length"), ("format", "format"), ("xml", "format"),
             ("structur", "format"), ("correct", "correctness"), ("accura", "correctness"),
             ("exact", "correctness"))


@dataclass(frozen=True)
class Role:
    role: str       # one of ROLES
    how: str        # how it was decided, for the report: "stated", "brief lock", "name", "behaviour: …"


def words(name: str) -> list[str]:
    """``strictFormatReward_v2`` → ["strict", "format", "reward", "v", "2"]."""
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|(?<=[A-Za-z])(?=\d)|(?<=\d)(?=[A-Za-z])", " ",
                    name)
    return [w.lower() for w in re.split(r"[^A-Za-z0-9]+", spaced) if w]


def role_from_name(name: str) -> str | None:
    found = set()
    for w in words(name):
        if w in _LENGTH:
            found.add("length")
        elif w in _FORMAT:
            found.add("format")
        elif w in _CORRECT:
            found.add("correctness")
        else:
            found.update(role for prefix, role in _PREFIXES if w.startswith(prefix) and len(w) > len(prefix))
    return next((r for r in ("length", "format", "correctness") if r in found), None)


def parse_stated(specs: list[str] | None) -> dict[str, str]:
    """``["format_reward=format", …]`` → {name: role}.

    Raises:
        ConfigError: a spec without ``=`` or with an unknown role.
    """
    out, problems = {}, []
    for spec in specs or []:
        name, sep, role = spec.rpartition("=")
        if not sep or not name:
            problems.append(f"--role {spec!r}: write NAME=ROLE, e.g. --role length_bonus=length")
        elif role not in ROLES:
            problems.append(f"--role {spec!r}: unknown role {role!r}; use one of {', '.join(ROLES)}")
        else:
            out[name] = role
    if problems:
        raise ConfigError(problems)
    return out


def _lock_rewards(lock: dict | None):
    """(logged name, kind, spec) of each reward in the brief lock, a built-in's kind and logged name as it builds
    them (built-ins run no user code when built); a built-in that no longer builds is left out."""
    from grpo_rlvr.rewards.user import logged_name

    specs = ((lock or {}).get("resolved") or {}).get("rewards") or []
    for s in specs:
        if not isinstance(s, dict) or not isinstance(s.get("name"), str):
            continue
        kind, name = s.get("kind"), logged_name(s["name"])
        if s["name"] in _registry():
            from grpo_rlvr.rewards import build_reward

            try:
                r = build_reward(s["name"], s.get("params") or {}, kind=kind)
                kind, name = r.kind, r.name
            except Exception:  # noqa: BLE001 - a reward that no longer builds is classified by name instead
                continue
        yield name, kind, s


def _lock_roles(lock: dict | None, names: list[str]) -> dict[str, str]:
    """format / correctness from the kinds in the brief lock; other kinds (shaping, custom, judge) say nothing
    about the role and fall through to the name and the behaviour."""
    return {name: ROLE_OF_KIND[kind] for name, kind, _ in _lock_rewards(lock)
            if name in names and ROLE_OF_KIND.get(kind)}


def lock_weights(lock: dict | None) -> dict[str, float]:
    """Each reward's weight in the brief lock, by logged name (a reward without one weighs 1, as the brief says)."""
    out = {}
    for name, _, spec in _lock_rewards(lock):
        w = spec.get("weight", 1.0)
        if isinstance(w, (int, float)) and not isinstance(w, bool):
            out[name] = float(w)
    return out


def _registry():
    from grpo_rlvr.rewards import REGISTRY

    return REGISTRY


# --- behaviour ------------------------------------------------------------------------------------------------

MIN_BINARY_LOGS = 3
LENGTH_R_ROWS = 0.7
LENGTH_R_LOGS = 0.9


SCALES = (0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0)   # the levels binary rewards pay


def _binary_scale(name: str, logs) -> float | None:
    """The scale c of a 0/c reward, or None when it takes other values. From the logged completions when there
    are some; else from each log's mean m and std s: a reward bounded by [0, c] has s² ≤ m(c − m), with
    equality only when it is 0/c, so (m² + s²)/m reaches c for a binary reward and stays below it otherwise.
    TRL's logged std is Bessel-corrected (a hair above) and averaged over the steps of a logging interval (a
    little below), so most logs (80%) must land within −20% / +10% of one level of ``SCALES``."""
    vals = [r.get(name) for r in logs.completions]
    vals = [float(v) for v in vals if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(vals) >= 8:
        levels = {round(v, 6) for v in vals}
        nonzero = levels - {0.0}
        return next(iter(nonzero)) if len(nonzero) == 1 and 0.0 in levels else None
    mean, std = dict(logs.series(f"rewards/{name}/mean")), dict(logs.series(f"rewards/{name}/std"))
    scales = [(m * m + std[s] ** 2) / m for s, m in mean.items() if s in std and m > 1e-6 and std[s] > 1e-6]
    if len(scales) < MIN_BINARY_LOGS:
        return None
    level = min(SCALES, key=lambda c: abs(statistics.median(scales) / c - 1))
    near = sum(0.8 * level <= c <= 1.1 * level for c in scales)
    return level if near >= 0.8 * len(scales) else None


def _length_r(name: str, logs) -> tuple[float, str] | None:
    from grpo_rlvr.diagnosis.completions import text_of

    pairs = [(len(text_of(r["completion"])), float(r[name])) for r in logs.completions
             if isinstance(r.get(name), (int, float)) and not isinstance(r.get(name), bool)]
    if len(pairs) >= 16 and len({a for a, _ in pairs}) > 1 and len({b for _, b in pairs}) > 1:
        return statistics.correlation([a for a, _ in pairs], [b for _, b in pairs]), f"{len(pairs)} completions"
    length = dict(logs.series("completions/mean_length"))
    s = [(length[k], v) for k, v in logs.series(f"rewards/{name}/mean") if k in length]
    if len(s) >= 8 and len({a for a, _ in s}) > 1 and len({b for _, b in s}) > 1:
        return statistics.correlation([a for a, _ in s], [b for _, b in s]), f"{len(s)} logs"
    return None


def _by_behaviour(names: list[str], logs) -> dict[str, Role]:
    out: dict[str, Role] = {}
    binary: dict[str, tuple[float, float, float]] = {}   # name → (scale, early share, late share)
    for n in names:
        c = _binary_scale(n, logs)
        s = logs.series(f"rewards/{n}/mean")
        if c and s:
            q = max(1, len(s) // 4)
            binary[n] = (c, statistics.fmean(v for _, v in s[:3]) / c, statistics.fmean(v for _, v in s[-q:]) / c)
            continue
        if s and all(v == 0 for _, v in s):
            out[n] = Role("other", "behaviour: 0 at every log (nothing to infer from)")
            continue
        r = _length_r(n, logs)
        threshold = LENGTH_R_ROWS if r and r[1].endswith("completions") else LENGTH_R_LOGS
        if r and r[0] >= threshold:
            out[n] = Role("length", f"behaviour: follows completion length (r = {r[0]:+.2f} over {r[1]})")
        else:
            out[n] = Role("other", "behaviour: neither binary nor following length")
    if len(binary) >= 2:
        top = max(binary, key=lambda n: binary[n][2])
        for n, (c, _, late) in binary.items():
            out[n] = (Role("format", f"behaviour: binary 0/{c:.2g}, the nearest its ceiling at the end ({late:.0%})")
                      if n == top else Role("correctness", f"behaviour: binary 0/{c:.2g}, like a correctness check"))
    for n, (c, early, late) in binary.items() if len(binary) == 1 else ():
        if early < 0.5 and late >= 0.95:
            out[n] = Role("format", f"behaviour: binary 0/{c:.2g}, rose from {early:.0%} to {late:.0%} of its scale "
                          "(a format part saturating)")
        else:
            out[n] = Role("correctness", f"behaviour: binary 0/{c:.2g}, like a correctness check")
    return out


def infer_roles(logs, stated: dict[str, str] | None = None) -> dict[str, Role]:
    """Each logged reward's role and how it was decided (see the module docstring for the order).

    Raises:
        ConfigError: ``stated`` names a reward the run did not log.
    """
    names = reward_names(logs)
    stated = stated or {}
    unknown = sorted(set(stated) - set(names))
    if unknown:
        raise ConfigError(f"--role names {', '.join(map(repr, unknown))}, which the run did not log; its rewards "
                          f"are: {', '.join(names) or 'none (no rewards/<name>/mean in the log)'}")
    out = {n: Role(r, "stated (--role)") for n, r in stated.items()}
    for n, r in _lock_roles(logs.brief_lock, [n for n in names if n not in out]).items():
        out[n] = Role(r, "brief lock")
    for n in names:
        if n not in out and (r := role_from_name(n)):
            out[n] = Role(r, "name")
    rest = [n for n in names if n not in out]
    out.update(_by_behaviour(rest, logs) if rest else {})
    return {n: out[n] for n in names}


def reward_names(logs) -> list[str]:
    keys = {k.removeprefix("eval_") for k in logs.history.keys() | logs.eval_history.keys()}
    names = {k[len("rewards/"):-len("/mean")] for k in keys if k.startswith("rewards/") and k.endswith("/mean")}
    if not names and logs.completions:   # no metric log: the reward columns of the completions
        skip = {"step", "prompt", "completion", "advantage"}
        names = {k for k, v in logs.completions[0].items() if k not in skip and isinstance(v, (int, float))}
    return sorted(names)
