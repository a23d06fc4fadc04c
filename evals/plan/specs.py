"""Typed layer specs (one per cache layout) and how each is read from a config.json.

Key names follow the published configs: DeepSeek-V3 / Kimi / Ling MLA (`kv_lora_rank`,
`qk_rope_head_dim`, `qk_nope_head_dim`, `v_head_dim`), Llama/Qwen GQA (`num_key_value_heads`,
`head_dim`), Gemma `sliding_window`, Kimi Linear KDA (`linear_attn_config.num_heads/head_dim/
short_conv_kernel_size`), Qwen3-Next GatedDeltaNet (`linear_num_key_heads`, `linear_num_value_heads`,
`linear_key_head_dim`, `linear_value_head_dim`, `linear_conv_kernel_dim`), Nemotron-H Mamba2
(`mamba_num_heads`, `mamba_head_dim`, `ssm_state_size`, `n_groups`, `conv_kernel`) and Ling
`bailing_hybrid` KDA (`num_attention_heads` x `head_dim`, `short_conv_kernel_size`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

from ctxprobe.evals.plan.config import ModelConfig


class LayerKind(str, Enum):
    """How a layer's cache grows with the sequence."""

    full = "full_attention"  # K and V per token, every token
    mla = "mla"  # one compressed latent per token
    sliding = "sliding_window"  # K and V per token, only the last `window` tokens
    linear = "linear_attention"  # a constant recurrent state per sequence (KDA, GatedDeltaNet, Mamba)


@dataclass(frozen=True)
class AttentionSpec:
    """MHA/GQA: K and V for each KV head; `window` caps the tokens kept (sliding-window attention)."""

    kv_heads: int
    k_head_dim: int
    v_head_dim: int
    window: int | None = None

    @property
    def kind(self) -> LayerKind:
        return LayerKind.sliding if self.window else LayerKind.full

    def describe(self) -> str:
        dims = (
            f"{self.k_head_dim}" if self.k_head_dim == self.v_head_dim else f"K {self.k_head_dim} + V {self.v_head_dim}"
        )
        heads = f"{self.kv_heads} kv heads x {dims}"
        if self.window:
            return f"sliding window {self.window:,} ({heads})"
        return f"full attention ({heads})"


@dataclass(frozen=True)
class MlaSpec:
    """Multi-head latent attention: absorbed it caches `kv_lora_rank + qk_rope_head_dim` per token;
    expanded it caches per-head K (`qk_nope + qk_rope`) and V (`v_head_dim`)."""

    heads: int
    kv_lora_rank: int
    qk_rope_head_dim: int
    qk_nope_head_dim: int
    v_head_dim: int

    kind = LayerKind.mla

    @property
    def absorbed_width(self) -> int:
        return self.kv_lora_rank + self.qk_rope_head_dim

    @property
    def expanded_width(self) -> int:
        return self.heads * (self.qk_nope_head_dim + self.qk_rope_head_dim + self.v_head_dim)

    def describe(self) -> str:
        return f"MLA (latent {self.kv_lora_rank} + rope {self.qk_rope_head_dim}, {self.heads} heads)"


@dataclass(frozen=True)
class LinearSpec:
    """A recurrent layer: `heads x key_dim x value_dim` of state per sequence, plus a short
    convolution over `conv_channels` that keeps the last `conv_kernel - 1` inputs."""

    family: str
    heads: int
    key_dim: int
    value_dim: int
    conv_channels: int = 0
    conv_kernel: int = 0

    kind = LayerKind.linear

    def describe(self) -> str:
        conv = f", conv {self.conv_kernel}" if self.conv_kernel > 1 else ""
        return f"{self.family} ({self.heads} heads x {self.key_dim} x {self.value_dim}{conv})"


LayerSpec = AttentionSpec | MlaSpec | LinearSpec

MLA_KEYS = ("num_attention_heads", "kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim")


def mla_spec(cfg: ModelConfig) -> MlaSpec | None:
    """The MLA dims, or None when the config has no `kv_lora_rank`."""
    if not cfg.has("kv_lora_rank"):
        return None
    return require_mla(cfg)


def require_mla(cfg: ModelConfig) -> MlaSpec:
    k = cfg.require("size MLA layers", MLA_KEYS)
    return MlaSpec(
        heads=k["num_attention_heads"],
        kv_lora_rank=k["kv_lora_rank"],
        qk_rope_head_dim=k["qk_rope_head_dim"],
        qk_nope_head_dim=k["qk_nope_head_dim"],
        v_head_dim=k["v_head_dim"],
    )


def attention_spec(cfg: ModelConfig, window: int | None = None) -> AttentionSpec:
    """GQA/MHA from `num_key_value_heads` (MHA when absent) and `head_dim` (or hidden / heads)."""
    what = "size sliding-window layers" if window else "size full-attention layers"
    heads, head_dim = cfg.heads_and_head_dim(what)
    kv_heads = cfg.int_or_none("num_key_value_heads") or heads
    return AttentionSpec(kv_heads=kv_heads, k_head_dim=head_dim, v_head_dim=head_dim, window=window)


def sliding_spec(cfg: ModelConfig) -> AttentionSpec:
    window = cfg.require("size sliding-window layers", ("sliding_window",))["sliding_window"]
    return attention_spec(cfg, window=window)


def global_spec(cfg: ModelConfig) -> AttentionSpec | MlaSpec:
    """The model's own full-attention layer: MLA when the config has MLA dims, else GQA/MHA."""
    return mla_spec(cfg) or attention_spec(cfg)


def mha_spec(cfg: ModelConfig) -> AttentionSpec | None:
    """Every query head with its own K and V (MLA dims when present), or None without head counts."""
    mla = mla_spec(cfg)
    if mla is not None:
        return AttentionSpec(mla.heads, mla.qk_nope_head_dim + mla.qk_rope_head_dim, mla.v_head_dim)
    if not cfg.has("num_attention_heads") or not (cfg.has("head_dim") or cfg.has("hidden_size")):
        return None
    heads, head_dim = cfg.heads_and_head_dim("size MHA layers")
    return AttentionSpec(heads, head_dim, head_dim)


_GDN_KEYS = ("linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim", "linear_value_head_dim")
_MAMBA_KEYS = ("mamba_num_heads", "mamba_head_dim", "ssm_state_size")


def linear_spec(cfg: ModelConfig) -> LinearSpec:
    """The recurrent layer's state dims, by whichever convention the config uses."""
    section = cfg.raw("linear_attn_config")
    if isinstance(section, Mapping) and ("num_heads" in section or "head_dim" in section):
        return _kimi_kda(cfg, section)
    if any(cfg.has(key) for key in _GDN_KEYS):
        k = cfg.require("size GatedDeltaNet layers", _GDN_KEYS)
        heads_k, heads_v = k["linear_num_key_heads"], k["linear_num_value_heads"]
        dk, dv = k["linear_key_head_dim"], k["linear_value_head_dim"]
        # One convolution over the concatenated q, k, v projections.
        return LinearSpec(
            "GatedDeltaNet",
            heads=heads_v,
            key_dim=dk,
            value_dim=dv,
            conv_channels=2 * heads_k * dk + heads_v * dv,
            conv_kernel=cfg.int_or_none("linear_conv_kernel_dim") or 0,
        )
    if any(cfg.has(key) for key in _MAMBA_KEYS):
        k = cfg.require("size Mamba2 layers", _MAMBA_KEYS)
        groups = cfg.int_or_none("n_groups") or cfg.int_or_none("mamba_n_groups") or 1
        kernel = cfg.int_or_none("conv_kernel") or cfg.int_or_none("mamba_d_conv") or 0
        heads, head_dim, state = k["mamba_num_heads"], k["mamba_head_dim"], k["ssm_state_size"]
        # State per head is head_dim x ssm_state_size; the conv runs over x, B and C.
        return LinearSpec(
            "Mamba2",
            heads=heads,
            key_dim=state,
            value_dim=head_dim,
            conv_channels=heads * head_dim + 2 * groups * state,
            conv_kernel=kernel,
        )
    if cfg.model_type.startswith("bailing"):
        return _bailing_linear(cfg)
    raise cfg.missing(
        "size linear-attention layers",
        [
            "linear_attn_config.num_heads/head_dim (KDA)",
            "linear_num_value_heads/linear_key_head_dim/linear_value_head_dim (GatedDeltaNet)",
            "mamba_num_heads/mamba_head_dim/ssm_state_size (Mamba2)",
        ],
    )


def _kimi_kda(cfg: ModelConfig, section: Mapping[str, object]) -> LinearSpec:
    k = cfg.require("size KDA layers", ("num_heads", "head_dim"), section=section, where="linear_attn_config.")
    heads, dim = k["num_heads"], k["head_dim"]
    kernel = cfg.int_or_none("short_conv_kernel_size", section) or 0
    # KDA convolves q, k and v separately: three channels of heads x head_dim.
    return LinearSpec("KDA", heads, dim, dim, conv_channels=3 * heads * dim, conv_kernel=kernel)


def _bailing_linear(cfg: ModelConfig) -> LinearSpec:
    """Ling `bailing_hybrid`: every linear head is `head_dim` square; with `short_conv_kernel_size`
    the layer is KDA (Ling 3), without it lightning attention (no convolution)."""
    heads = cfg.int_or_none("num_kv_heads_for_linear_attn")
    keys = ("head_dim",) if heads else ("head_dim", "num_attention_heads")
    k = cfg.require("size linear-attention layers", keys)
    dim, heads = k["head_dim"], heads or k["num_attention_heads"]
    kernel = cfg.int_or_none("short_conv_kernel_size") or 0
    if kernel:
        return LinearSpec("KDA", heads, dim, dim, conv_channels=3 * heads * dim, conv_kernel=kernel)
    return LinearSpec("lightning attention", heads, dim, dim)
