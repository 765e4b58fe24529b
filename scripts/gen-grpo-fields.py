#!/usr/bin/env python
"""Regenerate src/grpo_rlvr/brief/grpo_config_fields.json from the installed TRL's GRPOConfig.

Each field gets the kind of value the brief may give it (bool, int, float, str, or any for unions and
objects) and whether null is allowed, so `validate` checks override types without importing TRL.
Run: .venv/bin/python scripts/gen-grpo-fields.py  (tests/brief/test_loader.py fails when the file is stale).
"""

import dataclasses
import json
import sys
import types
import typing
from pathlib import Path

import trl
from trl import GRPOConfig

OUT = Path(__file__).resolve().parents[1] / "src" / "grpo_rlvr" / "brief" / "grpo_config_fields.json"


def kind(tp) -> tuple[str, bool]:
    args = typing.get_args(tp) if typing.get_origin(tp) in (typing.Union, types.UnionType) else (tp,)
    nullable = type(None) in args
    rest = [a for a in args if a is not type(None)]
    if len(rest) == 1 and rest[0] in (bool, int, float, str):
        return rest[0].__name__, nullable
    return "any", nullable


def fields() -> dict:
    hints = typing.get_type_hints(GRPOConfig)
    out = {}
    for f in sorted(dataclasses.fields(GRPOConfig), key=lambda f: f.name):
        if f.name.startswith("_"):
            continue
        k, nullable = kind(hints.get(f.name, f.type))
        out[f.name] = {"type": k, "nullable": nullable}
    return out


if __name__ == "__main__":
    OUT.write_text(json.dumps({"trl_version": trl.__version__, "fields": fields()}, indent=1) + "\n")
    print(f"wrote {OUT} ({len(fields())} fields, TRL {trl.__version__})", file=sys.stderr)
