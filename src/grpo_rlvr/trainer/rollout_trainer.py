"""The trainer that samples for preflight and inspect: the run's own trainer class, asked to generate and never to
step. Imports TRL.

``roll_out(rows)`` goes through TRL's own ``_generate_and_score_completions``, the code a training step runs: the
environment's ``reset`` and its tools, the chat template with ``chat_template_kwargs``, generation with the
trainer's engine and sampling settings (``generation_kwargs`` over them), the tool-call loop, the decoding into
what reward functions receive. What it records comes through TRL's public reward call and what the batch returns:
for the call, the run's rewards step aside for one recording function (``_Recorder``), which TRL calls as it would
call them (the prompts, the completions, their token ids, every column, the environments) and which pays 0, so
advantages come out zero; the batch TRL returns gives the prompt token ids and the tool mask. The caller scores the
trajectories itself, with the same reward objects and the reasons a person reads.

It overrides no TRL method: ``_generate_and_score_completions`` is the one private name it calls (listed in
``trl_seams``; a TRL without it is refused when the trainer is built), and ``tests/rollout/test_road.py`` fails when
TRL changes what the call passes or the batch returns.
"""

from __future__ import annotations

import torch

from grpo_rlvr.tool_failures import unavailable_in
from grpo_rlvr.trainer.trainers import GRPOTrainerWithHeldOut


class _Recorder:
    """A reward function that keeps what TRL called it with and pays 0 for every completion."""

    __name__ = "rollout_recorder"

    def __init__(self):
        self.calls: list[dict] = []

    def __call__(self, prompts, completions, completion_ids, **columns):
        self.calls.append({"prompts": list(prompts), "completions": list(completions),
                           "completion_ids": [list(ids) for ids in completion_ids],
                           "environments": list(columns.get("environments") or ())})
        return [0.0] * len(completions)


class RolloutTrainer(GRPOTrainerWithHeldOut):
    """TRL's GRPOTrainer (the held-out one a plain run trains with) that records its rollouts."""

    def roll_out(self, rows: list[dict]) -> list[dict]:
        """Generate for ``rows`` exactly as a training step would, as one generation batch: each prompt's rows
        side by side, ``num_generations`` of them (vLLM's server mode asks for that many per prompt).

        Returns one record per row: ``prompt`` (as the rewards get it), ``completion``, ``prompt_ids``,
        ``completion_ids``, ``loss_mask`` (None without tools), ``stop``, ``unavailable`` (a tool failed outside the
        model's control: why), ``environment_state`` (the environment's ``state`` at the end), ``row`` (the row's
        other columns).
        """
        recorder = _Recorder()
        own = (self.reward_funcs, self.reward_func_names, self.reward_processing_classes, self.reward_weights)
        self.reward_funcs, self.reward_func_names = [recorder], [recorder.__name__]
        self.reward_processing_classes, self.reward_weights = [None], torch.ones(1)
        self.model.train()   # TRL generates inside training_step, with the policy in training mode
        try:
            with torch.no_grad():
                batch = self._generate_and_score_completions(rows)
        finally:
            self.reward_funcs, self.reward_func_names, self.reward_processing_classes, self.reward_weights = own
        if len(recorder.calls) != 1 or len(recorder.calls[0]["completions"]) != len(rows):
            raise RuntimeError(f"TRL called the rewards {len(recorder.calls)} times for one generation batch of "
                               f"{len(rows)} rows: this TRL version changed the reward call the rollout road records")
        call = recorder.calls[0]
        prompt_mask, tool_mask = batch["prompt_mask"].bool(), batch.get("tool_mask")
        stops = set(self.eos_token_ids)
        out = []
        for i, row in enumerate(rows):
            ids = call["completion_ids"][i]
            env = call["environments"][i] if call["environments"] else None
            out.append({"prompt": call["prompts"][i], "completion": call["completions"][i],
                        "prompt_ids": batch["prompt_ids"][i][prompt_mask[i]].tolist(), "completion_ids": ids,
                        "loss_mask": None if tool_mask is None else tool_mask[i][:len(ids)].tolist(),
                        "stop": "eos" if ids and ids[-1] in stops else "length",
                        "unavailable": unavailable_in(call["completions"][i], env),   # a reset that raised marks env
                        "environment_state": None if env is None else getattr(env, "state", None),
                        "row": {k: v for k, v in row.items() if k != "prompt"}})
        return out


__all__ = ["RolloutTrainer"]
