"""Can TRL run tool calls with this model's tokenizer? Asked of TRL's own checks, before anything is sampled.

TRL needs three things of the chat template and the tokenizer for a multi-turn tool loop: the template renders a
whole tool exchange (the call's name and arguments, the tool's reply), it is prefix-preserving (earlier turns render
the same whatever follows), or TRL has a training template for its family that is; and the tokenizer can parse a
generated call back into ``tool_calls`` (a ``response_template``, or one TRL knows for the family). Each missing one
is said with its fix; ``validate`` says them, and the rollout road's trainer would otherwise fail when built.
"""

from __future__ import annotations


def template_problems(tokenizer) -> list[str]:
    """What stops TRL's tool loop with ``tokenizer`` (empty: nothing)."""
    import copy

    from trl.chat_template_utils import (
        add_response_schema,
        get_training_chat_template,
        is_chat_template_prefix_preserving,
        supports_tool_calling,
    )

    if not supports_tool_calling(tokenizer):
        return ["tools: the model's chat template cannot render a tool call and its reply (the call's name and "
                "arguments and the tool message must appear); use a model whose template supports tools (Qwen2.5/3, "
                "Llama 3.1+, GPT-OSS, Gemma, GLM-4 ...), or put a chat template that does in the model folder"]
    problems = []
    if not is_chat_template_prefix_preserving(tokenizer):
        try:
            get_training_chat_template(tokenizer)
        except (ValueError, NotImplementedError) as e:
            problems.append(f"tools: the chat template is not prefix-preserving (earlier turns render differently "
                            f"once a tool reply follows) and TRL has no training template for it ({e}); use a model "
                            "family TRL knows, or a template that renders each turn the same whatever follows")
    if getattr(tokenizer, "response_template", None) is None and getattr(tokenizer, "response_schema", None) is None:
        try:
            add_response_schema(copy.copy(tokenizer))
        except ValueError:
            problems.append("tools: the tokenizer cannot parse a generated tool call (it has no response_template, "
                            "and TRL knows none for this chat template); set tokenizer.response_template in the "
                            "model folder's tokenizer_config.json (see transformers' response parsing docs)")
    return problems


def brief_tool_problems(brief) -> list[str]:
    """A brief with tools: what stops TRL's tool loop with the model's tokenizer; loads the tokenizer only."""
    if brief.tools is None:
        return []
    from grpo_rlvr.trainer.model_loading import load_tokenizer

    return template_problems(load_tokenizer(brief.model))


__all__ = ["brief_tool_problems", "template_problems"]
