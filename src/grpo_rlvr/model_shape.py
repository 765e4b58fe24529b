"""A model's shape: the architecture numbers of a decoder-only transformer, read from a Hugging Face
``config.json``, and the parameter counts that follow from them.

A shape is what the memory model needs to know about an architecture: layers, widths, vocabulary,
attention heads (for the KV cache), and the mixture-of-experts fields. Parameter counts follow the
Llama / Qwen2 decoder layout (RMSNorm, GQA attention, SwiGLU MLP). Multi-head latent attention
(DeepSeek-V2/V3) is approximated as plain GQA attention. Below every room: the brief's model probe counts a
model's parameters with it, the memory model sizes a run, the rollout a vLLM engine's KV cache.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from grpo_rlvr.errors import ConfigError

# ---------------------------------------------------------------------------- shape


@dataclass(frozen=True)
class ModelShape:
    """The architecture numbers of a decoder-only transformer.

    For a mixture-of-experts model, ``intermediate_size`` is the width of the dense MLP layers (if any)
    and ``moe_intermediate_size`` the width of one expert.
    """

    name: str
    hidden_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    intermediate_size: int
    vocab_size: int
    head_dim: int | None = None
    tie_word_embeddings: bool = False
    qkv_bias: bool = False
    num_experts: int = 0
    experts_per_token: int = 0
    moe_intermediate_size: int = 0
    shared_expert_intermediate_size: int = 0
    num_dense_layers: int = 0  # MoE models whose first layers keep a dense MLP (DeepSeek first_k_dense_replace)
    source: str = ""

    # Widths ----------------------------------------------------------------
    @property
    def head_width(self) -> int:
        return self.head_dim or self.hidden_size // self.num_heads

    @property
    def q_dim(self) -> int:
        return self.num_heads * self.head_width

    @property
    def kv_dim(self) -> int:
        return self.num_kv_heads * self.head_width

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 0

    @property
    def num_moe_layers(self) -> int:
        return self.num_layers - self.num_dense_layers if self.is_moe else 0

    # Parameter counts --------------------------------------------------------
    def attention_params(self) -> int:
        h, q, kv = self.hidden_size, self.q_dim, self.kv_dim
        bias = (q + 2 * kv) if self.qkv_bias else 0
        return h * q + 2 * h * kv + q * h + bias

    def dense_mlp_params(self) -> int:
        return 3 * self.hidden_size * self.intermediate_size

    def moe_mlp_params(self, active_only: bool = False) -> int:
        """Experts (all, or only the routed ``experts_per_token``), shared experts and the router of one MoE layer."""
        h = self.hidden_size
        experts = self.experts_per_token if active_only else self.num_experts
        return (experts * 3 * h * self.moe_intermediate_size + 3 * h * self.shared_expert_intermediate_size
                + h * self.num_experts)

    def layer_linear_params(self) -> int:
        """Weights of all the linear layers inside the decoder stack (what bitsandbytes quantizes in QLoRA)."""
        dense = self.num_layers - self.num_moe_layers
        return (self.num_layers * self.attention_params() + dense * self.dense_mlp_params()
                + self.num_moe_layers * self.moe_mlp_params())

    def embedding_params(self) -> int:
        """Input embedding plus the LM head when it is not tied to it."""
        table = self.vocab_size * self.hidden_size
        return table if self.tie_word_embeddings else 2 * table

    def norm_params(self) -> int:
        return (2 * self.num_layers + 1) * self.hidden_size

    def total_params(self) -> int:
        return self.layer_linear_params() + self.embedding_params() + self.norm_params()

    def active_params(self) -> int:
        """Parameters used for one token (differs from the total only for MoE)."""
        if not self.is_moe:
            return self.total_params()
        saved = self.num_moe_layers * (self.moe_mlp_params() - self.moe_mlp_params(active_only=True))
        return self.total_params() - saved

    def lora_params(self, rank: int) -> int:
        """LoRA A+B parameters on every attention projection and every dense (or shared-expert) MLP projection.

        Routed experts are not counted: in transformers 5 they are fused 3-D parameters that PEFT's
        ``all-linear`` does not target.
        """
        h, q, kv = self.hidden_size, self.q_dim, self.kv_dim
        attn = (h + q) + 2 * (h + kv) + (q + h)
        dense_mlp = 3 * (h + self.intermediate_size)
        shared = 3 * (h + self.shared_expert_intermediate_size) if self.shared_expert_intermediate_size else 0
        dense_layers = self.num_layers - self.num_moe_layers
        per_rank = self.num_layers * attn + dense_layers * dense_mlp + self.num_moe_layers * shared
        return rank * per_rank

    def kv_bytes_per_token(self, dtype_bytes: float = 2.0) -> float:
        """Bytes of K and V cached per token over all layers."""
        return 2 * self.num_layers * self.kv_dim * dtype_bytes


# ---------------------------------------------------------------------------- config.json


def _first(cfg: Mapping[str, Any], *keys: str, default: Any = None) -> Any:
    for key in keys:
        if cfg.get(key) is not None:
            return cfg[key]
    return default


def shape_from_config(config: Mapping[str, Any], name: str | None = None) -> ModelShape:
    """Read a ModelShape from a Hugging Face ``config.json`` dict.

    Dense fields: ``hidden_size``, ``num_hidden_layers``, ``vocab_size``, ``num_attention_heads``,
    ``num_key_value_heads`` (defaults to the attention heads), ``intermediate_size``, ``head_dim``,
    ``tie_word_embeddings``. MoE fields: ``num_experts`` / ``num_local_experts`` / ``n_routed_experts``,
    ``num_experts_per_tok``, ``moe_intermediate_size`` (else ``intermediate_size`` is the expert width, as in
    Mixtral), ``shared_expert_intermediate_size`` or ``n_shared_experts``, ``first_k_dense_replace``.
    A vision-language config is read through its ``text_config``.

    Raises:
        ConfigError: listing every missing or non-positive required field.
    """
    cfg = config.get("text_config") or config
    required = ("hidden_size", "num_hidden_layers", "vocab_size", "num_attention_heads")
    problems = [f"config.json has no positive {k!r}" for k in required
                if not isinstance(cfg.get(k), int) or cfg[k] <= 0]
    experts = int(_first(cfg, "num_experts", "num_local_experts", "n_routed_experts", default=0) or 0)
    moe_inter = int(_first(cfg, "moe_intermediate_size", default=0) or 0)
    inter = _first(cfg, "intermediate_size", "ffn_dim", default=0) or 0
    if not inter and not (experts and moe_inter):
        problems.append("config.json has no 'intermediate_size' (nor MoE 'moe_intermediate_size')")
    if problems:
        raise ConfigError(problems, source=name or str(config.get("_name_or_path", "config.json")))
    h = cfg["hidden_size"]
    shared = int(_first(cfg, "shared_expert_intermediate_size", default=0) or 0)
    if not shared and cfg.get("n_shared_experts"):
        shared = int(cfg["n_shared_experts"]) * (moe_inter or int(inter))
    if experts and not moe_inter:
        moe_inter = int(inter)  # Mixtral / GPT-OSS: intermediate_size is the width of one expert
    model_type = str(config.get("model_type", cfg.get("model_type", "")))
    return ModelShape(
        name=name or str(config.get("_name_or_path") or model_type or "custom"),
        hidden_size=h,
        num_layers=cfg["num_hidden_layers"],
        num_heads=cfg["num_attention_heads"],
        num_kv_heads=int(_first(cfg, "num_key_value_heads", default=cfg["num_attention_heads"])),
        intermediate_size=int(inter or moe_inter),
        vocab_size=cfg["vocab_size"],
        head_dim=_first(cfg, "head_dim"),
        tie_word_embeddings=bool(_first(cfg, "tie_word_embeddings", default=config.get("tie_word_embeddings", False))),
        qkv_bias=bool(_first(cfg, "attention_bias", "qkv_bias", default=model_type.startswith("qwen2"))),
        num_experts=experts,
        experts_per_token=int(_first(cfg, "num_experts_per_tok", "moe_topk", default=2 if experts else 0)),
        moe_intermediate_size=moe_inter if experts else 0,
        shared_expert_intermediate_size=shared if experts else 0,
        num_dense_layers=int(_first(cfg, "first_k_dense_replace", default=0) or 0) if experts else 0,
        source="config.json",
    )
