"""The GRPOTrainer subclasses a rendered ``train.py`` builds. Imports TRL: import it only where training runs.

- ``GRPOTrainerWithHeldOut``: TRL's GRPOTrainer, with held-out evaluation kept out of the training completions
  it logs (why: ``held_out_buffer``).
- ``GRPOTrainerWithDynamicSampling``: the held-out one, plus DAPO's dynamic sampling: groups without signal are
  dropped and refilled before the step trains (the algorithm, its metrics and limits: ``dynamic_sampling``; its
  pure parts: ``group_filter``).

Both keep TRL's constructor; the dynamic one adds the keyword-only ``max_rounds`` and ``tolerance`` (the brief's
``dynamic_sampling`` section).
"""

from __future__ import annotations

import json
from collections import defaultdict, deque
from pathlib import Path
from typing import NamedTuple

import torch
from datasets import IterableDataset
from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR
from trl import GRPOTrainer

from grpo_rlvr.errors import ConfigError
from grpo_rlvr.records.unscorable import ROW_COLUMN, SOURCE_COLUMN, Tally, row_label, say_new_rows
from grpo_rlvr.trainer.dynamic_sampling import STATE_FILE, _read_stream_state, stack_rows
from grpo_rlvr.trainer.group_filter import (
    RefillStream,
    assign_rows,
    choose_groups,
    groups_with_signal,
    rows_for_rank,
)
from grpo_rlvr.trainer.held_out_buffer import empty_like
from grpo_rlvr.trainer.unscored_rollouts import Unscored, quiet_trl

DEFAULT_MAX_ROUNDS = 3      # extra generate-and-score rounds per generation batch
DEFAULT_TOLERANCE = 1e-6    # a group whose combined rewards lie within this has no signal
_NOT_ROWS = ("num_items_in_batch",)  # generation-batch keys that are not one value per completion


def _unbounded_like(logs: dict) -> dict:
    """An empty completions buffer of TRL's shape that keeps everything (one round can exceed TRL's maxlen)."""
    out = {}
    for key, value in logs.items():
        if isinstance(value, defaultdict):
            out[key] = defaultdict(deque)
        else:
            out[key] = deque()
    return out


def _arguments_as_json(completion):
    """``completion`` (a message list, or text) with each tool call's arguments as JSON text; copies what it
    changes."""
    if not isinstance(completion, list):
        return completion
    out = []
    for m in completion:
        if isinstance(m, dict) and m.get("tool_calls"):
            calls = []
            for call in m["tool_calls"]:
                fn = call.get("function") if isinstance(call, dict) else None
                if isinstance(fn, dict) and not isinstance(fn.get("arguments"), str):
                    call = {**call, "function": {**fn, "arguments": json.dumps(fn.get("arguments"), default=str)}}
                calls.append(call)
            m = {**m, "tool_calls": calls}
        out.append(m)
    return out


def _row_named(row: dict) -> str | None:
    """``dataset row 12 (data/train.jsonl:13)``, as training names a row, or None for a row without its index."""
    return None if row.get(ROW_COLUMN) is None else row_label(row[ROW_COLUMN], row.get(SOURCE_COLUMN))


def share_from_rank_0(obj):
    """Rank 0's ``obj`` on every rank (the others' ``obj`` is ignored); with one process, ``obj`` itself."""
    from accelerate.utils import broadcast_object_list

    return broadcast_object_list([obj], from_process=0)[0]


class GRPOTrainerWithHeldOut(GRPOTrainer):
    """TRL's GRPOTrainer; each evaluation fills a completions buffer of its own, and the training one is put back;
    a sample a reward could not score is left out of its step and named by its dataset row (``unscorable``); with
    ``tool_concurrency`` above 1, the tool calls of a turn's rollouts run at once (``trainer.concurrent_tool_calls``)."""

    tool_concurrency = 1   # TRL's own order: one call after another (build_trainer sets the brief's)

    def _tool_call_loop(self, prompts, prompt_ids, completion_ids, completions, *rest):
        # TRL sets _sync_tool_dicts before each tool loop (trl_seams: a TRL without it is refused at build)
        if self.tool_concurrency <= 1 or not self._sync_tool_dicts:
            return super()._tool_call_loop(prompts, prompt_ids, completion_ids, completions, *rest)
        from grpo_rlvr.trainer.concurrent_tool_calls import ConcurrentCalls

        own = self._sync_tool_dicts
        calls = ConcurrentCalls(completions, own, self.tool_concurrency)
        self._sync_tool_dicts = calls.dicts
        try:
            return super()._tool_call_loop(prompts, prompt_ids, completion_ids, completions, *rest)
        finally:
            self._sync_tool_dicts = own
            calls.close()

    review_audit = None    # the review audit (``grpo_rlvr.audit.live.ReviewAudit``) train.py gives: None, no audit

    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
        for func in self.reward_funcs:   # each of our rewards sets it anew on its call; nothing stale is read
            if isinstance(getattr(func, "unscorable", None), list):
                func.unscorable = []
        with quiet_trl(GRPOTrainer.__module__):   # its all-None warning: said in our words below
            rewards = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
        if self.review_audit is not None and self.model.training:   # every reward's own score, before leave-out
            self._audit_seen = (rewards.detach().cpu().clone(), list(completions), list(completion_ids_list))
        rank, n = self.accelerator.process_index, len(inputs)
        unscored = torch.isnan(rewards[rank * n:(rank + 1) * n]).all(dim=1).tolist()
        out = self._leave_out_unscorable(inputs, rewards)
        self._say_unscored(unscored, inputs, completions)
        return out

    def _say_unscored(self, unscored: list[bool], inputs: list[dict], completions: list) -> None:
        """One line, once per run and cause, for this process's samples that no reward scored and none named."""
        if not self.accelerator.is_main_process or not any(unscored):
            return
        from grpo_rlvr.tool_failures import unavailable_in

        named = {pos for func in self.reward_funcs for pos, _ in (getattr(func, "unscorable", None) or ())}
        envs = self.environments or [None] * len(completions)
        samples = [(_row_named(inputs[i]), unavailable_in(completions[i], envs[i] if i < len(envs) else None))
                   for i, gone in enumerate(unscored) if gone and i not in named]
        if not samples:
            return
        if getattr(self, "_unscored", None) is None:
            self._unscored = Unscored()
        where = f"in step {self.state.global_step + 1}" if self.model.training else \
            f"of the held-out evaluation at step {self.state.global_step}"
        self._unscored.say(where, len(unscored), samples)

    def _generate_and_score_completions(self, inputs):
        out = super()._generate_and_score_completions(inputs)
        if self.review_audit is not None and self.model.training and self.review_audit.wants_batch():
            self._audit_batch(inputs, out)
        return out

    def _audit_batch(self, inputs: list[dict], out: dict) -> None:
        """The review audit on this generation batch: every rank's rollouts go to rank 0, which compares them with
        the reviewed inspection and decides for all; a divergence stops the run here, before the optimizer steps
        on the batch (``AuditStop`` on every rank)."""
        from grpo_rlvr.records.audit_rollouts import rollout_record

        seen, self._audit_seen = getattr(self, "_audit_seen", None), None
        if seen is None:
            raise RuntimeError("review audit: TRL scored a generation batch without _calculate_rewards; this TRL "
                               "version changed the seam the audit reads")
        rewards, completions, ids_list = seen
        rank, n = self.accelerator.process_index, len(inputs)
        self._audit_batches = getattr(self, "_audit_batches", 0) + 1
        stops, tool_mask = set(self.eos_token_ids), out.get("tool_mask")
        local = []
        for i, row in enumerate(inputs):
            ids = list(ids_list[i])
            mask = None if tool_mask is None else tool_mask[i][:len(ids)].tolist()
            scores = dict(zip(self.reward_func_names, rewards[rank * n + i].tolist(), strict=True))
            local.append(rollout_record([self._audit_batches, (rank * n + i) // self.num_generations],
                                        row.get("prompt"), int(out["prompt_mask"][i].sum().item()), completions[i],
                                        ids, mask, not (ids and ids[-1] in stops), scores,
                                        tools=bool(self.tools) or self.environments is not None))
        everyone = local
        if self.accelerator.num_processes > 1:
            from accelerate.utils import gather_object

            everyone = [r for part in gather_object([local]) for r in part]
        stop = [self.review_audit.observe(self.state.global_step, everyone)
                if self.accelerator.is_main_process else self.review_audit.observed_on_rank_0()]
        if self.accelerator.num_processes > 1:
            from accelerate.utils import broadcast_object_list

            stop = broadcast_object_list(stop, from_process=0)
        if stop[0]:
            from grpo_rlvr.errors import AuditStop

            raise AuditStop(f"the review audit stopped the run at step {self.state.global_step}: training's own "
                            "rollouts differ from the reviewed inspection (see output/review_audit.json)")

    def log(self, logs: dict, start_time: float | None = None) -> None:
        # TRL writes the logged completions to completions/*.parquet. The parser types a tool call's arguments from
        # the tool's schema, so one call logs a = 566 and another a = "12x"; pyarrow refuses a column with two types
        # and the run dies at its first log. Each call's arguments are logged as their JSON text instead, the form
        # the OpenAI message format carries them in (chat templates render both).
        completions = self._logs.get("completion")
        for i, completion in enumerate(completions or ()):
            completions[i] = _arguments_as_json(completion)
        super().log(logs, start_time)

    def _leave_out_unscorable(self, inputs: list[dict], rewards: torch.Tensor) -> torch.Tensor:
        """Every reward of a sample that some reward could not score becomes NaN in the gathered (samples ×
        functions) tensor, so that TRL leaves the sample out of its group's statistics and gives it advantage 0
        (why: ``unscorable``); rank 0 counts and names the rows."""
        local = [{"sample": pos, "row": inputs[pos].get(ROW_COLUMN), "source": inputs[pos].get(SOURCE_COLUMN),
                  "reward": name, "why": str(why)}
                 for name, func in zip(self.reward_func_names, self.reward_funcs, strict=True)
                 for pos, why in (getattr(func, "unscorable", None) or ())]
        mask = torch.zeros(len(inputs), dtype=torch.float32, device=rewards.device)
        for r in local:
            mask[r["sample"]] = 1.0
        records = local
        if self.accelerator.num_processes > 1:   # the tensor holds every rank's samples, rank by rank
            from accelerate.utils import gather_object

            mask = self.accelerator.gather(mask)
            records = [{**r, "sample": r["sample"] + k * len(inputs)}
                       for k, part in enumerate(gather_object([local])) for r in part]
        left_out = mask.bool()
        if bool(left_out.any()):
            rewards[left_out] = torch.nan
        mode = "train" if self.model.training else "eval"
        self._metrics[mode]["unscorable/frac"].append(left_out.float().mean().item())
        if self.accelerator.is_main_process:
            if getattr(self, "_unscorable_tally", None) is None:
                self._unscorable_tally = Tally(self.num_generations)
            tally = self._unscorable_tally
            new = tally.add(self.state.global_step, int(left_out.numel()), records,
                            "train" if mode == "train" else "held_out")
            if tally.unscorable or tally.held_out:
                tally.write(Path(self.args.output_dir))
            say_new_rows(new, tally)
        return rewards

    def evaluate(self, *args, **kwargs):
        saved = self._logs   # TRL's buffer (trl_seams: a TRL without it is refused at build)
        self._logs = empty_like(saved)
        try:
            return super().evaluate(*args, **kwargs)
        finally:
            self._logs = saved


class Round(NamedTuple):
    """One generate-and-score round of the dynamic-sampling loop."""

    output: dict         # TRL's generation batch for this rank (tensors, one row per completion)
    logs: dict           # the round's completions log: prompt, completion, rewards, advantages, extra, images
    signal: list[bool]   # per group, over all ranks: whether its rewards differ (it carries signal)


class GRPOTrainerWithDynamicSampling(GRPOTrainerWithHeldOut):
    """GRPOTrainer with DAPO's dynamic sampling; evaluations stay apart as in the held-out one.

    Args (beyond TRL's):
        max_rounds: extra rounds per generation batch before the rest is filled with dropped groups.
        tolerance: a group whose combined rewards all lie within this carries no signal.
    Raises:
        ConfigError: the training set is an iterable (streamed) dataset, or a checkpoint's refill-stream state is
            unreadable on resume, or the generation batch holds values the refill cannot regroup.
    """

    def __init__(self, *args, max_rounds: int = DEFAULT_MAX_ROUNDS, tolerance: float = DEFAULT_TOLERANCE,
                 **kwargs):
        self.dynamic_max_rounds = int(max_rounds)
        self.dynamic_tolerance = float(tolerance)
        super().__init__(*args, **kwargs)
        if isinstance(self.train_dataset, IterableDataset) or not hasattr(self.train_dataset, "__len__"):
            raise ConfigError("dynamic_sampling: the training set is an iterable (streamed) dataset, and the "
                              "refill stream needs to index its rows; load it as a map-style dataset or remove "
                              "the dynamic_sampling section")
        self._refill = RefillStream(len(self.train_dataset), seed=self.args.seed)
        self._gathered_rewards = None

    # --- TRL hooks -----------------------------------------------------------------------------------------
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

    # --- the filter ----------------------------------------------------------------------------------------
    def _one_round(self, inputs) -> Round:
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
        return Round(out, logs, signal.tolist())

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

    def _sample_rounds(self, inputs, groups: int) -> tuple[list[Round], int]:
        """Rounds until ``groups`` signal-carrying groups or ``max_rounds`` extra rounds; and the refill prompts
        drawn."""
        rounds, batch, drawn = [], inputs, 0
        while True:
            rounds.append(self._one_round(batch))
            if sum(sum(r.signal) for r in rounds) >= groups or len(rounds) > self.dynamic_max_rounds:
                return rounds, drawn
            batch = self._refill_inputs(groups, len(inputs))
            drawn += groups

    def _generate_with_signal(self, inputs):
        per_rank, world = len(inputs), self.accelerator.num_processes
        rank, gens = self.accelerator.process_index, self.num_generations
        groups = per_rank * world // gens
        rounds, drawn = self._sample_rounds(inputs, groups)
        chosen, filler, surplus = choose_groups([r.signal for r in rounds], groups)
        filler_set = set(chosen[len(chosen) - filler:])
        rows = [(k, g * gens + j) for k, g in chosen for j in range(gens)]
        plan = assign_rows(rows, per_rank, world)
        moved = sum(1 for dest, share in enumerate(plan) for _, i in share if i // per_rank != dest)
        out = self._local_batch(rounds, plan, rank, per_rank, {(k, g * gens + j) for k, g in filler_set
                                                                for j in range(gens)})
        self._log_trained(rounds, chosen, filler_set)
        dropped = sum(len(r.signal) - sum(r.signal) for r in rounds)
        self._log_metrics({
            "groups_dropped": float(dropped),
            "zero_signal_frac": dropped / (groups * len(rounds)),
            "rounds_used": float(len(rounds) - 1),
            "generations_spent": float(per_rank * world * len(rounds)),
            "refill_prompts": float(drawn),
            "refill_prompts_total": float(self._refill.position),
            "filler_groups": float(filler),
            "surplus_groups": float(surplus),
            "rows_moved": float(moved),
        })
        return out

    def _log_metrics(self, values: dict[str, float]) -> None:
        """One value per generation batch, averaged over the logging window like TRL's own."""
        for name, value in values.items():
            self._metrics["train"][f"dynamic_sampling/{name}"].append(value)

    def _local_batch(self, rounds: list[Round], plan, rank, per_rank, filler_rows) -> dict:
        """This rank's generation batch: its planned rows, fetched from the ranks that generated them."""
        first = rounds[0].output
        row_keys = [k for k in first if k not in _NOT_ROWS]
        for key in row_keys:
            value = first[key]
            if not (torch.is_tensor(value) and value.ndim >= 1 and value.shape[0] == per_rank):
                raise ConfigError(f"dynamic_sampling: the generation batch carries {key!r}, which is not one "
                                  "value per completion (vision inputs?); dynamic sampling cannot regroup it. "
                                  "Remove the dynamic_sampling section for this model")

        def row(k, i):
            out = rounds[k].output
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

    def _log_trained(self, rounds: list[Round], chosen, filler_set) -> None:
        """The completions log gets the trained batch, group by group, in place of every round's rows."""
        gens, buf = self.num_generations, self._logs
        columns = sorted({c for r in rounds for c in r.logs["extra"]})
        for k, g in chosen:
            logs = rounds[k].logs
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


__all__ = ["DEFAULT_MAX_ROUNDS", "DEFAULT_TOLERANCE", "GRPOTrainerWithDynamicSampling", "GRPOTrainerWithHeldOut",
           "Round"]
