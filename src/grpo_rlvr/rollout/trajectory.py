"""A trajectory: one sampled episode as the trainer saw it, the record every phase reads.

It holds the prompt as the model was given it (the system message and every earlier turn of a chat prompt; after an
environment's ``reset`` added its observation), the completion as TRL hands it to reward functions (text for a text
prompt; for a chat prompt the assistant's messages, with each tool call and the tool's reply when there are tools),
the token ids of both, the loss mask over the completion (1 for the model's tokens, which train; 0 for tool output,
which TRL masks out of the loss; absent for a single turn, where every token trains) and why it stopped (``eos``:
the model ended it; ``length``: ``max_completion_length`` cut it).

A single-turn chat completion is a trajectory of one assistant message. The built-in rewards read the last assistant
message (``text``), as a person reading the final answer would.
"""

from __future__ import annotations

from dataclasses import dataclass

from grpo_rlvr.messages import final_text, is_chat, message_text

STOPS = ("eos", "length")


@dataclass(frozen=True)
class Trajectory:
    prompt: object                        # str, or the chat messages the model was conditioned on
    completion: object                    # str, or the assistant's messages (tool calls and results included)
    prompt_ids: tuple[int, ...] = ()
    completion_ids: tuple[int, ...] = ()
    loss_mask: tuple[int, ...] | None = None   # over completion_ids: 1 trained (the model's), 0 masked (tool output)
    stop: str = "eos"                     # "eos" | "length"
    unavailable: str | None = None        # a tool failed outside the model's control: why (the rollout is not scored)
    environment_state: dict | None = None  # the environment's ``state`` when the rollout ended (rewards read it)

    @property
    def text(self) -> str:
        """What the built-in rewards read: the final assistant message."""
        return final_text(self.completion)

    @property
    def truncated(self) -> bool:
        return self.stop == "length"

    @property
    def num_tokens(self) -> int:
        """Tokens the model wrote (tool output left out)."""
        return sum(self.loss_mask) if self.loss_mask is not None else len(self.completion_ids)

    @property
    def messages(self) -> list[dict] | None:
        """The whole conversation (prompt then completion) for a chat trajectory; None for a text one."""
        if is_chat(self.prompt) and is_chat(self.completion):
            return [*self.prompt, *self.completion]
        return None

    @property
    def tool_calls(self) -> int:
        """How many tool calls the completion makes."""
        if not is_chat(self.completion):
            return 0
        return sum(len(m.get("tool_calls") or ()) for m in self.completion if isinstance(m, dict))

    def to_record(self) -> dict:
        """The JSON record the inspection artifact stores."""
        out = {"prompt": self.prompt, "completion": self.completion, "prompt_ids": list(self.prompt_ids),
               "completion_ids": list(self.completion_ids), "stop": self.stop}
        if self.loss_mask is not None:
            out["loss_mask"] = list(self.loss_mask)
        if self.unavailable is not None:
            out["unavailable"] = self.unavailable
        if self.environment_state is not None:
            out["environment_state"] = self.environment_state
        return out

    @classmethod
    def from_record(cls, record: dict) -> Trajectory:
        mask = record.get("loss_mask")
        return cls(record["prompt"], record["completion"], tuple(record.get("prompt_ids") or ()),
                   tuple(record.get("completion_ids") or ()), None if mask is None else tuple(mask),
                   record.get("stop", "eos"), record.get("unavailable"), record.get("environment_state"))


def turns(conversation) -> list[tuple[str, str]]:
    """A prompt or completion as labelled turns for a reader: ``("system", text)``, ``("user", text)``,
    ``("assistant", text)``, one ``("assistant → call", "name {arguments}")`` per tool call, ``("tool name",
    reply)``; a text prompt or completion is one unlabelled turn ``("", text)``. Nothing is left out: every message
    the model saw or wrote, whole."""
    import json

    if not is_chat(conversation):
        return [("", "" if conversation is None else str(conversation))]
    out = []
    for m in conversation:
        if not isinstance(m, dict):
            out.append(("?", str(m)))
            continue
        role = str(m.get("role", "?"))
        label = f"tool {m['name']}" if role == "tool" and m.get("name") else role
        content = message_text(m.get("content"))
        if content or not m.get("tool_calls"):
            out.append((label, content))
        for call in m.get("tool_calls") or ():
            fn = call.get("function", call) if isinstance(call, dict) else {}
            args = fn.get("arguments", {})
            shown = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False, sort_keys=True)
            out.append((f"{role} → call", f"{fn.get('name', '?')} {shown}"))
    return out


class EnvironmentState:
    """A finished rollout's environment as a reward reads it outside training (the gate's re-score of a stored
    trajectory): only its ``state``, as recorded when the rollout ended."""

    def __init__(self, state: dict | None):
        self.state = state
