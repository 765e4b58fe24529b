"""Load a brief YAML into the frozen ``Brief``: JSON Schema for shape, then semantic rules, all errors at once.

``load_brief`` runs one loader per section (model, dataset, rewards, hardware, method, variant, grpo, sampling,
dynamic sampling, inspection and preflight), in that order; each returns what it resolved with its problems and
warnings, and the brief's problems are theirs in that order. Every problem names the field path, what is wrong
(with the value) and the fix; ``ConfigError`` carries the whole list. Defaults are the skill's recipe, not TRL's
(``brief.recipe``). Imports no torch.
"""

from __future__ import annotations

import difflib
import importlib.util
import json
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

from grpo_rlvr import work_trace
from grpo_rlvr.brief import data_checks, layout, methods, model_probe, recipe
from grpo_rlvr.brief.bound_settings import bound_settings
from grpo_rlvr.brief.grpo_rules import (
    NUMERIC_TEXT,
    check_grpo,
    check_types,
    eval_defaults,
    numeric_text_problem,
)
from grpo_rlvr.brief.recipe import DEFAULT_JUDGE_KAPPA, RECIPE
from grpo_rlvr.brief.types import (
    DYNAMIC_SAMPLING_DEFAULTS,
    WATCH_DEFAULTS,
    Brief,
    DatasetSpec,
    DynamicSampling,
    Hardware,
    InspectionSpec,
    ModelSpec,
    PreflightSpec,
    ReviewAuditSpec,
    RewardSpec,
    ToolsSpec,
    Variant,
    Watch,
)
from grpo_rlvr.brief.variants import VARIANTS, variants_in
from grpo_rlvr.dataset.prompts import PromptSpec, check_prompt
from grpo_rlvr.errors import ConfigError, GrpoRlvrError, InputFileError
from grpo_rlvr.identity import dataset_identity, fingerprint, model_identity

__all__ = ["RECIPE", "load_brief", "read_yaml", "reward_identity", "sampling_identity"]

# Keys the toolkit owns: set by render from the run directory, not by the brief.
RESERVED_KEYS = {"output_dir": "set brief.output_dir instead", "reward_weights": "set rewards[i].weight instead",
                 "trust_remote_code": "set model.trust_remote_code instead (the review binds the remote code it names)"}
# from_pretrained arguments that choose which files or code load as the model: the review is bound to the
# model folder (or hub commit) as inspect loads it, so training may not load something else beside it.
MODEL_FILE_KWARGS = ("revision", "subfolder", "gguf_file", "code_revision", "variant", "use_safetensors", "trust_remote_code",
                     "cache_dir", "state_dict", "config", "pretrained_model_name_or_path", "adapter_kwargs",
                     "adapter_name", "_adapter_model_path", "_commit_hash", "weights_only", "tp_plan", "key_mapping")


def _grpo_fields() -> dict[str, dict]:
    """GRPOConfig's fields: name → {"type": bool|int|float|str|any, "nullable"} (scripts/gen-grpo-fields.py)."""
    data = json.loads(resources.files("grpo_rlvr.brief").joinpath("grpo_config_fields.json").read_text())
    return data["fields"]


def _schema() -> dict:
    return json.loads(resources.files("grpo_rlvr.brief").joinpath("schema.json").read_text())


def _path(parts) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(top level)"


def _schema_problems(data: dict) -> list[str]:
    from jsonschema import Draft202012Validator

    problems = []
    validator = Draft202012Validator(_schema())
    for err in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path))):
        where = _path(err.absolute_path)
        if err.validator == "additionalProperties":
            allowed = sorted(err.schema.get("properties", {}))
            extra = sorted(set(err.instance) - set(allowed))
            for key in extra:
                close = difflib.get_close_matches(key, allowed, n=1)
                hint = f"did you mean {close[0]!r}?" if close else f"allowed keys: {', '.join(allowed)}"
                problems.append(f"{_path([*err.absolute_path, key])}: unknown key; {hint}")
        elif err.validator == "required":
            problems.append(f"{where}: {err.message}; add it (see src/grpo_rlvr/examples/arithmetic/brief.yaml, or the briefs in examples/)")
        elif err.validator == "enum":
            problems.append(f"{where}: {err.instance!r} is not allowed; use one of "
                            f"{', '.join(map(repr, err.validator_value))}")
        elif err.validator in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            problems.append(f"{where}: {err.instance!r} is out of range; use a value {_allowed_range(err.schema)}")
        elif err.validator == "type" and isinstance(err.instance, str) and NUMERIC_TEXT.match(err.instance):
            integer = "integer" in (err.validator_value if isinstance(err.validator_value, list)
                                    else [err.validator_value])
            key = str(err.absolute_path[-1]) if err.absolute_path else "the value"
            problems.append(f"{where}: {numeric_text_problem(key, err.instance, integer)}")
        elif err.validator == "type":
            expected = " or ".join(err.validator_value) if isinstance(err.validator_value, list) else err.validator_value
            problems.append(f"{where}: expected {expected}, got {type(err.instance).__name__} "
                            f"{err.instance!r}; fix the value's type")
        else:
            problems.append(f"{where}: {err.message}")
    return problems


def _allowed_range(schema: dict) -> str:
    """'from 1 to 16', '> 0 and ≤ 1', '≥ 0': the bounds a schema node allows, in words."""
    low = (f"> {schema['exclusiveMinimum']}" if "exclusiveMinimum" in schema
           else f"≥ {schema['minimum']}" if "minimum" in schema else None)
    high = (f"< {schema['exclusiveMaximum']}" if "exclusiveMaximum" in schema
            else f"≤ {schema['maximum']}" if "maximum" in schema else None)
    if low and high and low.startswith("≥") and high.startswith("≤"):
        return f"from {schema['minimum']} to {schema['maximum']}"
    return " and ".join(x for x in (low, high) if x)


def read_yaml(path: Path) -> dict:
    """Parse the brief file (``input_files``: UTF-8, bounded nesting and aliases, no duplicate or non-text
    keys). Raises InputFileError naming the file (and line) on any read/parse failure."""
    from grpo_rlvr.input_files import parse_yaml, read_text

    try:
        text = read_text(path, "brief")
    except InputFileError as e:
        raise InputFileError(f"{e}; pass the path to a brief YAML (see examples/)") from None
    data = parse_yaml(text, f"brief {path}")
    if not isinstance(data, dict):
        raise ConfigError(f"(top level): expected a mapping of keys (model, dataset, rewards, …), got "
                          f"{type(data).__name__}", source=str(path))
    return data


def _resolve_local(base: Path, ref: str) -> tuple[str, bool]:
    p = Path(ref).expanduser()
    if not p.is_absolute():
        p = base / p
    looks_local = ref.startswith((".", "/", "~")) or p.exists()
    return (str(p.resolve()), True) if looks_local else (ref, False)


def _fingerprint(model: ModelSpec, dataset: DatasetSpec, rewards, sampling: dict) -> str:
    return fingerprint(model_identity(model), dataset_identity(dataset), reward_identity(rewards), sampling)


def sampling_identity(grpo, model=None, method: str | None = None, tools=None, audit=None) -> dict:
    """The settings a review is bound to: the resolved GRPOConfig but for ``bound_settings.UNBOUND``, the
    model-loading settings that change the model that samples, the tools section and the review audit's section
    (``brief/bound_settings.py``). ``tools``: a ``ToolsSpec`` or None; ``audit``: a ``ReviewAuditSpec`` or None."""
    return bound_settings(grpo, model, method, None if tools is None else tools.to_dict(),
                          None if audit is None else audit.bound())


def reward_identity(rewards) -> list[dict]:
    """The reward specs a review is bound to (their code is bound by each reward's own fingerprint)."""
    return [{"name": r.name, "weight": r.weight, "kind": r.kind, "params": dict(r.params)} for r in rewards]


class Section(NamedTuple):
    """What one section loader found: the resolved section, its problems and its warnings, in order."""

    spec: Any
    problems: list[str]
    warnings: list[str]


class _Found:
    """The problems and warnings of the sections loaded so far, in the order they were found."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.warnings: list[str] = []

    def take(self, section: Section):
        self.problems.extend(section.problems)
        self.warnings.extend(section.warnings)
        return section.spec


def load_brief(path: str | Path) -> Brief:
    """Load and validate a brief.

    Args:
        path: the brief YAML. Relative paths inside it resolve against its folder.
    Returns:
        The frozen ``Brief``.
    Raises:
        InputFileError: the file is missing or not YAML.
        ConfigError: every schema and semantic problem found, each with field path and fix.
    """
    work_trace.event("brief_load", path=path)
    path = Path(path)
    data = read_yaml(path)
    problems = _schema_problems(data)
    if problems:
        raise ConfigError(problems, source=str(path))
    base = path.resolve().parent
    found = _Found()
    model = found.take(_model_section(data, base))
    dataset, row, held_row = found.take(_dataset_section(data, base))
    rewards = found.take(_rewards_section(data, base, dataset, row, held_row))
    hw = found.take(_hardware_section(data, model))
    method, lora, lora_origin = found.take(_method_section(data, hw, model))
    variant = found.take(_variant_section(data, base, model))
    tools = found.take(_tools_section(data, base))
    grpo, origin = found.take(_grpo_section(data, base, model, dataset, rewards, hw, method, variant, tools))
    sampling_engine = found.take(_sampling_section(data))
    found.warnings.extend(methods.method_warnings(method, dict(data.get("lora") or {}), grpo, origin))
    dynamic_sampling = found.take(_dynamic_sampling_section(data, variant))
    stated = found.take(_deviations_section(data))
    audit = found.take(_audit_section(data))
    if found.problems:
        raise ConfigError(found.problems, source=str(path))
    return Brief(
        path=path.resolve(), base_dir=base, name=data.get("name", path.stem),
        model=model, dataset=dataset, rewards=tuple(rewards), hardware=hw, method=method,
        lora=MappingProxyType(lora), lora_origin=MappingProxyType(lora_origin),
        grpo=MappingProxyType(grpo), origin=MappingProxyType(origin), variant=variant,
        inspection=_inspection_spec(data, grpo, base), preflight=_preflight_spec(data, grpo),
        output_dir=Path(_resolve_local(base, data.get("output_dir", f"./runs/{path.stem}"))[0]),
        fingerprint=_fingerprint(model, dataset, rewards, sampling_identity(grpo, model, method, tools, audit)),
        warnings=tuple(found.warnings),
        as_written=MappingProxyType(data),
        dynamic_sampling=dynamic_sampling,
        sampling_engine=sampling_engine,
        prompt_examples=tuple(MappingProxyType(ex) for ex in (data.get("prompt") or {}).get("examples") or ()),
        base_run_diagnosis=(data.get("base_run") or {}).get("diagnosis"),
        lora_section="lora" in data,
        stated_deviations=MappingProxyType(stated),
        watch=Watch(**{**WATCH_DEFAULTS, **(data.get("watch") or {})}),
        tools=tools,
        audit=audit,
    )


def _audit_section(data: dict) -> Section:
    """The ``audit`` section as resolved, and ``inspection.seed`` refused (rows are drawn afresh each time)."""
    problems = []
    if "seed" in (data.get("inspection") or {}):
        problems.append("inspection.seed: inspect draws the rows a person reviews with fresh randomness, recorded in "
                        "the artifact, so that nobody can know in advance which rows will be read (and shape the "
                        "others); remove this key")
    own = data.get("audit")
    if own is None:
        return Section(ReviewAuditSpec(), problems, [])
    values = {**ReviewAuditSpec().to_dict(), **own}
    spec = ReviewAuditSpec(alpha=float(values["alpha"]), stop_on=str(values["stop_on"]),
                           batches=int(values["batches"]), origin="brief")
    warnings = []
    if spec.stop_on == "never" or spec.alpha < ReviewAuditSpec.alpha:
        warnings.append(f"audit: loosened ({'stop_on: never' if spec.stop_on == 'never' else f'alpha {spec.alpha:g}'}"
                        "): a run whose rollouts differ from the reviewed ones "
                        + ("is only recorded, not stopped" if spec.stop_on == "never" else "is stopped less often")
                        + "; the review, the run's record and its report say so")
    return Section(spec, problems, warnings)


# --- model ---------------------------------------------------------------------------------------------------

def _model_section(data: dict, base: Path) -> Section:
    m = data["model"]
    resolved, is_local = _resolve_local(base, m["name_or_path"])
    adapter, problems = _model_folder(m, resolved, is_local)
    # An adapter's facts (size, MoE, vision, context) are its base model's.
    facts = model_probe.model_facts({**m, "name_or_path": adapter.name, "revision": adapter.revision}, adapter.resolved,
                                    adapter.is_local) if adapter else model_probe.model_facts(m, resolved, is_local)
    warnings = []
    if facts.vision:
        problems.append(_vision_problem(m["name_or_path"], facts))
    else:
        warnings.extend(facts.warnings)
    model = ModelSpec(m["name_or_path"], resolved, is_local, adapter.revision if adapter else m.get("revision"),
                      m.get("dtype"), bool(m.get("trust_remote_code", False)), facts.moe, facts.context_length,
                      facts, adapter, m.get("attn_implementation"))
    return Section(model, problems, warnings)


def _model_folder(m: dict, resolved: str, is_local: bool) -> tuple[Any, list[str]]:
    """A local model: the folder must be there and loadable; a PEFT adapter folder gives its base (else None)."""
    if is_local and not Path(resolved).is_dir():
        return None, [f"model.name_or_path: {m['name_or_path']!r} looks like a local path but {resolved} is not a "
                      "directory; point it at a model folder (with config.json) or use a hub id"]
    if not is_local:
        return None, []
    adapter, problem = model_probe.adapter_base(Path(resolved))
    problem = problem or model_probe.folder_problem(Path(resolved))
    return adapter, [f"model.name_or_path: {problem}"] if problem else []


def _vision_problem(name: str, facts) -> str:
    guessed = " (guessed from its name: if it is text-only, state model.vision: false)" \
        if facts.vision_from == "name" else f" (from {facts.vision_from})"
    return (f"model.name_or_path: {name!r} is a vision-language model{guessed}. Vision-language RL is reference-only "
            "in grpo-rlvr: its tooling is scattered over ms-swift and several EasyR1 forks, and TRL has no single "
            "command for it that could be validated and tested; and GRPO on the text alone lets a VLM score well "
            "while ignoring the image. Use a text-only model, or treat VLM RL as research outside this toolkit")


# --- dataset and prompt ------------------------------------------------------------------------------------------

def _dataset_section(data: dict, base: Path) -> Section:
    """The dataset, its held-out set and the prompt; the spec is (DatasetSpec, first row, first held-out row),
    a row being None where it cannot be read here (a hub dataset, or a file with problems)."""
    d = data["dataset"]
    split, eval_split = d.get("split", "train"), d.get("eval_split", "test")
    d_resolved, d_local = data_checks.resolve_dataset(base, d["path"])
    columns = dict(d.get("columns") or {})
    prompt_column = d.get("prompt_column", "prompt")
    prompt = PromptSpec.from_dict(data.get("prompt"))
    problems, warnings = [], []
    if d_local:
        problems = list(data_checks.data_file_problems("dataset.path", d["path"], Path(d_resolved), split))
        row = None if problems else data_checks.first_row(Path(d_resolved), split)
    else:
        row = None
        warnings.append(data_checks.hub_note("dataset.path", d["path"], split))
    problems.extend(check_prompt(prompt, prompt_column, row) if row is not None or not d_local else [])
    if row is not None:
        problems.extend(data_checks.column_problems(Path(d_resolved), row, columns))
    e_resolved, e_local = data_checks.resolve_dataset(base, d["eval_path"]) if d.get("eval_path") else (None, False)
    held_row = _held_out(d, e_resolved, e_local, eval_split, prompt, prompt_column, problems, warnings)
    if d.get("eval_split") and not d.get("eval_path"):
        problems.append("dataset.eval_split: set without dataset.eval_path; add eval_path (the held-out file or "
                        "hub dataset) or remove eval_split")
    dataset = DatasetSpec(d["path"], d_resolved, d_local, split, prompt_column,
                          MappingProxyType(columns), d.get("eval_path"), e_resolved, e_local,
                          eval_split, MappingProxyType(prompt.to_dict()), d.get("subset"), d.get("revision"))
    return Section((dataset, row, held_row), problems, warnings)


def _held_out(d: dict, e_resolved: str | None, e_local: bool, eval_split: str, prompt: PromptSpec,
              prompt_column: str, problems: list[str], warnings: list[str]) -> dict | None:
    """The held-out set's first row (None: none, or not readable here); its problems are added to ``problems``
    (the prompt's only where the training file does not already show them), a hub set's note to ``warnings``."""
    if not e_local:
        if d.get("eval_path"):
            warnings.append(data_checks.hub_note("dataset.eval_path", d["eval_path"], eval_split))
        return None
    found = data_checks.data_file_problems("dataset.eval_path", d["eval_path"], Path(e_resolved), eval_split)
    problems.extend(found)
    held_row = None if found else data_checks.first_row(Path(e_resolved), eval_split)
    if held_row is not None:
        problems.extend(p.replace("the dataset", "dataset.eval_path", 1)
                        for p in check_prompt(prompt, prompt_column, held_row) if p not in problems)
    return held_row


# --- rewards -----------------------------------------------------------------------------------------------------

def _rewards_section(data: dict, base: Path, dataset: DatasetSpec, row: dict | None, held_row: dict | None) -> Section:
    from grpo_rlvr.rewards import build_reward, with_brief_format

    rewards, built = [], []
    # correctness rewards read inside the format reward's tag when it defines one (rewards/_inside_tag.py)
    resolved, problems = with_brief_format([(r["name"], dict(r.get("params") or {})) for r in data["rewards"]])
    problems = list(problems)
    for i, (r, params) in enumerate(zip(data["rewards"], resolved, strict=True)):
        spec = RewardSpec(r["name"], float(r.get("weight", 1.0)), r.get("kind"), MappingProxyType(params))
        rewards.append(spec)
        try:
            built.append(build_reward(spec.name, dict(spec.params), base_dir=base, kind=spec.kind))
        except GrpoRlvrError as e:
            problems.append(f"rewards[{i}].name: {e}")
    names = [r.name for r in rewards]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        problems.append(f"rewards: {', '.join(dupes)} listed more than once; TRL logs rewards by name, list each once")
    warnings = []
    if built and len(built) == len(rewards):
        kinds = {b.kind for b in built}
        warnings = [_no_kind_warning(kind, rewards, built) for kind in ("correctness", "format") if kind not in kinds]
        problems.extend(_reward_column_problems(built, dataset, row, held_row))
    return Section(rewards, problems, warnings)


def _no_kind_warning(kind: str, rewards: list, built: list) -> str:
    """The brief has no reward of ``kind`` (format or correctness), which the gate requires: names each user reward
    that states no ``kind:`` (it is then ``custom``), the key that would make it count."""
    said = f"rewards: no {kind} reward; the gate requires a composite (format + correctness)"
    unstated = [f"rewards[{i}] ({r.name})" for i, (r, b) in enumerate(zip(rewards, built, strict=True))
                if r.kind is None and b.kind == "custom"]
    example = {"correctness": "`exact_match`, `math`, `unit_tests`", "format": "`format`"}[kind]
    if unstated:
        return (f"{said}: {', '.join(unstated)} states no `kind:` and counts as custom; if it scores {kind}, add "
                f"`kind: {kind}` to it (kinds: format, correctness, shaping, judge, custom), or add a built-in {kind} "
                f"reward ({example})")
    return f"{said}; add a {kind} reward ({example}), or a reward of yours with `kind: {kind}`"


def _reward_column_problems(built: list, dataset: DatasetSpec, row: dict | None, held_row: dict | None) -> list[str]:
    """Each reward's columns are in the training file (and the held-out file), as far as they can be read here."""
    problems = []
    available = set(dataset.columns) | set(row or {})
    held = set(dataset.columns) | set(held_row or {})
    for i, b in enumerate(built):
        for col in b.columns:
            if row is not None and col not in available:
                problems.append(f"rewards[{i}] ({b.name}) reads column {col!r}, which the dataset lacks; map it "
                                f"with dataset.columns.{col}: <your column>")
            elif held_row is not None and col not in held:
                problems.append(f"rewards[{i}] ({b.name}) reads column {col!r}, which dataset.eval_path lacks "
                                f"({Path(dataset.eval_resolved).name} has {', '.join(sorted(held_row))}); give the "
                                "held-out file the training file's columns")
    return problems


# --- hardware and method -----------------------------------------------------------------------------------------

def _hardware_section(data: dict, model: ModelSpec | None = None) -> Section:
    heads = layout.attention_heads(getattr(getattr(model, "facts", None), "config", None))
    hw = layout.resolve_hardware(data, heads)
    written = data.get("hardware") or {}
    problems, warnings = [], []
    if hw.accelerator == "gpu" and written.get("cpu_processes"):
        problems.append("hardware.cpu_processes: only for accelerator 'cpu'; on GPUs there is one process per "
                        "training GPU (set num_gpus)")
    if hw.accelerator == "gpu" and hw.num_gpus < 1:
        problems.append("hardware.num_gpus: 0 GPUs with accelerator 'gpu'; set num_gpus ≥ 1 or accelerator: cpu")
    problems.extend(layout.layout_problems(hw, written, heads))
    if hw.accelerator == "cpu" and hw.sharding == "fsdp2" and hw.num_processes > 1:
        # accelerate 1.15 (state.py) picks MULTI_CPU for cpu=True and applies an FSDP plugin only to GPU-like types
        warnings.append("hardware.sharding: 'fsdp2' is not applied on CPU: accelerate trains CPU processes with "
                        "DDP over gloo whatever its config says, so every process holds the whole model; set "
                        "sharding: ddp on CPU (FSDP2 shards on GPUs)")
    return Section(hw, problems, warnings)


def _method_section(data: dict, hw: Hardware, model: ModelSpec | None = None) -> Section:
    """full, lora or qlora; the spec is (method, lora settings, the origin of each). For a LoRA adapter folder as
    the model, the settings are the adapter's own (its adapter_config.json), which LoRA training continues with."""
    method = data.get("method", "full")
    problems, warnings = [], []
    if method in ("lora", "qlora") and importlib.util.find_spec("peft") is None:
        warnings.append(f"method: {method!r} needs the 'peft' package on the training machine (pip install peft)")
    if method == "qlora" and hw.accelerator == "cpu":
        problems.append("method: 'qlora' loads the base model in 4-bit with bitsandbytes, which needs a CUDA GPU; "
                        "set hardware.accelerator: gpu, or method: lora on CPU")
    if method == "qlora" and hw.sharding in ("zero3", "fsdp2"):
        problems.append(f"hardware.sharding: {hw.sharding!r} with method 'qlora': the rendered train.py puts the 4-bit "
                        "base whole on each process's GPU, which ZeRO-3/FSDP2 sharding cannot take; use sharding "
                        "ddp (or none), or method: lora with sharding")
    lora, lora_origin = methods.lora_settings(method, dict(data.get("lora") or {}))
    if method != "full" and model is not None and model.adapter_base is not None:
        try:
            config = json.loads((Path(model.resolved) / "adapter_config.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            config = None    # the model section has said what is wrong with the folder
        if isinstance(config, dict):
            lora, lora_origin = methods.adapter_lora_settings(config)
    return Section((method, lora, lora_origin), problems, warnings)


# --- variant -----------------------------------------------------------------------------------------------------

def _variant_section(data: dict, base: Path, model: ModelSpec) -> Section:
    """The declared variant (with the diagnosis that calls for it), or GSPO, which a mixture-of-experts model
    always gets."""
    v = data.get("variant")
    if model.is_moe:
        problems = [] if not v or v["name"] == "gspo" else [
            f"variant.name: {v['name']!r} on a mixture-of-experts model; MoE requires GSPO. Remove the variant "
            "(GSPO is applied automatically) or set variant.name: gspo"]
        return Section(Variant("gspo", v.get("diagnosis") if v else None, automatic=not v), problems, [])
    if not v:
        return Section(None, [], [])
    spec, diag = VARIANTS[v["name"]], v.get("diagnosis")
    if not diag:
        problems = [f"variant.diagnosis: variant {v['name']!r} needs the diagnosis that showed its failure mode "
                    f"({spec.why}); run `grpo-rlvr diagnose RUN` on a base-recipe run and set variant.diagnosis to "
                    "its diagnosis.json"]
    else:
        problems = _check_diagnosis(base, diag, spec)
    return Section(Variant(v["name"], diag, automatic=False), problems, [])


# --- GRPO config -------------------------------------------------------------------------------------------------

def _grpo_section(data: dict, base: Path, model: ModelSpec, dataset: DatasetSpec, rewards: list[RewardSpec],
                  hw: Hardware, method: str, variant: Variant | None, tools: ToolsSpec | None = None) -> Section:
    """The GRPOConfig kwargs, layered (``brief.recipe``) and checked; the spec is (values, origin of each)."""
    overrides = dict(data.get("grpo") or {})
    fields = _grpo_fields()
    problems = [*_hand_set_variants(base, overrides, variant, data), *_model_file_kwargs(overrides)]
    type_problems, mistyped = check_types(overrides, fields)
    problems.extend(type_problems)
    layers = recipe.defaults(method, hw, variant)
    accepted, found = _accepted_overrides(overrides, fields, mistyped)
    problems.extend(found)
    layers.put("brief", accepted)
    if "project" not in accepted:
        # trackio files every run under TrainingArguments.project, "huggingface" by default: the brief's name. Set
        # whatever report_to says (only trackio reads it), so a machine without trackio renders the same config
        layers.put("dashboard", {"project": data.get("name") or "grpo-rlvr"})
    loading, loading_problems = _model_loading(model, accepted.get("model_init_kwargs"))
    problems.extend(loading_problems)
    layers.put("model", loading)
    layers.put("rewards", {"reward_weights": [r.weight for r in rewards]})
    if tools is not None and "max_tool_calling_iterations" not in overrides:
        # TRL's own default is no limit: a policy that learns to call tools in a loop would spend the whole
        # completion budget on calls. The brief may set another bound.
        layers.put("tools", {"max_tool_calling_iterations": TOOL_CALL_ROUNDS})
    if dataset.eval_path:
        layers.put("eval", {k: v for k, v in eval_defaults(layers.values).items() if k not in overrides})
    grpo = layers.values
    problems.extend(check_grpo(grpo, hw, model, has_eval=bool(dataset.eval_path)))
    if model.is_moe and grpo.get("importance_sampling_level") != "sequence":
        problems.append(f"grpo.importance_sampling_level: {grpo.get('importance_sampling_level')!r} on a "
                        "mixture-of-experts model; MoE requires GSPO's sequence-level ratios. Remove the override")
    warnings = []
    if hw.accelerator == "gpu" and grpo.get("use_vllm") and importlib.util.find_spec("vllm") is None:
        warnings.append("grpo.use_vllm: vLLM is not installed here; install grpo-rlvr[vllm] on the training machine")
    from grpo_rlvr.brief.dashboards import check_report_to
    from grpo_rlvr.brief.sampling_bias import truncated_sampling_warnings

    warnings.extend(truncated_sampling_warnings(grpo))
    dash_problems, dash_warnings = check_report_to(grpo.get("report_to", "none"))
    problems.extend(dash_problems)
    warnings.extend(dash_warnings)
    return Section((grpo, layers.origin), problems, warnings)


def _accepted_overrides(overrides: dict, fields: dict, mistyped: set[str]) -> tuple[dict, list[str]]:
    """The overrides that go into the config, and the problems of those that may not: keys the toolkit owns,
    and keys that are not GRPOConfig fields (those of the wrong type are already reported)."""
    accepted, problems = {}, []
    for k, val in overrides.items():
        if k in RESERVED_KEYS:
            problems.append(f"grpo.{k}: set by grpo-rlvr; {RESERVED_KEYS[k]}")
        elif k not in fields:
            close = difflib.get_close_matches(k, sorted(fields), n=1)
            hint = f"did you mean {close[0]!r}?" if close else "see TRL's GRPOConfig for field names"
            problems.append(f"grpo.{k}: not a GRPOConfig field (TRL 1.16); {hint}")
        elif k not in mistyped:
            accepted[k] = val
    return accepted, problems


# --- tools ----------------------------------------------------------------------------------------------------

TOOL_CALL_ROUNDS = 8   # tool-calling rounds per rollout unless the brief sets grpo.max_tool_calling_iterations


def _tools_section(data: dict, base: Path) -> Section:
    """The brief's ``tools:`` as a ``ToolsSpec``, its code imported and checked (``tools.loading``)."""
    section = data.get("tools")
    if section is None:
        return Section(None, [], [])
    python = section.get("python")
    spec = ToolsSpec(functions=tuple(section.get("functions") or ()), environment=section.get("environment"),
                     python=None if not python else dict(python) if isinstance(python, dict) else {},
                     call_timeout_s=float(section.get("call_timeout_s", 30.0)),
                     concurrency=int(section.get("concurrency", 16)))
    if not (spec.functions or spec.environment or spec.python is not None):
        return Section(None, ["tools: names no tool; list tools.functions, an environment, or python: true (or "
                              "remove the section)"], [])
    from grpo_rlvr.tools.loading import load_tools

    try:
        load_tools(spec.to_dict(), base)
    except ConfigError as e:
        return Section(None, e.problems, [])
    return Section(spec, [], [])


# --- sampling, dynamic sampling, inspection and preflight ------------------------------------------------------

def _sampling_section(data: dict) -> Section:
    engine = (data.get("sampling") or {}).get("engine", "auto")
    warnings = []
    if engine == "vllm" and importlib.util.find_spec("vllm") is None:
        warnings.append("sampling.engine: 'vllm', but vLLM is not installed here; preflight and inspect will refuse "
                        "to run here (install vLLM, or set sampling.engine: auto)")
    return Section(engine, [], warnings)


def _dynamic_sampling_section(data: dict, variant: Variant | None) -> Section:
    """The resolved ``dynamic_sampling`` section: the brief's keys over the variant's (DAPO brings it), over the
    defaults. Absent: the variant's or off; ``null``: off; ``{}``: on with the defaults."""
    from_variant = VARIANTS[variant.name].dynamic_sampling if variant is not None else None
    if "dynamic_sampling" in data and data["dynamic_sampling"] is None:
        why = (f"turns off the dynamic sampling the {variant.name!r} variant brings" if from_variant is not None
               else "leaves dynamic sampling off")
        return Section(None, [], [
            f"dynamic_sampling: null {why}; write `dynamic_sampling: {{}}` for it with the defaults "
            f"({DYNAMIC_SAMPLING_DEFAULTS['max_rounds']} rounds, tolerance "
            f"{DYNAMIC_SAMPLING_DEFAULTS['tolerance']:g}), or remove the line"])
    own = data.get("dynamic_sampling")
    if own is None and from_variant is None:
        return Section(None, [], [])
    values = {**DYNAMIC_SAMPLING_DEFAULTS, **(from_variant or {}), **(own or {})}
    ds = DynamicSampling(max_rounds=int(values["max_rounds"]), tolerance=float(values["tolerance"]),
                         origin="brief" if own is not None else f"variant:{variant.name}")
    warnings = []
    if ds.tolerance > 1e-3:
        warnings.append(f"dynamic_sampling.tolerance: {ds.tolerance:g} also drops groups whose rewards differ by "
                        f"less than that, which carry signal; the default {DYNAMIC_SAMPLING_DEFAULTS['tolerance']:g} "
                        "only absorbs float32 noise")
    return Section(ds, [], warnings)


def _inspection_spec(data: dict, grpo: dict, base: Path) -> InspectionSpec:
    """How many samples and prompts inspection draws, the judge's kappa and the allowed-signers file a signed
    review needs."""
    insp = data.get("inspection") or {}
    signers = (insp.get("signing") or {}).get("allowed_signers")
    if signers:
        signers = Path(signers).expanduser()
        signers = signers if signers.is_absolute() else base / signers
    return InspectionSpec(samples=int(insp.get("samples", 64)), prompts=int(insp.get("prompts", 32)),
                          judge_min_kappa=float(insp.get("judge_min_kappa", DEFAULT_JUDGE_KAPPA)),
                          allowed_signers=signers or None)


def _preflight_spec(data: dict, grpo: dict) -> PreflightSpec:
    """How many prompts preflight draws, k samples each (num_generations unless set), and its seed."""
    pre = data.get("preflight") or {}
    return PreflightSpec(prompts=int(pre.get("prompts", 64)), k=int(pre.get("k", grpo["num_generations"])),
                         seed=int(pre.get("seed", grpo["seed"])))


# --- overrides that need more than their own value ---------------------------------------------------------------

def _model_file_kwargs(overrides: dict) -> list[str]:
    kwargs = overrides.get("model_init_kwargs")
    if isinstance(kwargs, str):   # TRL also takes the dict as JSON text
        try:
            kwargs = json.loads(kwargs)
        except ValueError:
            return ["grpo.model_init_kwargs: not a mapping nor JSON text of one; give from_pretrained arguments "
                    "as a mapping (dtype: bfloat16)"]
    if not isinstance(kwargs, dict):
        return []
    return [f"grpo.model_init_kwargs.{k}: chooses which files or code load as the model, but the review is bound "
            "to the model as inspect loads it (model.name_or_path at model.revision); remove it, and point "
            "model.name_or_path (or model.revision) at what you mean to train" for k in MODEL_FILE_KWARGS if k in kwargs]


# The model section's loading settings -> the from_pretrained keyword TRL passes them as (model_init_kwargs).
_MODEL_LOADING = {"dtype": "dtype", "attn_implementation": "attn_implementation"}


def _model_loading(model: ModelSpec, own) -> tuple[dict, list[str]]:
    """The model section's loading settings as TRL's own: ``model.dtype`` and ``model.attn_implementation`` into
    ``model_init_kwargs``, ``model.trust_remote_code`` into ``trust_remote_code``. TRL loads the policy with them,
    and preflight and inspect sample from the trainer TRL builds, so both roads load the model one way. Unset, TRL's
    own defaults hold for both (dtype float32). A value given twice, differently, is a problem."""
    if isinstance(own, str):
        try:
            own = json.loads(own)
        except ValueError:
            own = None   # reported by _model_file_kwargs
    own = dict(own) if isinstance(own, dict) else {}
    kwargs, problems = dict(own), []
    for field, key in _MODEL_LOADING.items():
        value = getattr(model, field)
        if value is None:
            continue
        if key in own and own[key] != value:
            problems.append(f"model.{field}: {value!r}, but grpo.model_init_kwargs.{key} is {own[key]!r}; the model "
                            f"loads one way for sampling and training: keep one of the two")
        kwargs[key] = value
    out = {"model_init_kwargs": kwargs} if kwargs else {}
    if model.trust_remote_code:
        out["trust_remote_code"] = True
    return out, problems


# Shorter than this is a label, not a reason someone can check ("tiny model", "faster").
MIN_REASON_CHARS = 20


def _deviations_section(data: dict) -> Section:
    """``deviations:``: the brief's own reason for each ``grpo:`` setting it changes before any base run.

    A reason grounds a change the way a base run's diagnosis does, so that validate shows it instead of warning;
    it cannot stand in for a variant's diagnosis (a hand-set variant is still refused without one). Each reason
    must be a sentence; a reason for a key the ``grpo:`` section does not set is warned about.
    """
    stated = data.get("deviations") or {}
    own = data.get("grpo") or {}
    problems, warnings = [], []
    for key, reason in stated.items():
        if key not in own:
            warnings.append(f"deviations.{key}: the brief's grpo: section does not set {key}, so this reason explains "
                            f"no change; remove deviations.{key}, or set grpo.{key}")
        elif len(" ".join(str(reason).split())) < MIN_REASON_CHARS:
            problems.append(f"deviations.{key}: {reason!r} is too short to say why; write a sentence (at least "
                            f"{MIN_REASON_CHARS} characters) on why this run departs from the recipe's value")
    return Section({k: " ".join(str(v).split()) for k, v in stated.items()}, problems, warnings)


def _hand_set_variants(base: Path, overrides: dict, variant: Variant | None, data: dict) -> list[str]:
    """A ``grpo:`` override that sets a variant's defining values (``loss_type: dr_grpo``) is that variant, and
    needs the diagnosis a declared one needs: ``variant.diagnosis`` or ``base_run.diagnosis``."""
    problems = []
    diag = (data.get("variant") or {}).get("diagnosis") or (data.get("base_run") or {}).get("diagnosis")
    for name, matched in variants_in(overrides).items():
        if variant is not None and variant.name == name:
            continue  # declared (or GSPO on MoE): the variant's own checks apply
        spec = VARIANTS[name]
        shown = ", ".join(f"{k}: {v!r}" for k, v in matched.items())
        if not diag:
            problems.append(f"grpo: {shown} is the {name!r} variant set by hand, and a variant needs the diagnosis "
                            f"that showed its failure mode ({spec.why}); write variant: {{name: {name}, diagnosis: "
                            "<diagnosis.json>} instead of the override (or set base_run.diagnosis), after "
                            "`grpo-rlvr diagnose RUN` on a base-recipe run; or remove the override")
        else:
            problems.extend(p.replace("variant.diagnosis:", f"grpo: {shown} (the {name!r} variant):", 1)
                            for p in _check_diagnosis(base, diag, spec))
    return problems


def _check_diagnosis(base: Path, diag: str, spec) -> list[str]:
    p = Path(diag) if Path(diag).is_absolute() else base / diag
    try:
        report = json.loads(p.read_text())
    except FileNotFoundError:
        return [f"variant.diagnosis: {p} not found; run `grpo-rlvr diagnose RUN` and point at its diagnosis.json"]
    except (OSError, json.JSONDecodeError) as e:
        return [f"variant.diagnosis: {p} is not a readable diagnosis.json ({e})"]
    found = {f.get("id") for f in report.get("findings", []) if isinstance(f, dict)}
    if not found & set(spec.failure_modes):
        return [f"variant.diagnosis: {p.name} shows {', '.join(sorted(map(str, found))) or 'no failure mode'}, "
                f"none of which calls for {spec.name!r} (it answers: {', '.join(spec.failure_modes)}); "
                "use the variant the diagnosis recommends"]
    return []
