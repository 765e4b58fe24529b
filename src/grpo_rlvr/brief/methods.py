"""Per-method recipe defaults (full, LoRA, QLoRA), each with the source it comes from.

``full`` keeps the skill's recipe (``RECIPE`` in ``brief.recipe``: learning rate 5e-7). Adapters learn with far larger
steps: TRL's "LoRA Without Regret" guide trains GRPO with LoRA at 1e-5 against 1e-6 for full fine-tuning (10×),
LoRA on every linear layer, rank 1–32 being enough for RL, alpha 32, no dropout. QLoRA adds the 4-bit NF4 base
of the QLoRA paper (double quantization, bf16 compute). ``validate`` prints these with their sources.
"""

from __future__ import annotations

TRL_LORA_GUIDE = "https://huggingface.co/docs/trl/lora_without_regret"
QLORA_PAPER = "https://arxiv.org/abs/2305.14314"

# GRPOConfig keys a method changes from the recipe (origin "method:<name>").
METHOD_GRPO_DEFAULTS: dict[str, dict] = {
    "full": {},
    "lora": {"learning_rate": 1e-5},
    "qlora": {"learning_rate": 1e-5},
}
# The brief's lora section (keys as the brief writes them) -> default.
LORA_DEFAULTS = {"r": 16, "alpha": 32, "dropout": 0.0, "target_modules": "all-linear"}
# transformers.BitsAndBytesConfig kwargs for method qlora (rendered into train.py as they are here).
QLORA_QUANTIZATION = {"load_in_4bit": True, "bnb_4bit_quant_type": "nf4", "bnb_4bit_use_double_quant": True,
                      "bnb_4bit_compute_dtype": "bfloat16"}

SOURCES = {
    "recipe": "the skill's GRPO recipe (docs/design.md §2)",
    "adapter": "the adapter folder's own adapter_config.json: LoRA training continues the adapter with its settings",
    "method:lora": f"TRL docs, 'LoRA Without Regret': GRPO with LoRA at 1e-5 vs 1e-6 full, all-linear, alpha 32, "
                   f"rank 1-32 suffices for RL ({TRL_LORA_GUIDE})",
    "method:qlora": f"as LoRA ({TRL_LORA_GUIDE}), on a 4-bit NF4 base with double quantization and bf16 compute "
                    f"(Dettmers et al., QLoRA, {QLORA_PAPER})",
}
FULL_RATE_BELOW = 1e-6   # a learning rate under this, with adapters, is a full fine-tuning rate


def lora_settings(method: str, lora: dict) -> tuple[dict, dict]:
    """The adapter settings (brief keys) and where each came from ("brief" or "method:<method>")."""
    if method == "full":
        return {}, {}
    values, origin = {}, {}
    for key, default in LORA_DEFAULTS.items():
        values[key], origin[key] = (lora[key], "brief") if key in lora else (default, f"method:{method}")
    return values, origin


# peft.LoraConfig's defaults, for a key an adapter_config.json leaves out; the brief's key -> peft's field.
PEFT_LORA_FIELDS = {"r": ("r", 8), "alpha": ("lora_alpha", 8), "dropout": ("lora_dropout", 0.0),
                    "target_modules": ("target_modules", None)}


def adapter_lora_settings(adapter_config: dict) -> tuple[dict, dict]:
    """The settings a LoRA adapter folder's ``adapter_config.json`` holds (brief keys), which training continues
    with, and their origin ("adapter", or "peft default" for a key the file leaves out)."""
    values, origin = {}, {}
    for key, (field, default) in PEFT_LORA_FIELDS.items():
        value = adapter_config.get(field, default)
        values[key] = sorted(value) if isinstance(value, (list, set, tuple)) else value
        origin[key] = "adapter" if field in adapter_config else "peft default"
    return values, origin


def method_warnings(method: str, lora: dict, grpo: dict, origin: dict) -> list[str]:
    out = []
    if method == "full" and lora:
        out.append("lora: set, but method is 'full', so it is ignored; set method: lora (or qlora) to train an adapter")
    lr = grpo.get("learning_rate")
    if method != "full" and origin.get("learning_rate") == "brief" and isinstance(lr, (int, float)) \
            and lr < FULL_RATE_BELOW:
        default = METHOD_GRPO_DEFAULTS[method]["learning_rate"]
        out.append(f"grpo.learning_rate: {lr:g} with method {method!r} is a full fine-tuning rate; adapters usually "
                   f"need 1e-5 to 1e-4 (TRL's LoRA guide uses 10x the full rate). Remove the override to take the "
                   f"{method} default {default:g}, or set it in that range")
    if method == "qlora" and grpo.get("use_vllm") and grpo.get("vllm_mode") == "server":
        out.append("grpo.vllm_mode: 'server' with method 'qlora' is not verified: TRL 1.16 sends the merged policy "
                   "weights, which are 4-bit here, to a `vllm serve` that loads the checkpoint in bf16. Colocate "
                   "mode (one GPU per process, vLLM quantizing its own copy) is the path TRL handles")
    return out


def defaults_table() -> list[dict]:
    """One row per setting that differs by method: the value for each method and the source."""
    rows = [{"setting": "grpo.learning_rate", "full": 5e-7, "lora": METHOD_GRPO_DEFAULTS["lora"]["learning_rate"],
             "qlora": METHOD_GRPO_DEFAULTS["qlora"]["learning_rate"], "source": "recipe / method:lora"}]
    for key, value in LORA_DEFAULTS.items():
        rows.append({"setting": f"lora.{key}", "full": None, "lora": value, "qlora": value, "source": "method:lora"})
    rows.append({"setting": "base weights", "full": "bf16 (trained)", "lora": "bf16 (frozen)",
                 "qlora": "NF4, double quant, bf16 compute", "source": "method:qlora"})
    rows.append({"setting": "reference model (beta > 0)", "full": "a second copy", "lora": "adapter disabled",
                 "qlora": "adapter disabled", "source": "TRL 1.16 GRPOTrainer"})
    return rows
