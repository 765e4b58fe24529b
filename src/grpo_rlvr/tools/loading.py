"""The brief's tools, imported and checked at the edge, and what the review binds them by.

A function must have type hints and a Google-style docstring (transformers turns them into the JSON schema the
model is shown; TRL refuses a tool without them only once the trainer is built). An environment class must define
``reset`` (TRL calls ``reset(**row)`` at every rollout), and its public methods are its tools, held to the same rule;
its ``state`` property gives what rewards read of it (JSON-able: each stored trajectory keeps it, so the gate can
re-score); a ``get_reward`` is refused, since TRL would add it as a reward nobody reviewed.
Every file of the tools' code is recorded by its bytes (``record``), as a user reward's is, and so is every other file
of a tool module's own folder (the data an environment's ``reset`` or a tool reads: ``folder_files``) when the module
is in a folder of its own, below the brief's; the gate and the run check see an edit before they import anything. A
module beside the brief is bound by its code only (the brief's folder holds the project, not the tool), and what a
tool reads from elsewhere (a service, a file outside its folder) is bound by nothing: for those, the review audit
compares what training samples with what was reviewed and stops a run whose rollouts changed.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from pathlib import Path

from grpo_rlvr.errors import ConfigError, RewardError

PYTHON_DEFAULTS = {"timeout_s": 5.0, "memory_mb": 512}


@dataclass
class LoadedTools:
    functions: list = field(default_factory=list)   # (ref, function)
    environment: tuple | None = None                 # (ref, class)
    python: dict | None = None                       # the python tool's limits
    call_timeout_s: float | None = 30.0
    record: dict = field(default_factory=dict)       # what the manifest binds: spec, fingerprint, sources


def schema_problem(fn, where: str) -> str | None:
    """Why TRL could not show ``fn`` to the model as a tool (its JSON schema cannot be made), or None."""
    from transformers.utils import get_json_schema

    try:
        get_json_schema(fn)
    except Exception as e:  # noqa: BLE001 - transformers raises TypeError or its own DocstringParsingException
        return (f"{where}: {fn.__name__} cannot be shown to the model as a tool: {e}; give every argument a type "
                "hint and the function a Google-style docstring with an Args: section describing each argument")
    return None


def environment_methods(cls) -> list:
    """The tools an environment class offers, as TRL reads them: its public functions but reset and get_reward."""
    return [fn for name, fn in inspect.getmembers(cls, predicate=inspect.isfunction)
            if not name.startswith("_") and name not in ("reset", "get_reward")]


MAX_FOLDER_FILES, MAX_FOLDER_BYTES = 2000, 256 << 20   # a tool's folder bound by its bytes: at most this much


def folder_files(module_file: str | None, exclude: tuple = ()) -> tuple[list[Path], str | None]:
    """Every file of the folder a tool's module is in, below it too (its data: a task list an environment's
    ``reset`` reads, a table a tool looks up), but ``__pycache__``, hidden entries, links, and the brief's model,
    data and output folders (``exclude``); and why the folder cannot be bound (too large), or None."""
    if not module_file:
        return [], None
    root = Path(module_file).resolve().parent
    skip = {Path(e).resolve() for e in exclude if e}
    found, size = [], 0
    todo = [root]
    while todo:
        folder = todo.pop()
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            continue
        for p in entries:
            if p.name.startswith(".") or p.name == "__pycache__" or p.is_symlink() or p.resolve() in skip:
                continue
            if p.is_dir():
                todo.append(p)
            elif p.is_file():
                found.append(p)
                size += p.stat().st_size
        if len(found) > MAX_FOLDER_FILES or size > MAX_FOLDER_BYTES:
            return [], (f"{root} holds more than {MAX_FOLDER_FILES} files or {MAX_FOLDER_BYTES >> 20} MiB; the review "
                        "binds a tool's folder by its bytes (its data included): move the tool's module and the files "
                        "it reads into a folder of their own")
    return found, None


def bound_elsewhere(brief) -> tuple:
    """The brief's folders that are bound by their own identity (the model, the data) or hold outputs: not part of a
    tool's folder."""
    out = [brief.output_dir]
    if brief.model.is_local:
        out.append(brief.model.resolved)
    for path, local in ((brief.dataset.resolved, brief.dataset.is_local),
                        (brief.dataset.eval_resolved, brief.dataset.eval_is_local)):
        if path and local:
            out.append(path)
    return tuple(out)


def load_tools(spec: dict, base_dir: Path, exclude: tuple = ()) -> LoadedTools:
    """Import and check the tools a ``ToolsSpec.to_dict()`` names.

    Args:
        exclude: folders not to bind with a tool's folder (the brief's model, data and output folders).
    Raises:
        ConfigError: a tool that cannot be imported, has no usable schema, or an environment without ``reset``;
            a tool's folder too large to bind; every problem, each naming its ``tools.`` field.
    """
    from grpo_rlvr.rewards._reward import source_fingerprint
    from grpo_rlvr.rewards.user import _load, code_record

    problems, out = [], LoadedTools(call_timeout_s=spec.get("call_timeout_s"))
    imports, sources = {}, {}
    for i, ref in enumerate(spec.get("functions") or ()):
        where = f"tools.functions[{i}] {ref!r}"
        try:
            module, fn = _load(ref, base_dir, what="tool", default="")
        except RewardError as e:
            problems.append(f"tools.functions[{i}]: {e}")
            continue
        if inspect.isclass(fn) or not callable(fn):
            problems.append(f"{where}: not a function (an environment class goes in tools.environment)")
            continue
        problems.extend(p for p in [schema_problem(fn, where)] if p)
        out.functions.append((ref, fn))
        imp, src = code_record(module, fn, base_dir)
        imports.update(imp)
        sources.update(src)
        problems += _bind_folder(module, f"tools.functions[{i}]", base_dir, exclude, sources)
    ref = spec.get("environment")
    if ref:
        try:
            module, cls = _load(ref, base_dir, what="tool environment", default="")
        except RewardError as e:
            problems.append(f"tools.environment: {e}")
        else:
            if not inspect.isclass(cls) or not callable(getattr(cls, "reset", None)):
                problems.append(f"tools.environment {ref!r}: not a class with a reset(**row) method (TRL resets one "
                                "instance per rollout with the dataset row)")
            elif callable(getattr(cls, "get_reward", None)):
                problems.append(f"tools.environment {ref!r}: defines get_reward(), which TRL would add as a reward the "
                                "review never showed; score the outcome with a reward in rewards: instead (a user "
                                "reward receives environments=, one per completion, and reads each one's state)")
            elif not isinstance(inspect.getattr_static(cls, "state", None), property):
                problems.append(f"tools.environment {ref!r}: has no state property; give it one returning the "
                                "environment's state as JSON-able data (the inspection records it with each "
                                "trajectory, and rewards read it, in training and when the gate re-scores)")
            else:
                methods = environment_methods(cls)
                if not methods:
                    problems.append(f"tools.environment {ref!r}: no public method to offer the model as a tool")
                problems.extend(p for p in (schema_problem(m, f"tools.environment {ref!r}") for m in methods) if p)
                out.environment = (ref, cls)
                imp, src = code_record(module, cls, base_dir)
                imports.update(imp)
                sources.update(src)
                problems += _bind_folder(module, "tools.environment", base_dir, exclude, sources)
    python = spec.get("python")
    if python is not None and python is not False:   # {} or True: the tool with its default limits
        out.python = {**PYTHON_DEFAULTS, **(python if isinstance(python, dict) else {})}
    if problems:
        raise ConfigError(problems)
    objs = [fn for _, fn in out.functions] + ([out.environment[1]] if out.environment else [])
    fingerprint = source_fingerprint(*objs, extra={"spec": spec, "imports": imports}) if objs else \
        source_fingerprint(extra={"spec": spec})
    out.record = {"spec": spec, "fingerprint": fingerprint, "sources": sources}
    return out


def _bind_folder(module, field: str, base_dir: Path, exclude: tuple, sources: dict) -> list[str]:
    """Add every file of a tool module's folder to ``sources`` (by the path the manifest records → SHA-256); the
    problem when the folder is too large to bind. The package's own tools (grpo_rlvr's) are bound by their code."""
    from grpo_rlvr.identity.hash_cache import sha256_file
    from grpo_rlvr.rewards.user import _as_recorded

    file = getattr(module, "__file__", None)
    if not file or Path(file).resolve().is_relative_to(Path(__file__).resolve().parents[1]):
        return []
    if Path(base_dir).resolve().is_relative_to(Path(file).resolve().parent):
        return []   # beside the brief (or above it): the project's folder is not the tool's; its code is bound
    files, why = folder_files(file, exclude)
    if why:
        return [f"{field}: {why}"]
    for f in files:
        sources.setdefault(_as_recorded(str(f), base_dir), sha256_file(f))
    return []


__all__ = ["LoadedTools", "bound_elsewhere", "folder_files", "PYTHON_DEFAULTS", "environment_methods", "load_tools", "schema_problem"]
