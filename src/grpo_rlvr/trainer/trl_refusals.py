"""What TRL itself refuses in a run's GRPOConfig settings, found on any machine before anything trains: TRL's own
``GRPOConfig`` (and through it transformers' ``TrainingArguments`` checks) is built from the settings, then the
optimizer and the learning-rate scheduler are looked up as the Trainer does at its first step (an unknown
``optim``, a ``cosine_with_min_lr`` schedule without its ``lr_scheduler_kwargs``). Each refusal comes back as the
brief field that causes it, TRL's message and the fix. Imports TRL (a few seconds).

"On any machine": the settings are checked with ``use_cpu`` set, so a desk without the GPU a brief is for (bf16 on
a GPU box) checks them too; what needs the training machine's packages (``optim: adamw_bnb_8bit`` needs
bitsandbytes) is returned apart, as missing packages.

The field is found by TRL's own answer, not by reading its message: a setting that, put back to TRL's default,
makes the refusal go away is the one named (several when only a combination is refused).
"""

from __future__ import annotations

import contextlib
import difflib
import os
import re
import tempfile

# Settings that are the run's place or the machine's, not a choice TRL could refuse here: left out of the check.
_MACHINE = ("output_dir", "use_cpu")
_CHOICES = re.compile(r"^(.*?) is not a valid (\w+), please select one of \[(.*)\]", re.S)


def _build(cfg: dict):
    from trl import GRPOConfig

    return GRPOConfig(**cfg)


@contextlib.contextmanager
def _neutral_environment():
    """``ACCELERATE_MIXED_PRECISION`` and the output folder as training sets them, without touching this process's
    environment for long."""
    saved = os.environ.get("ACCELERATE_MIXED_PRECISION")
    try:
        with tempfile.TemporaryDirectory(prefix="grpo-rlvr-trl-check-") as tmp:
            yield tmp
    finally:
        if saved is None:
            os.environ.pop("ACCELERATE_MIXED_PRECISION", None)
        else:
            os.environ["ACCELERATE_MIXED_PRECISION"] = saved


def _message(e: Exception) -> str:
    text = " ".join(str(e).split()).rstrip(".") or type(e).__name__
    m = _CHOICES.match(text)
    if not m:
        return text[:400]
    value, kind, choices = m.group(1), m.group(2), [c.strip(" '\"") for c in m.group(3).split(",")]
    near = difflib.get_close_matches(value, choices, n=1)
    hint = f"did you mean {near[0]!r}? " if near else ""
    return f"{value!r} is not one of its {kind}: {hint}{', '.join(choices)}"


def _culprits(cfg: dict, keys: list[str]) -> list[str]:
    """The settings whose return to TRL's default lets GRPOConfig build (one by one, then all at once)."""
    found = []
    for k in keys:
        try:
            _build({x: v for x, v in cfg.items() if x != k})
        except Exception:  # noqa: BLE001 - TRL refuses in ValueError, TypeError and its own types
            continue
        found.append(k)
    return found


def _config_refusal(cfg: dict, keys: list[str]) -> tuple[object | None, list[str]]:
    try:
        return _build(cfg), []
    except Exception as e:  # noqa: BLE001 - whatever GRPOConfig raises is its refusal
        msg = _message(e)
        named = _culprits(cfg, keys) or [k for k in keys if re.search(rf"\b{re.escape(k)}\b", str(e))]
        fields = ", ".join(f"grpo.{k}" for k in named) or "grpo"
        values = "; ".join(f"{k}: {cfg[k]!r}" for k in named)
        return None, [f"{fields}: TRL's GRPOConfig refuses {values or 'these settings'}: {msg}. Change it in the "
                      "brief (TRL would refuse it at the start of training, after the model loaded)"]


def _optimizer_refusal(args) -> tuple[list[str], list[str]]:
    from transformers import Trainer

    try:
        Trainer.get_optimizer_cls_and_kwargs(args)
    except ImportError as e:
        return [], [f"grpo.optim: {args.optim.value!r} needs a package this machine lacks: {_message(e)}"]
    except Exception as e:  # noqa: BLE001 - the Trainer refuses an optimizer in ValueError and others
        return [f"grpo.optim: {args.optim.value!r}: the Trainer refuses it when it builds the optimizer: "
                f"{_message(e)}; fix optim (or optim_args) in the brief"], []
    return [], []


def _scheduler_refusal(args, max_steps: int) -> list[str]:
    import torch
    from transformers.optimization import get_scheduler

    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=args.learning_rate)
    try:
        get_scheduler(args.lr_scheduler_type, optimizer=optimizer, num_warmup_steps=args.get_warmup_steps(max_steps),
                      num_training_steps=max_steps, scheduler_specific_kwargs=args.lr_scheduler_kwargs or {})
    except Exception as e:  # noqa: BLE001 - transformers refuses a schedule in ValueError and TypeError
        kind = getattr(args.lr_scheduler_type, "value", args.lr_scheduler_type)
        kwargs = args.lr_scheduler_kwargs or {}
        return [f"grpo.lr_scheduler_type: {kind!r} with lr_scheduler_kwargs {kwargs!r}: the Trainer refuses the "
                f"schedule when training starts: {_message(e)}; set grpo.lr_scheduler_kwargs in the brief (e.g. "
                f"{{min_lr_rate: 0.1}} for cosine_with_min_lr), or another lr_scheduler_type"]
    return []


def config_error(cfg: dict, error: Exception):
    """The ``ConfigError`` for GRPOConfig's refusal ``error`` of ``cfg`` on this machine (the rendered train.py's
    build), naming the brief field and the fix."""
    from grpo_rlvr.errors import ConfigError

    _, refusals = _config_refusal(cfg, [k for k in cfg if k not in _MACHINE])
    return ConfigError(refusals or [f"grpo: TRL's GRPOConfig refuses these settings: {_message(error)}"])


def trl_refusals(cfg: dict) -> tuple[list[str], list[str]]:
    """``(refusals, missing_packages)`` for GRPOConfig settings ``cfg`` (``grpo_config.yaml``'s keys), checked
    here as TRL checks them at the start of training. Both empty when TRL would take the settings."""
    keys = [k for k in cfg if k not in _MACHINE]
    with _neutral_environment() as tmp:
        checked = {**cfg, "output_dir": tmp, "use_cpu": True}
        args, refusals = _config_refusal(checked, keys)
        if args is None:
            return refusals, []
        bad_optim, missing = _optimizer_refusal(args)
        steps = args.max_steps if isinstance(args.max_steps, int) and args.max_steps > 0 else 1000
        return bad_optim + _scheduler_refusal(args, steps), missing


__all__ = ["config_error", "trl_refusals"]
