"""GRPO variants as config deltas on the base recipe.

The base recipe is plain GRPO. A variant answers an observed failure mode, so it is accepted only with the
diagnosis that showed it (``grpo-rlvr diagnose`` writes ``diagnosis.json``), except GSPO, which a
mixture-of-experts model requires: it is applied when the model is known to be MoE (its config.json, the
brief's ``model.moe``, or a guess from its name that validate flags). ``variants_in`` recognizes a variant set by
hand through ``grpo:`` overrides, so that it is reported, and gated, as that variant.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class VariantSpec:
    name: str
    failure_modes: tuple[str, ...]   # diagnosis finding ids that justify it
    delta: dict
    why: str
    # The brief's `dynamic_sampling` section the variant turns on ({}: the defaults); None: none. A brief's own
    # section wins, and `dynamic_sampling: null` turns it off.
    dynamic_sampling: dict | None = None


VARIANTS: dict[str, VariantSpec] = {
    "dapo": VariantSpec(
        "dapo", ("entropy_collapse", "degenerate_length", "truncation"),
        # Clip-higher keeps low-probability tokens explorable; token-level loss removes the length bias;
        # truncated completions are masked; DAPO drops the KL term.
        {"loss_type": "dapo", "epsilon_high": 0.28, "beta": 0.0, "mask_truncated_completions": True},
        "entropy collapse or degenerate long chains of thought",
        # DAPO's dynamic sampling: groups whose rewards are all equal are dropped and refilled
        dynamic_sampling={},
    ),
    "dr_grpo": VariantSpec(
        "dr_grpo", ("length_reward_coupling",),
        {"loss_type": "dr_grpo", "scale_rewards": "none"},
        "length rising with the reward regardless of quality (length/difficulty bias)",
    ),
    "gspo": VariantSpec(
        "gspo", ("moe_without_gspo",),
        # Sequence-level importance ratios with the GSPO paper's narrow clip range.
        {"importance_sampling_level": "sequence", "loss_type": "grpo", "epsilon": 3e-4, "epsilon_high": 4e-4,
         "beta": 0.0},
        "mixture-of-experts models (token-level ratios are unstable when routing changes)",
    ),
}


# --- recognizing a variant set by hand ------------------------------------------------------------------------
# The plain recipe's values for the keys the deltas touch (a delta value equal to one of these is not a sign of
# a variant: GSPO's loss_type "grpo" is the recipe's).
PLAIN = {"loss_type": "grpo", "beta": 0.01, "importance_sampling_level": "token", "scale_rewards": "group"}


def signature(name: str) -> dict:
    """The entries of a variant's delta that no other variant shares and the plain recipe does not have: the
    GRPOConfig values that mark a config as that variant (e.g. ``loss_type: dr_grpo``). Sections that are not
    GRPOConfig values (a dict) are left out."""
    others = [s.delta for n, s in VARIANTS.items() if n != name]
    return {k: v for k, v in VARIANTS[name].delta.items()
            if not isinstance(v, dict) and PLAIN.get(k, object()) != v
            and not any(k in o and o[k] == v for o in others)}


def variants_in(overrides: dict) -> dict[str, dict]:
    """Which variants a brief's ``grpo:`` overrides set by hand: variant name -> the overrides that match its
    signature. ``{"loss_type": "dr_grpo"}`` is Dr.GRPO, as much as a declared ``variant: {name: dr_grpo}``."""
    found = {}
    for name in VARIANTS:
        hit = {k: overrides[k] for k, v in signature(name).items()
               if k in overrides and overrides[k] == v and type(overrides[k]) is type(v)}
        if hit:
            found[name] = hit
    return found
