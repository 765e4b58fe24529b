"""Every private attribute of TRL's trainer that grpo-rlvr's training relies on, in one list: each with the TRL
release it was read from and what it is used for. ``check()`` runs when a trainer is built
(``trainer_build.build_trainer``) and refuses a TRL that lacks one, naming it, the installed version and the fix,
so a renamed internal stops the run at its start and never switches a feature off in silence (a renamed
``_sync_tool_dicts`` once would have: tool calls back to one after another, nothing said).

A method is looked up on TRL's ``GRPOTrainer`` (its own, ``_BaseTrainer``'s or transformers' ``Trainer``'s); an
attribute must be set on ``self`` by one of those classes' methods as they are loaded (read from their source, since
TRL sets some only while it generates). Only ``grpo_rlvr.trainer`` names a private attribute of TRL's trainer
(tests/test_layers.py), and tests/trainer/test_trl_seams.py holds that this list names every one it uses.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from functools import cache
from typing import NamedTuple

from grpo_rlvr.errors import MachineError

READ_FROM = "1.16.0"   # the TRL release every seam below was read from (with transformers 5.17.0: constraints.txt)


class Seam(NamedTuple):
    name: str
    kind: str       # "method" (looked up on TRL's GRPOTrainer) or "attribute" (set on self by its methods)
    used_for: str


SEAMS = (
    Seam("_generate_and_score_completions", "method",
         "one generation batch: the review audit reads it (trainers.GRPOTrainerWithHeldOut), dynamic sampling "
         "repeats it until groups carry signal, the rollout road generates through it and reads the prompt ids "
         "and the tool mask from what it returns (rollout_trainer)"),
    Seam("_calculate_rewards", "method",
         "samples a reward could not score are left out (NaN), the review audit keeps each reward's score, dynamic "
         "sampling reads the gathered rewards"),
    Seam("_tool_call_loop", "method", "a turn's tool calls run at once (brief tools.concurrency)"),
    Seam("_sync_tool_dicts", "attribute",
         "each rollout's synchronous tools, swapped for ones whose calls start together (tools.concurrency)"),
    Seam("_logs", "attribute",
         "the logged-completions buffer: evaluations get one of their own, dynamic sampling logs the batch it "
         "trained, tool-call arguments are logged as JSON text"),
    Seam("_metrics", "attribute", "unscorable/frac and dynamic_sampling/* logged with TRL's own metrics"),
    Seam("_tokenizer", "attribute", "the pad token dynamic sampling pads a regrouped batch with"),
    Seam("_save_checkpoint", "method", "dynamic sampling saves its refill stream's position in each checkpoint"),
    Seam("_get_output_dir", "method", "the folder _save_checkpoint writes the checkpoint to"),
    Seam("_load_optimizer_and_scheduler", "method", "a resume reads the refill stream's position back"),
    Seam("_set_signature_columns_if_needed", "method",
         "the columns TRL's dataloader keeps, applied to dynamic sampling's refill rows"),
    Seam("_signature_columns", "attribute", "those columns, as TRL caches them"),
)


def trl_classes(base: type | None = None) -> list[type]:
    """TRL's GRPOTrainer (or ``base``) and the classes of TRL and transformers it derives from."""
    if base is None:
        from trl import GRPOTrainer

        base = GRPOTrainer
    return [c for c in base.__mro__ if c.__module__.split(".")[0] in ("trl", "transformers")]


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


@cache
def _set_on_self(fn) -> frozenset[str]:
    """The attribute names ``fn`` (a method) assigns on ``self``."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):   # no source to read (a builtin, a compiled extension)
        return frozenset()
    return frozenset(n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)
                     and isinstance(n.value, ast.Name) and n.value.id == "self")


def set_on_self(cls: type) -> set[str]:
    """What the methods of ``cls`` as loaded now (its own dict, so a patched method counts) assign on ``self``."""
    out: set[str] = set()
    for value in vars(cls).values():
        value = value.fget if isinstance(value, property) else getattr(value, "__func__", value)
        if inspect.isfunction(value):
            out |= _set_on_self(value)
    return out


def trl_private_names(base: type | None = None) -> set[str]:
    """Every private name of TRL's trainer: the methods and class attributes of its classes, and what their
    methods set on ``self``."""
    classes = trl_classes(base)
    return {n for c in classes for n in (*vars(c), *set_on_self(c)) if _private(n)}


def missing(base: type | None = None) -> list[Seam]:
    """The seams TRL's trainer (or ``base``) lacks: a method it does not have, an attribute none of its methods
    sets."""
    classes = trl_classes(base)
    assigned = set().union(*(set_on_self(c) for c in classes))
    return [s for s in SEAMS if not (callable(getattr(classes[0], s.name, None)) if s.kind == "method"
                                     else s.name in assigned)]


def check(base: type | None = None) -> None:
    """Refuse a TRL whose trainer lacks a seam training relies on.

    Raises:
        MachineError: each missing seam named, with the TRL installed, the release it was read from, what it is
            for, and the fix.
    """
    gone = missing(base)
    if not gone:
        return
    import transformers
    import trl

    lines = [f"`{s.name}` ({s.kind}, used for: {s.used_for})" for s in gone]
    raise MachineError(
        f"the installed TRL {trl.__version__} (transformers {transformers.__version__}) lacks "
        f"{'this private seam' if len(gone) == 1 else 'these private seams'} of its GRPOTrainer that grpo-rlvr "
        f"read from TRL {READ_FROM}:\n  - " + "\n  - ".join(lines) +
        "\nInstall the versions grpo-rlvr pins in constraints.txt: pip install 'trl==1.16.*' 'transformers==5.17.*'")
