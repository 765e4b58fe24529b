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

Limits: map-style training datasets only (the stream indexes rows); no vision inputs (the toolkit refuses VLMs).
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict, deque
from pathlib import Path

import torch

from grpo_rlvr.errors import ConfigError
from grpo_rlvr.runtime.group_filter import (
    RefillStream,
    assign_rows,
    choose_groups,
    groups_with_signal,
    rows_for_rank,
)

log = logging.getLogger(__name__)
STATE_FILE = "dynamic_sampling_state.json"
_LEFT_PADDED = ("prompt_ids", "prompt_mask")
_NOT_ROWS = ("num_items_in_batch",)


def _unbounded_like(logs: dict) -> dict:
    """An empty completions buffer of TRL's shape that keeps everything (one round can exceed TRL's maxlen)."""
    out = {}
    for key, value in logs.items():
        if isinstance(value, defaultdict):
            out[key] = defaultdict(deque)
        else:
            out[key] = deque()
    return out


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


def dynamic_sampling_trainer_class(max_rounds: int = 3, tolerance: float = 1e-6):
    """The GRPOTrainer subclass the rendered train.py builds when the brief has ``dynamic_sampling`` (imported
    lazily: it needs TRL). It extends the held-out one, so evaluations keep their completions apart too."""
    from datasets import IterableDataset
    from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR

    from grpo_rlvr.runtime.held_out_trainer import grpo_trainer_class

    class GRPOTrainerWithDynamicSampling(grpo_trainer_class()):
        dynamic_max_rounds = int(max_rounds)
        dynamic_tolerance = float(tolerance)

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            if isinstance(self.train_dataset, IterableDataset) or not hasattr(self.train_dataset, "__len__"):
                raise ConfigError("dynamic_sampling: the training set is an iterable (streamed) dataset, and the "
                                  "refill stream needs to index its rows; load it as a map-style dataset or remove "
                                  "the dynamic_sampling section")
            self._refill = RefillStream(len(self.train_dataset), seed=self.args.seed)
            self._gathered_rewards = None

        # --- TRL hooks -------------------------------------------------------------------------------
        def _calculate_rewards(self, *args, **kwargs):
            rewards = super()._calculate_rewards(*args, **kwargs)
            self._gathered_rewards = rewards  # (global rows, functions), the same on every rank
            return rewards

        def _generate_and_score_completions(self, inputs):
            if not self.model.training:  # evaluation: TRL's path, unfiltered
                return super()._generate_and_score_completions(inputs)
            return self._generate_with_signal(inputs)

        def _save_checkpoint(self, model, trial):
            # The stream's position goes in first, so the checkpoint TRL then completes, rotates and pushes
            # already holds it (a folder that holds only this file is not a complete checkpoint).
            if self.args.should_save:
                from grpo_rlvr.files import write_json_atomic

                folder = Path(self._get_output_dir(trial=trial)) / f"{PREFIX_CHECKPOINT_DIR}-{self.state.global_step}"
                folder.mkdir(parents=True, exist_ok=True)
                write_json_atomic(folder / STATE_FILE, self._refill.state())
            super()._save_checkpoint(model, trial)

        def _load_optimizer_and_scheduler(self, checkpoint):
            super()._load_optimizer_and_scheduler(checkpoint)
            if checkpoint is None:
                return
            # rank 0 reads the checkpoint and every rank continues from its reading (or fails with its error)
            outcome = [_read_stream_state(Path(checkpoint), self._refill.size)
                       if self.accelerator.is_main_process else None]
            if self.accelerator.num_processes > 1:
                from accelerate.utils import broadcast_object_list

                outcome = broadcast_object_list(outcome, from_process=0)
            position, error = outcome[0]
            if error:
                raise ConfigError(error)
            if position is not None:
                self._refill.position = position

        # --- the filter ------------------------------------------------------------------------------
        def _one_round(self, inputs):
            """TRL's generate-and-score on ``inputs``, its completions logged into a buffer of its own."""
            saved = self._logs
            self._logs = _unbounded_like(saved)
            self._gathered_rewards = None
            try:
                out = super()._generate_and_score_completions(inputs)
                got = self._logs
            finally:
                self._logs = saved
            logs = {"prompt": list(got["prompt"]), "completion": list(got["completion"]),
                    "rewards": {n: list(v) for n, v in got["rewards"].items()}, "advantages": list(got["advantages"]),
                    "extra": {c: list(v) for c, v in got["extra"].items()}, "images": list(got["images"])}
            if self._gathered_rewards is None:
                raise RuntimeError("dynamic sampling: TRL scored a batch without _calculate_rewards")
            signal = groups_with_signal(self._gathered_rewards, self.reward_weights.tolist(), self.num_generations,
                                        self.dynamic_tolerance, self.multi_objective_aggregation)
            return out, logs, signal.tolist()

        def _refill_inputs(self, groups: int, rows_per_rank: int) -> list[dict]:
            indices = self._refill.draw(groups)
            mine = rows_for_rank(indices, self.num_generations, self.accelerator.process_index, rows_per_rank)
            keep = None
            if self.args.remove_unused_columns:  # what TRL's dataloader would have dropped
                self._set_signature_columns_if_needed()
                keep = set(self._signature_columns)
            rows = []
            for i in mine:
                row = dict(self.train_dataset[i])
                rows.append(row if keep is None else {k: v for k, v in row.items() if k in keep})
            return rows

        def _generate_with_signal(self, inputs):
            per_rank, world = len(inputs), self.accelerator.num_processes
            rank, gens = self.accelerator.process_index, self.num_generations
            groups = per_rank * world // gens
            rounds, batch, drawn = [], inputs, 0
            while True:
                rounds.append(self._one_round(batch))
                have = sum(sum(r[2]) for r in rounds)
                if have >= groups or len(rounds) > self.dynamic_max_rounds:
                    break
                batch = self._refill_inputs(groups, per_rank)
                drawn += groups
            chosen, filler, surplus = choose_groups([r[2] for r in rounds], groups)
            filler_set = set(chosen[len(chosen) - filler:])
            rows = [(k, g * gens + j) for k, g in chosen for j in range(gens)]
            plan = assign_rows(rows, per_rank, world)
            moved = sum(1 for dest, share in enumerate(plan) for _, i in share if i // per_rank != dest)
            out = self._local_batch(rounds, plan, rank, per_rank, {(k, g * gens + j) for k, g in filler_set
                                                                    for j in range(gens)})
            self._log_trained(rounds, chosen, filler_set)
            dropped = sum(len(r[2]) - sum(r[2]) for r in rounds)
            m = self._metrics["train"]
            m["dynamic_sampling/groups_dropped"].append(float(dropped))
            m["dynamic_sampling/zero_signal_frac"].append(dropped / (groups * len(rounds)))
            m["dynamic_sampling/rounds_used"].append(float(len(rounds) - 1))
            m["dynamic_sampling/generations_spent"].append(float(per_rank * world * len(rounds)))
            m["dynamic_sampling/refill_prompts"].append(float(drawn))
            m["dynamic_sampling/refill_prompts_total"].append(float(self._refill.position))
            m["dynamic_sampling/filler_groups"].append(float(filler))
            m["dynamic_sampling/surplus_groups"].append(float(surplus))
            m["dynamic_sampling/rows_moved"].append(float(moved))
            return out

        def _local_batch(self, rounds, plan, rank, per_rank, filler_rows) -> dict:
            """This rank's generation batch: its planned rows, fetched from the ranks that generated them."""
            row_keys = [k for k in rounds[0][0] if k not in _NOT_ROWS]
            for key in row_keys:
                value = rounds[0][0][key]
                if not (torch.is_tensor(value) and value.ndim >= 1 and value.shape[0] == per_rank):
                    raise ConfigError(f"dynamic_sampling: the generation batch carries {key!r}, which is not one "
                                      "value per completion (vision inputs?); dynamic sampling cannot regroup it. "
                                      "Remove the dynamic_sampling section for this model")

            def row(k, i):
                out = rounds[k][0]
                rec = {key: out[key][i % per_rank] for key in row_keys}
                if (k, i) in filler_rows:
                    rec["advantages"] = torch.zeros_like(rec["advantages"])
                return rec

            moves = [(dest, slot, k, i) for dest, share in enumerate(plan) for slot, (k, i) in enumerate(share)
                     if i // per_rank != dest]
            received = {}
            if moves:  # the same plan on every rank, so all of them enter the collective or none
                from accelerate.utils import gather_object

                sent = [(dest, slot, {key: v.detach().cpu() for key, v in row(k, i).items()})
                        for dest, slot, k, i in moves if i // per_rank == rank]
                received = {slot: rec for dest, slot, rec in gather_object(sent) if dest == rank}
            mine = [received[slot] if slot in received else row(k, i) for slot, (k, i) in enumerate(plan[rank])]
            batch = stack_rows(mine, self._tokenizer.pad_token_id, self.accelerator.device,
                               getattr(self, "pad_to_multiple_of", None))
            loss_mask = batch["completion_mask"] if "tool_mask" not in batch else \
                batch["completion_mask"] * batch["tool_mask"]
            batch["num_items_in_batch"] = self.accelerator.gather(loss_mask.sum()).sum()
            return batch

        def _log_trained(self, rounds, chosen, filler_set) -> None:
            """The completions log gets the trained batch, group by group, in place of every round's rows."""
            gens, buf = self.num_generations, self._logs
            columns = sorted({c for r in rounds for c in r[1]["extra"]})
            for k, g in chosen:
                logs = rounds[k][1]
                rows = range(g * gens, (g + 1) * gens)
                buf["prompt"].extend(logs["prompt"][i] for i in rows)
                buf["completion"].extend(logs["completion"][i] for i in rows)
                for name, values in logs["rewards"].items():
                    buf["rewards"][name].extend(values[i] for i in rows)
                zero = (k, g) in filler_set
                buf["advantages"].extend(0.0 if zero else logs["advantages"][i] for i in rows)
                for c in columns:
                    values = logs["extra"].get(c)
                    buf["extra"][c].extend(values[i] if values is not None and i < len(values) else None
                                           for i in rows)
                if logs["images"]:
                    buf["images"].extend(logs["images"][i] for i in rows)

    return GRPOTrainerWithDynamicSampling


__all__ = ["STATE_FILE", "dynamic_sampling_trainer_class", "stack_rows"]
