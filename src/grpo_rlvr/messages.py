"""Chat messages read as text: what a reward, a checker or a reader takes from a prompt or a completion that is a
string or a list of messages (TRL's conversational format), content blocks included.

Below every room: the rewards read a completion's final text with it, the rollout's trajectories and the readers
of stored samples (gate, inspection, review) the same way.
"""

from __future__ import annotations

from collections.abc import Sequence


def is_chat(value) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str)


def final_text(completion) -> str:
    """The text a completion ends with: a string as is; for messages, the content of the last assistant message
    (one message alone: its content)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        return message_text(completion.get("content"))
    if is_chat(completion):
        assistants = [m for m in completion if isinstance(m, dict) and m.get("role", "assistant") == "assistant"]
        return message_text(assistants[-1].get("content")) if assistants else ""
    return "" if completion is None else str(completion)


def message_text(content) -> str:
    """A message's content as text: a string, or the text parts of a list of content blocks."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if is_chat(content):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    return str(content)


def last_user_text(prompt) -> str:
    """The text of a prompt's last user message (a text prompt as is): what a task's own checker reads."""
    if not is_chat(prompt):
        return "" if prompt is None else str(prompt)
    users = [m for m in prompt if isinstance(m, dict) and m.get("role") == "user"]
    return message_text(users[-1].get("content")) if users else ""
