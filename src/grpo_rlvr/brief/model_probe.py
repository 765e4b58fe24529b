"""What a model is, without loading weights or touching the network: its size, mixture-of-experts or not,
vision-language or not, context length.

Each fact comes from the first source that has it, and says which one it came from:

1. ``config.json`` of a local model folder, or of the model's snapshot in the local Hugging Face cache
   (``$HF_HUB_CACHE``, ``$HF_HOME/hub`` or ``~/.cache/huggingface/hub``; layout
   ``models--ORG--NAME/snapshots/<commit>/config.json``, the commit named by ``refs/<revision>``);
2. what the brief states: ``model.params`` (``7.6B``, ``350M``, or a number of billions), ``model.moe``,
   ``model.vision``;
3. the model's name, as a guess that ``validate`` reports as one, with the fix.

Parameter counts from a config follow ``grpo_rlvr.model_shape`` (Llama/Qwen-style decoders; other layouts
are approximations). Imports no torch.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from grpo_rlvr.identity.compute import ADAPTER_CONFIG

MOE_KEYS = ("num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts")
_VISION_KEYS = ("vision_config", "visual", "image_token_id", "image_token_index", "vision_tower", "mm_vision_tower")

# Names, for when no config.json can be read. Llama 4 is both (natively multimodal, mixture-of-experts).
_VLM_NAME = re.compile(
    r"(-vl\b|-vl-|vision|llava|pixtral|idefics|paligemma|qwen\d?(\.\d)?-?vl|smolvlm|internvl|molmo|florence|blip|"
    r"llama-?4|mistral-small-3\.[12]|gemma-3-(4|12|27)b|gemma-3n|kimi-vl|glm-4\.\dv|minicpm-v|deepseek-vl|"
    r"phi-3\.5-vision|phi-4-multimodal)", re.IGNORECASE)
_MOE_NAME = re.compile(
    r"(moe|mixtral|\d+x\d+(\.\d+)?b|-a\d+(\.\d+)?b\b|deepseek-v[23]|deepseek-r1(?!-distill)|olmoe|dbrx|gpt-oss|"
    r"llama-?4|kimi-k2|glm-4\.[56](?!\d)|jamba|arctic|grok-\d|minimax-m|hunyuan-a)", re.IGNORECASE)
# Total parameters (billions) of MoE models whose names do not say it, from their model cards.
_KNOWN_TOTALS = (
    (re.compile(r"mixtral-8x7b", re.I), 46.7), (re.compile(r"mixtral-8x22b", re.I), 141.0),
    (re.compile(r"llama-?4-scout", re.I), 109.0), (re.compile(r"llama-?4-maverick", re.I), 400.0),
    (re.compile(r"kimi-k2", re.I), 1000.0), (re.compile(r"glm-4\.[56]-air", re.I), 106.0),
    (re.compile(r"glm-4\.[56](?![\d-]*air)", re.I), 355.0), (re.compile(r"deepseek-(v3|r1)(?!-distill)", re.I), 671.0),
    (re.compile(r"deepseek-v2-lite", re.I), 15.7), (re.compile(r"deepseek-v2(?!-lite)", re.I), 236.0),
    (re.compile(r"gpt-oss-20b", re.I), 20.9), (re.compile(r"gpt-oss-120b", re.I), 116.8),
)
_SIZE_IN_NAME = re.compile(r"(?<![\d.a-zA-Z])(\d+(?:\.\d+)?)([bBmM])(?![a-zA-Z])")
_EXPERTS_X_SIZE = re.compile(r"(\d+)x(\d+(?:\.\d+)?)b", re.IGNORECASE)
PARAMS_TEXT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmMbBtT])\s*$")


# ---------------------------------------------------------------------------- config.json


def read_config(model_dir: Path) -> dict | None:
    cfg = Path(model_dir) / "config.json"
    if not cfg.is_file():
        return None
    try:
        data = json.loads(cfg.read_text())
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) else None


def hf_cache_dirs() -> list[Path]:
    """Where the Hugging Face hub cache may be, in the order huggingface_hub looks."""
    out = []
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(var):
            out.append(Path(os.environ[var]).expanduser())
    if os.environ.get("HF_HOME"):
        out.append(Path(os.environ["HF_HOME"]).expanduser() / "hub")
    xdg = os.environ.get("XDG_CACHE_HOME")
    out.append((Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "huggingface" / "hub")
    return list(dict.fromkeys(out))


def cached_config_path(repo_id: str, revision: str | None = None) -> Path | None:
    """``config.json`` of ``repo_id`` in the local HF cache: the snapshot ``refs/<revision or main>`` names, a
    snapshot whose folder is the revision itself (a commit), else the newest snapshot that has one."""
    if repo_id.count("/") > 1 or not repo_id.strip("/"):
        return None
    for cache in hf_cache_dirs():
        repo = cache / ("models--" + repo_id.replace("/", "--"))
        snaps = repo / "snapshots"
        if not snaps.is_dir():
            continue
        ref = repo / "refs" / (revision or "main")
        names = ([ref.read_text().strip()] if ref.is_file() else []) + ([revision] if revision else [])
        for snap in names:
            if (snaps / snap / "config.json").is_file():
                return snaps / snap / "config.json"
        if revision:  # another revision's config may describe another model
            continue
        found = sorted((p for p in snaps.glob("*/config.json")), key=lambda p: p.stat().st_mtime, reverse=True)
        if found:
            return found[0]
    return None


def is_vision_language(name: str, config: dict | None) -> bool:
    if config is not None:
        if any(k in config for k in _VISION_KEYS):
            return True
        archs = " ".join(config.get("architectures") or [])
        return bool(re.search(r"(VL|Vision|Llava|ImageText|Multimodal)", archs))
    return bool(_VLM_NAME.search(name))


def moe_experts(config: dict) -> int:
    text_cfg = config.get("text_config") or config
    return max([int(text_cfg[k]) for k in MOE_KEYS if isinstance(text_cfg.get(k), int)] or [0])


def is_mixture_of_experts(name: str, config: dict | None) -> bool:
    if config is not None:
        return moe_experts(config) > 1
    return bool(_MOE_NAME.search(name))


def context_length(config: dict | None) -> int | None:
    if not config:
        return None
    text_cfg = config.get("text_config") or config
    for key in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"):
        if isinstance(text_cfg.get(key), int):
            return text_cfg[key]
    return None


def parse_params(value) -> float | None:
    """Parameters from the brief's ``model.params``: ``7.6B``, ``350M``, ``1T``, or a number of billions."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) * 1e9 if value > 0 else None
    m = PARAMS_TEXT.match(str(value))
    if not m:
        return None
    return float(m.group(1)) * {"K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}[m.group(2).upper()]


def params_from_name(name: str) -> float | None:
    """A guess of the total parameters from a model name (``Qwen2.5-7B``, ``Mixtral-8x7B``, ``SmolLM2-360M``)."""
    base = name.rsplit("/", 1)[-1]
    for pattern, billions in _KNOWN_TOTALS:
        if pattern.search(base):
            return billions * 1e9
    m = _EXPERTS_X_SIZE.search(base)
    if m:  # N experts of size M: attention is shared, so N × M over-counts a little (the safe side)
        return int(m.group(1)) * float(m.group(2)) * 1e9
    m = _SIZE_IN_NAME.search(base)
    if not m:
        return None
    return float(m.group(1)) * (1e9 if m.group(2).upper() == "B" else 1e6)


def params_from_config(config: dict) -> float | None:
    from grpo_rlvr.errors import ConfigError
    from grpo_rlvr.model_shape import shape_from_config

    try:
        return float(shape_from_config(config).total_params())
    except (ConfigError, TypeError, ValueError):
        return None


def human_params(n: float) -> str:
    for unit, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6)):
        if n >= scale:
            return f"{n / scale:.3g}{unit}"
    return f"{n:.3g}"


# ---------------------------------------------------------------------------- adapter folders



@dataclass(frozen=True)
class AdapterBase:
    """The base model of a PEFT adapter folder, as its ``adapter_config.json`` names it."""

    name: str            # base_model_name_or_path as written
    resolved: str        # an absolute path for a local base, the hub id otherwise
    is_local: bool
    revision: str | None
    peft_type: str


def folder_problem(folder: Path) -> str | None:
    """Why a local model folder can be neither loaded as a model nor as an adapter (None when it can)."""
    if (folder / "config.json").is_file() or (folder / ADAPTER_CONFIG).is_file():
        return None
    present = sorted(p.name for p in folder.iterdir())[:8] if folder.is_dir() else []
    return (f"{folder} has no config.json (what a model folder has) and no {ADAPTER_CONFIG} (what a PEFT adapter "
            f"folder has){'; it holds ' + ', '.join(present) if present else ', it is empty'}. Point "
            "model.name_or_path at the folder that `save_pretrained` wrote (a full model, or the adapter SFT saved), "
            "or at a hub id")


def adapter_base(folder: Path) -> tuple[AdapterBase | None, str | None]:
    """The base of the adapter in ``folder`` and a problem (exactly one is None), or (None, None) when ``folder``
    has no ``adapter_config.json`` (transformers, too, takes a folder with one for an adapter).

    The base is found as the identity finds it (``identity.compute.adapter_base``: a relative path against the
    adapter folder, then the working directory); here it is also checked: named, LoRA, and a local base holds a
    model.
    """
    from grpo_rlvr.errors import InputFileError
    from grpo_rlvr.identity.compute import adapter_base as named_base

    folder = Path(folder)
    where = folder / ADAPTER_CONFIG
    if not where.is_file():
        return None, None
    try:
        found = named_base(folder)
        cfg = json.loads(where.read_text(encoding="utf-8"))
    except (InputFileError, OSError, ValueError) as e:
        return None, f"{e}; save the adapter again with `save_pretrained`"
    if found is None:
        return None, (f"{where}: no base_model_name_or_path, so the base model is unknown; set it to the base's hub "
                      "id or folder (the model SFT started from)")
    written, local, revision = found
    if cfg.get("peft_type", "LORA") != "LORA":
        return None, (f"{where}: peft_type {cfg.get('peft_type')!r}; only LoRA adapters are loaded here. Merge it "
                      "into its base with peft (`merge_and_unload()`) and point model.name_or_path at the result")
    if local is None and (Path(written).expanduser().is_absolute() or written.startswith((".", "~"))):
        return None, (f"{where}: base_model_name_or_path {written!r} is a path that does not exist here; put the "
                      "base model there or set base_model_name_or_path to its hub id")
    if local is not None and not (local / "config.json").is_file():
        return None, (f"{where}: base_model_name_or_path {written!r} names {local}, which holds no model (no "
                      "config.json); point it at the base model's folder or hub id")
    weights = ("adapter_model.safetensors", "adapter_model.bin")
    if not any((folder / w).is_file() for w in weights):
        return None, (f"{folder}: holds {ADAPTER_CONFIG} but no adapter weights ({' or '.join(weights)}); point "
                      "model.name_or_path at the folder the adapter was saved to (`save_pretrained` writes both), "
                      "or copy its weights here")
    peft_type = cfg.get("peft_type") or "LORA"
    if local is not None:
        return AdapterBase(written, str(local), True, revision, peft_type), None
    return AdapterBase(written, written, False, revision, peft_type), None


# ---------------------------------------------------------------------------- facts


@dataclass(frozen=True)
class ModelFacts:
    """What is known about the model, and from where (``config.json``, ``brief``, ``name``, ``unknown``)."""

    params: float | None
    params_from: str
    moe: bool
    moe_from: str
    vision: bool
    vision_from: str
    context_length: int | None
    config_path: str | None
    config: dict | None = field(default=None, repr=False, compare=False)
    warnings: tuple[str, ...] = ()


def model_facts(model: dict, resolved: str, is_local: bool) -> ModelFacts:
    """Facts for the brief's ``model`` section (``name_or_path``, ``revision``, ``params``, ``moe``, ``vision``).

    Returns the facts with one warning per guess or disagreement, each naming the field and the fix.
    """
    name = model["name_or_path"]
    if is_local:
        cfg_path = Path(resolved) / "config.json"
        config = read_config(Path(resolved))
    else:
        found = cached_config_path(name, model.get("revision"))
        cfg_path, config = found, (read_config(found.parent) if found else None)
    where = f"config.json ({cfg_path})" if config is not None else None
    fix = (f"`hf download {name} config.json` (fetches only the config into the local cache)" if not is_local
           else f"add a config.json to {resolved}")
    warnings: list[str] = []

    stated = parse_params(model["params"]) if "params" in model else None
    params, params_from = None, "unknown"
    if config is not None:
        params = params_from_config(config)
        params_from = where if params else "unknown"
        if params and stated and abs(stated / params - 1) > 0.15:
            warnings.append(f"model.params: the brief says {human_params(stated)} but {where} gives "
                            f"{human_params(params)}; the config is used. Fix or remove model.params")
    if params is None and stated:
        params, params_from = stated, "brief (model.params)"
    if params is None:
        guess = params_from_name(name)
        if guess:
            params, params_from = guess, "name"
            warnings.append(f"model.params: no config.json for {name!r} in a local folder or the Hugging Face "
                            f"cache, so its size ({human_params(guess)}) was guessed from the name; the memory "
                            f"estimate rests on that guess. Fix: {fix}, or state model.params (e.g. "
                            f"params: {human_params(guess)})")
        else:
            warnings.append(f"model.params: the size of {name!r} is unknown (no config.json, no size in its name), "
                            f"so memory is not estimated. Fix: {fix}, or state model.params (e.g. params: 7B)")

    def flag(key: str, from_config, from_name, what: str) -> tuple[bool, str]:
        if config is not None:
            value = from_config(name, config)
            if key in model and bool(model[key]) != value:
                warnings.append(f"model.{key}: the brief says {model[key]} but {where} says {value}; the config "
                                f"is used. Fix or remove model.{key}")
            return value, where
        if key in model:
            return bool(model[key]), f"brief (model.{key})"
        value = from_name(name, None)
        warnings.append(f"model.{key}: whether {name!r} is {what} is unknown (no config.json); taken as "
                        f"{'yes' if value else 'no'} from its name. Fix: {fix}, or state model.{key}: true|false")
        return value, "name"

    moe, moe_from = flag("moe", is_mixture_of_experts, is_mixture_of_experts, "a mixture-of-experts model")
    vision, vision_from = flag("vision", is_vision_language, is_vision_language, "a vision-language model")
    return ModelFacts(params, params_from, moe, moe_from, vision, vision_from, context_length(config),
                      str(cfg_path) if config is not None else None, config, tuple(warnings))
