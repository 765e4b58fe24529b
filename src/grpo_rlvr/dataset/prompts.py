"""The prompt each dataset row becomes: built by one function for preflight, inspect and the rendered train.py.

The brief's ``prompt`` section has two optional keys:

- ``system``: a system message put first in every prompt (one already in a chat prompt is replaced);
- ``template``: Jinja over the row's own column names (before ``dataset.columns`` mapping), rendered with
  StrictUndefined, giving the user message: ``"{{ question }}\\n\\nEnd with: The answer is N."``.

Without either, the prompt is the row's ``dataset.prompt_column`` unchanged (a string or chat messages). With
either, the prompt is chat messages, so the tokenizer's chat template applies (as TRL does for conversational
prompts). Templates run in Jinja's sandbox: a brief's template cannot reach Python internals.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from grpo_rlvr.errors import ConfigError, InputFileError


@dataclass(frozen=True)
class PromptSpec:
    system: str | None = None
    template: str | None = None

    @classmethod
    def from_dict(cls, data: Mapping | None) -> PromptSpec:
        data = data or {}
        return cls(data.get("system"), data.get("template"))

    @property
    def active(self) -> bool:
        return bool(self.system or self.template)

    def to_dict(self) -> dict:
        return {k: v for k, v in (("system", self.system), ("template", self.template)) if v}


@lru_cache(maxsize=32)
def _compile(text: str):
    import jinja2
    from jinja2.sandbox import SandboxedEnvironment

    env = SandboxedEnvironment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    try:
        return env, env.from_string(text)
    except jinja2.TemplateSyntaxError as e:
        raise ConfigError(f"prompt.template: not valid Jinja at line {e.lineno}: {e.message}; fix the template "
                          "(columns are written {{ column }})") from None


def template_columns(text: str) -> set[str]:
    """The column names a template reads."""
    from jinja2 import meta

    env, _ = _compile(text)
    return set(meta.find_undeclared_variables(env.parse(text)))


def render_template(text: str, row: Mapping, where: str = "row") -> str:
    import jinja2

    _, template = _compile(text)
    try:
        return template.render(**row)
    except jinja2.UndefinedError as e:
        raise InputFileError(f"prompt.template: {where} has no value for it ({e.message}); its columns are "
                             f"{', '.join(sorted(map(str, row)))}") from None
    except jinja2.TemplateError as e:
        raise InputFileError(f"prompt.template: cannot render it for {where}: {e}") from None


def check_prompt(spec: PromptSpec, prompt_column: str, row: Mapping | None) -> list[str]:
    """Problems with the prompt section against the first row of the dataset (None: columns unknown)."""
    if spec.template:
        try:
            needed = template_columns(spec.template)
        except ConfigError as e:
            return list(e.problems)
        if row is not None:
            missing = sorted(needed - set(row))
            if missing:
                return [f"prompt.template: reads {', '.join(map(repr, missing))}, not a column of the dataset "
                        f"(columns: {', '.join(sorted(row))}); fix the template"]
            try:
                render_template(spec.template, row, "the first row")
            except InputFileError as e:
                return [str(e)]
    elif row is not None and prompt_column not in row:
        return [f"dataset.prompt_column: column {prompt_column!r} is not in the dataset (columns: "
                f"{', '.join(sorted(row))}); set dataset.prompt_column, or write prompt.template over the columns"]
    return []


def build_prompt(row: Mapping, prompt_column: str, spec: PromptSpec | Mapping | None, where: str = "row"):
    """The prompt for one raw dataset row: a string or chat messages (see the module docstring).

    Raises:
        InputFileError: the row lacks a column the template or ``prompt_column`` names.
    """
    spec = spec if isinstance(spec, PromptSpec) else PromptSpec.from_dict(spec)
    if spec.template:
        user = render_template(spec.template, row, where)
    elif prompt_column in row:
        user = row[prompt_column]
    else:
        raise InputFileError(f"dataset.prompt_column: {where} has no column {prompt_column!r} "
                             f"(columns: {', '.join(sorted(map(str, row)))})")
    if not spec.active:
        return user
    if isinstance(user, (list, tuple)):
        messages = [dict(m) for m in user if not (isinstance(m, Mapping) and m.get("role") == "system")]
    else:
        messages = [{"role": "user", "content": str(user)}]
    if spec.system:
        messages.insert(0, {"role": "system", "content": spec.system})
    return messages
