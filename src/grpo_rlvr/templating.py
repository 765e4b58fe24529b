"""The Jinja2 environment for every template under ``grpo_rlvr/templates``: StrictUndefined (a missing value
is an error, never an empty string), trailing newlines kept."""

from __future__ import annotations

import jinja2


def environment(autoescape: bool = False) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("grpo_rlvr", "templates"),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=autoescape,
    )
    env.filters["py"] = repr  # a Python literal, for values substituted into rendered .py files
    return env
