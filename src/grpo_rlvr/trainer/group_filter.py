"""The pure parts of dynamic sampling (``dynamic_sampling.py``): which groups carry signal, the refill prompt
stream, and which rank trains which completion. No TRL here; torch for the reward tensors only.

A *group* is the ``num_generations`` completions of one prompt; in TRL's global generation batch they sit next to
each other (``RepeatSampler``), and rank ``r`` holds rows ``r·L … r·L+L-1`` (``L`` rows per rank).
"""

from __future__ import annotations

import hashlib

import torch


def groups_with_signal(rewards_per_func: torch.Tensor, weights, num_generations: int, tolerance: float,
                       aggregation: str = "sum_then_normalize") -> torch.Tensor:
    """One bool per group: does it carry a learning signal?

    A group has none when its combined rewards all lie within ``tolerance`` of each other (max − min ≤ tolerance),
    never a raw ``std != 0``: eight rewards of 0.2 + 1.0 have a float32 std of 1.27e-7. The combined reward is the
    one TRL builds advantages from: with ``sum_then_normalize`` the weighted sum of the reward functions (a
    function's None, NaN in TRL's tensor, counts 0, as in TRL's ``nansum``); with ``normalize_then_sum`` each
    function is normalised within the group first, so there a group has signal when some weighted function varies
    by more than ``tolerance``. Completions no function scored (all NaN) and non-finite values are left out; a
    group with fewer than two scored completions has no signal (TRL gives them zero advantage).

    Args:
        rewards_per_func: (groups × num_generations, functions), gathered over every rank.
        weights: one weight per function.
    Returns:
        A bool tensor of length groups (on CPU).
    """
    r = rewards_per_func.detach().to("cpu", torch.float64)
    w = torch.as_tensor(list(weights) if not torch.is_tensor(weights) else weights.tolist(), dtype=torch.float64)
    if r.ndim != 2 or r.shape[0] % num_generations:
        raise ValueError(f"rewards of shape {tuple(r.shape)} do not split into groups of {num_generations}")
    unscorable = torch.isnan(r).all(dim=1)
    if aggregation == "normalize_then_sum":
        columns = [r[:, k] for k in range(r.shape[1]) if w[k] != 0]
    else:
        combined = (r * w.unsqueeze(0)).nansum(dim=1)
        combined[unscorable] = torch.nan
        columns = [combined]
    signal = torch.zeros(r.shape[0] // num_generations, dtype=torch.bool)
    for values in columns:
        grouped = values.view(-1, num_generations)
        finite = torch.isfinite(grouped) & ~unscorable.view(-1, num_generations)
        high = torch.where(finite, grouped, torch.full_like(grouped, -torch.inf)).max(dim=1).values
        low = torch.where(finite, grouped, torch.full_like(grouped, torch.inf)).min(dim=1).values
        signal |= (finite.sum(dim=1) >= 2) & ((high - low) > tolerance)
    return signal


class RefillStream:
    """Where refill prompts come from: successive shuffled passes over the training set, the same on every rank.

    Pass ``e`` is a permutation seeded from (seed, e) and a salt, so it is not TRL's own sampler order. The
    stream is its own: TRL's sampler, and so its resume (which skips the batches already trained), is untouched.
    ``position`` counts every prompt ever drawn; checkpoints save it and ``--resume`` continues from it.
    """

    def __init__(self, size: int, seed: int, position: int = 0):
        if size < 1:
            raise ValueError("the refill stream needs a non-empty training set")
        self.size, self.seed, self.position = size, int(seed), int(position)
        self._cached: tuple[int, list[int]] | None = None

    def _permutation(self, epoch: int) -> list[int]:
        if self._cached is None or self._cached[0] != epoch:
            digest = hashlib.sha256(f"grpo-rlvr refill stream {self.seed} {epoch}".encode()).digest()
            gen = torch.Generator().manual_seed(int.from_bytes(digest[:8], "little") >> 1)
            self._cached = (epoch, torch.randperm(self.size, generator=gen).tolist())
        return self._cached[1]

    def draw(self, count: int) -> list[int]:
        """The next ``count`` dataset indices (wrapping into a new pass at the end of one)."""
        out: list[int] = []
        while len(out) < count:
            epoch, offset = divmod(self.position, self.size)
            take = min(count - len(out), self.size - offset)
            out += self._permutation(epoch)[offset:offset + take]
            self.position += take
        return out

    def state(self) -> dict:
        return {"format": 1, "position": self.position, "size": self.size, "seed": self.seed}


def rows_for_rank(indices: list[int], num_generations: int, rank: int, rows_per_rank: int) -> list[int]:
    """The dataset indices rank ``rank`` generates for, given the round's prompts in global order (each repeated
    ``num_generations`` times, as TRL's ``RepeatSampler`` lays them out)."""
    repeated = [i for i in indices for _ in range(num_generations)]
    return repeated[rank * rows_per_rank:(rank + 1) * rows_per_rank]


def choose_groups(signal_per_round: list[list[bool]], wanted: int) -> tuple[list[tuple[int, int]], int, int]:
    """Which (round, group) pairs the step trains, in order, and how many are filler and surplus.

    The signal-carrying groups come first, in the order they were generated, up to ``wanted``; surplus ones (the
    last round overshot) are not trained. Slots still empty after the last round take zero-signal groups, in
    generation order too (the step's own prompts first): they are the *filler*, trained with advantage 0.

    Returns:
        (chosen, filler, surplus): ``chosen`` has ``wanted`` pairs, of which the last ``filler`` are filler.
    """
    kept = [(k, g) for k, signals in enumerate(signal_per_round) for g, s in enumerate(signals) if s]
    dropped = [(k, g) for k, signals in enumerate(signal_per_round) for g, s in enumerate(signals) if not s]
    chosen = kept[:wanted]
    filler = dropped[:wanted - len(chosen)]
    return chosen + filler, len(filler), len(kept) - len(chosen)


def assign_rows(rows: list[tuple[int, int]], rows_per_rank: int, world: int) -> list[list[tuple[int, int]]]:
    """Which rank trains which completion: ``rows`` are (round, global row) in training order, ``world ×
    rows_per_rank`` of them. Each rank keeps the rows it generated itself (up to its share) so few move; the
    rest go, in order, to the ranks still short. Every rank computes the same answer from the same input.

    Returns:
        For each rank, its ``rows_per_rank`` (round, global row) pairs.
    """
    if len(rows) != rows_per_rank * world:
        raise ValueError(f"{len(rows)} rows for {world} ranks of {rows_per_rank}")
    own: list[list[tuple[int, int]]] = [[] for _ in range(world)]
    for row in rows:
        own[row[1] // rows_per_rank].append(row)
    out, spare = [], []
    for mine in own:
        out.append(mine[:rows_per_rank])
        spare += mine[rows_per_rank:]
    for share in out:
        while len(share) < rows_per_rank:
            share.append(spare.pop(0))
    return out
