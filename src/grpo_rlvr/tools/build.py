"""The brief's tools as TRL's trainer takes them: ``tools=[...]`` (user functions and the built-in ``python``) and
``environment_factory`` (one instance of the environment class per rollout). Preflight, inspect and the rendered
``train.py`` all build them here, so the model meets the same tools on every road, each behind the same per-call
time limit (``guard``)."""

from __future__ import annotations

import functools
from pathlib import Path

from grpo_rlvr.tool_failures import UNAVAILABLE, ToolUnavailable
from grpo_rlvr.tools.guard import guarded
from grpo_rlvr.tools.loading import environment_methods, load_tools


def trainer_tools(spec: dict | None, base_dir: Path) -> tuple[list | None, object | None]:
    """``(tools, environment_factory)`` for ``GRPOTrainer`` from a ``ToolsSpec.to_dict()`` (None: no tools).

    Raises:
        ConfigError: as ``load_tools``.
    """
    if not spec:
        return None, None
    loaded = load_tools(spec, Path(base_dir))
    timeout = loaded.call_timeout_s
    tools = [guarded(fn, timeout) for _, fn in loaded.functions]
    if loaded.python is not None:
        from grpo_rlvr.tools.python_tool import python_tool

        # One program per usable core, each call's limit counted from its program's start and never below the
        # program's own (the sandbox's timeout answers first: an endless loop is the model's failure, scored)
        tools.append(python_tool(**loaded.python, call_timeout_s=timeout))
    factory = None
    if loaded.environment is not None:
        cls = loaded.environment[1]

        def factory():
            # TRL reads the tools off the class and calls them on the instance: the instance's own attributes
            # (the guarded methods, and the guarded reset) are what it calls
            env = cls()
            for method in environment_methods(cls):
                setattr(env, method.__name__, marking(env, guarded(getattr(env, method.__name__), timeout)))
            env.reset = resetting(env, env.reset)
            return env
    return tools or None, factory


def resetting(env, reset):
    """``reset`` that never stops a training step: a reset that raises marks this rollout's environment
    unavailable (its rollout is then not scored), and the model is given the prompt alone."""
    @functools.wraps(reset)
    def call(**row):
        setattr(env, UNAVAILABLE, None)
        try:
            return reset(**row)
        except Exception as e:  # noqa: BLE001 - the environment's failure, not the model's: counted, never scored
            setattr(env, UNAVAILABLE, f"{RESET_FAILED}: {type(e).__name__}: {str(e)[:200]}{_where(e)}")
            return None
    return call


RESET_FAILED = "environment reset failed"


def _where(e: BaseException) -> str:
    """`` (at FILE:LINE in FUNCTION)``: the deepest frame of ``e``'s traceback (the environment's own code)."""
    import traceback

    frames = traceback.extract_tb(e.__traceback__)
    return f" (at {frames[-1].filename}:{frames[-1].lineno} in {frames[-1].name})" if frames else ""


def marking(env, method):
    """``method`` that marks its environment unavailable when it raises ``ToolUnavailable`` (the reply to the
    model carries the mark too)."""
    @functools.wraps(method)
    def call(*args, **kwargs):
        try:
            return method(*args, **kwargs)
        except ToolUnavailable as e:
            setattr(env, UNAVAILABLE, str(e.why))
            raise
    return call


__all__ = ["RESET_FAILED", "resetting", "trainer_tools"]
