"""DAPO's dynamic sampling on TRL 1.16's GRPOTrainer: no optimizer step spent on groups without signal.

TRL generates one *generation batch* (``per_device_train_batch_size × steps_per_generation`` rows per rank) every
``steps_per_generation × num_iterations`` micro-steps, scores it, builds advantages, then splits it over the
steps. Here, after scoring, each group whose combined rewards all lie within ``tolerance`` is dropped
(``group_filter.groups_with_signal``; all ranks decide from the rewards TRL gathered, so they agree). New prompts
from the refill stream are generated and scored through TRL's own ``_generate_and_score_completions`` (so plain
generation, vLLM colocate and vLLM server all take the same path), a whole generation batch per round, until the
batch is full of signal-carrying groups or ``max_rounds`` extra rounds are spent.

What the step then trains ("what it has"): always a full generation batch, so TRL's shapes,
``steps_per_generation`` splits and ``num_iterations`` reuse hold unchanged. Its slots take the signal-carrying
groups in the order they were generated; surplus ones from the last round are not trained (counted). When the
rounds ran out first, the empty slots take dropped groups (the step's own prompts first) as *filler*: their
advantages are set to exactly 0 (they were ~0, float noise aside), so they add no policy-gradient term; with
``beta > 0`` they still add their KL term, and their tokens count in the loss normaliser like any others.

Ranks: each keeps the completions it generated where it can; the others move once, by ``gather_object``, to the
ranks short of rows (``group_filter.assign_rows``), so every rank ends with exactly its share. The completions
log (``completions/*.parquet``) holds exactly the trained batch, group by group (filler shows advantage 0).

Metrics (one value per generation batch, averaged over the logging window like TRL's own):
``dynamic_sampling/groups_dropped`` (zero-signal groups among all generated), ``…/zero_signal_frac`` (their
share), ``…/rounds_used`` (extra rounds), ``…/generations_spent`` (completions generated, all rounds),
``…/refill_prompts`` (prompts drawn from the refill stream), ``…/refill_prompts_total`` (the stream's position),
``…/filler_groups``, ``…/surplus_groups``, ``…/rows_moved`` (completions sent to another rank). TRL's ``reward``, ``frac_reward_zero_std`` etc. keep describing what
was sampled, every round included.

The trainer is ``trainers.GRPOTrainerWithDynamicSampling``; this module holds its row stacking and its
checkpoint state, which need no TRL.

Limits: map-style training datasets only (the stream indexes rows); no vision inputs (the toolkit refuses VLMs).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import torch

log = logging.getLogger(__name__)
STATE_FILE = "dynamic_sampling_state.json"
_LEFT_PADDED = ("prompt_ids", "prompt_mask")


def _pad_value(key: str, pad_token_id: int):
    if key.endswith("_ids"):
        return pad_token_id
    # TRL's own padding: a ratio of exactly 1 where nothing was generated (VESPO sums its log unmasked)
    return 1 if key in ("tool_mask", "importance_sampling_ratio") else 0


def stack_rows(rows: list[dict], pad_token_id: int, device, multiple: int | None = None) -> dict:
    """One batch from single rows of different rounds (different padded widths): prompts left-padded, the
    completion side right-padded, to the widest row, rounded up to ``multiple`` (TRL's pad_to_multiple_of)."""
    out = {}
    for key in rows[0]:
        parts = [r[key].to(device) for r in rows]
        if parts[0].ndim == 0:  # one number per completion (advantages)
            out[key] = torch.stack(parts)
            continue
        width = max(p.shape[-1] for p in parts)
        per_token = key.endswith(("_ids", "_mask", "_logps")) or (key == "importance_sampling_ratio" and width > 1)
        if multiple and per_token and width % multiple:
            width += multiple - width % multiple
        value = _pad_value(key, pad_token_id)
        padded = []
        for p in parts:
            extra = width - p.shape[-1]
            if extra:
                fill = torch.full((*p.shape[:-1], extra), value, dtype=p.dtype, device=device)
                p = torch.cat([fill, p] if key in _LEFT_PADDED else [p, fill], dim=-1)
            padded.append(p)
        out[key] = torch.stack(padded)
    return out


def _read_stream_state(checkpoint: Path, size: int) -> tuple[int | None, str | None]:
    """(position, None) from a checkpoint's refill-stream state; (None, None) when it has none (a run without
    dynamic sampling: the stream starts at 0); (None, message) when the file is unreadable."""
    path = checkpoint / STATE_FILE
    try:
        state = json.loads(path.read_text())
        position = int(state["position"])
    except FileNotFoundError:
        log.warning("%s: no refill-stream state (a checkpoint of a run without dynamic sampling); the refill "
                    "stream starts from its beginning", checkpoint)
        return None, None
    except (OSError, ValueError, KeyError, TypeError) as e:
        return None, (f"{path}: unreadable refill-stream state ({e}); resume from another checkpoint, or delete "
                      "the file to restart the refill stream from its beginning")
    if state.get("size") != size:
        log.warning("%s: the training set had %s rows, now %d; the refill stream continues at position %d over "
                    "the new rows", path, state.get("size"), size, position)
    return position, None



__all__ = ["STATE_FILE", "stack_rows"]
