"""GRPO variants as config deltas on the base recipe.

The base recipe is plain GRPO. A variant answers an observed failure mode, so it is accepted only with the
diagnosis that showed it (``grpo-rlvr diagnose`` writes ``diagnosis.json``), except GSPO, which a
mixture-of-experts model requires and gets automatically.
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
        "dr_grpo", ("length_reward_coupling", "reward_hacking"),
        {"loss_type": "dr_grpo", "scale_rewards": "none"},
        "reward or length rising regardless of quality (length/difficulty bias)",
    ),
    "gspo": VariantSpec(
        "gspo", ("moe_without_gspo",),
        # Sequence-level importance ratios with the GSPO paper's narrow clip range.
        {"importance_sampling_level": "sequence", "loss_type": "grpo", "epsilon": 3e-4, "epsilon_high": 4e-4,
         "beta": 0.0},
        "mixture-of-experts models (token-level ratios are unstable when routing changes)",
    ),
}
