"""The trainer that samples for preflight and inspect: the run's own trainer class, asked to generate and never to
step. Imports TRL.

``roll_out(rows)`` goes through TRL's own ``_generate_and_score_completions``, the code a training step runs: the
environment's ``reset`` and its tools, the chat template with ``chat_template_kwargs``, generation with the
trainer's engine and sampling settings (``generation_kwargs`` over them), the tool-call loop, the decoding into
what reward functions receive. Two of TRL's hooks record on the way: ``_generate`` (the prompt and completion token
ids, the tool mask, the completions) and ``_calculate_rewards`` (the prompts and rows the rewards would be called
with). The rewards are not called there (zeros stand in, so advantages come out zero): the caller scores the
trajectories itself, with the same reward objects and the reasons a person reads.

Where TRL offers no seam of its own, this leans on two of its private methods (``_generate``,
``_calculate_rewards``) and on ``_generate_and_score_completions``, listed in ``trl_seams`` (a TRL without them is
refused when the trainer is built); ``tests/rollout/test_road.py`` fails when TRL changes what they return.
"""

from __future__ import annotations

import torch

from grpo_rlvr.tool_failures import unavailable_in
from grpo_rlvr.trainer.trainers import GRPOTrainerWithHeldOut


class RolloutTrainer(GRPOTrainerWithHeldOut):
    """TRL's GRPOTrainer (the held-out one a plain run trains with) that records its rollouts."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._recorded: dict = {}

    def roll_out(self, rows: list[dict]) -> list[dict]:
        """Generate for ``rows`` exactly as a training step would, as one generation batch: each prompt's rows
        side by side, ``num_generations`` of them (vLLM's server mode asks for that many per prompt).

        Returns one record per row: ``prompt`` (as the rewards get it), ``completion``, ``prompt_ids``,
        ``completion_ids``, ``loss_mask`` (None without tools), ``stop``, ``unavailable`` (a tool failed outside the
        model's control: why), ``environment_state`` (the environment's ``state`` at the end), ``row`` (the row's
        other columns).
        """
        self._recorded = {}
        self.model.train()   # TRL generates inside training_step, with the policy in training mode
        with torch.no_grad():
            self._generate_and_score_completions(rows)
        gen, scored = self._recorded.get("generate"), self._recorded.get("rewards")
        if gen is None or scored is None:
            raise RuntimeError("TRL generated without passing _generate and _calculate_rewards: this TRL version "
                               "changed the seams the rollout road records at")
        prompt_ids, completion_ids, tool_mask, _completions, *_ = gen
        inputs, prompts, completions, completion_ids_list, environments = scored
        stops = set(self.eos_token_ids)
        out = []
        for i, row in enumerate(inputs):
            ids = list(completion_ids_list[i])
            env = environments[i] if environments else None
            out.append({"prompt": prompts[i], "completion": completions[i], "prompt_ids": list(prompt_ids[i]),
                        "completion_ids": ids, "loss_mask": None if tool_mask is None else list(tool_mask[i]),
                        "stop": "eos" if ids and ids[-1] in stops else "length",
                        "unavailable": unavailable_in(completions[i], env),   # a reset that raised marks env
                        "environment_state": None if env is None else getattr(env, "state", None),
                        "row": {k: v for k, v in row.items() if k != "prompt"}})
        return out

    # --- TRL's hooks ---------------------------------------------------------------------------------------
    def _generate(self, prompts: list):
        result = super()._generate(prompts)
        self._recorded["generate"] = result
        return result

    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
        self._recorded["rewards"] = (list(inputs), list(prompts), list(completions), list(completion_ids_list),
                                     list(self.environments or ()))
        return torch.zeros(len(prompts), len(self.reward_funcs), device=self.accelerator.device)


__all__ = ["RolloutTrainer"]
