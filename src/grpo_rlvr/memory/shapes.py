"""Model size classes: the shapes of the named sizes (``"7B"``) the memory model is asked about, and the nearest
one to a parameter count. A shape itself, and reading one from a ``config.json``, are ``grpo_rlvr.model_shape``'s.
"""

from __future__ import annotations

from grpo_rlvr.errors import ConfigError
from grpo_rlvr.model_shape import ModelShape

# ---------------------------------------------------------------------------- size classes
# Shapes copied from the models' config.json on the Hugging Face Hub (numbers only). Qwen2.5 for most
# classes; Llama 3.1 for 8B and 70B, the sizes the Unsloth anchors use.
_QWEN = "https://huggingface.co/Qwen/{}/blob/main/config.json"
_LLAMA = "https://huggingface.co/meta-llama/{}/blob/main/config.json"


def _qwen(name: str, h: int, layers: int, heads: int, kv: int, inter: int, vocab: int, tied: bool) -> ModelShape:
    return ModelShape(name=name, hidden_size=h, num_layers=layers, num_heads=heads, num_kv_heads=kv,
                      intermediate_size=inter, vocab_size=vocab, tie_word_embeddings=tied, qkv_bias=True,
                      source=_QWEN.format(name))


def _llama(name: str, h: int, layers: int, heads: int, kv: int, inter: int) -> ModelShape:
    return ModelShape(name=name, hidden_size=h, num_layers=layers, num_heads=heads, num_kv_heads=kv,
                      intermediate_size=inter, vocab_size=128256, source=_LLAMA.format(name))


SIZE_CLASSES: dict[str, ModelShape] = {
    "0.5B": _qwen("Qwen2.5-0.5B", 896, 24, 14, 2, 4864, 151936, tied=True),
    "1.5B": _qwen("Qwen2.5-1.5B", 1536, 28, 12, 2, 8960, 151936, tied=True),
    "3B": _qwen("Qwen2.5-3B", 2048, 36, 16, 2, 11008, 151936, tied=True),
    "7B": _qwen("Qwen2.5-7B", 3584, 28, 28, 4, 18944, 152064, tied=False),
    "8B": _llama("Llama-3.1-8B", 4096, 32, 32, 8, 14336),
    "14B": _qwen("Qwen2.5-14B", 5120, 48, 40, 8, 13824, 152064, tied=False),
    "32B": _qwen("Qwen2.5-32B", 5120, 64, 40, 8, 27648, 152064, tied=False),
    "70B": _llama("Llama-3.1-70B", 8192, 80, 64, 8, 28672),
}


def size_class(name: str) -> ModelShape:
    """The shape of a size class (``"7B"``; case-insensitive). Raises ConfigError naming the choices."""
    for key, shape in SIZE_CLASSES.items():
        if key.lower() == str(name).strip().lower():
            return shape
    raise ConfigError(f"Unknown model size {name!r}. Available: {', '.join(SIZE_CLASSES)}; "
                      "or pass params_b= (and optionally shape=shape_from_config(...)).")


def nearest_size_class(params: float) -> ModelShape:
    """The size class whose parameter count is closest (on a log scale) to ``params``."""
    import math

    return min(SIZE_CLASSES.values(), key=lambda s: abs(math.log(s.total_params() / params)))
