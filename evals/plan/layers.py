"""Which layer is which: a config.json (or a `--layer-pattern`) becomes one typed spec per layer.

Layouts, in the order they are looked for:
  Kimi Linear    `linear_attn_config.full_attn_layers` / `kda_layers` (1-based layer numbers)
  explicit list  `layer_types` / `layers_block_type` (Qwen3-Next, Qwen3.5, Gemma 3, gpt-oss, Nemotron-H)
  Nemotron-H     `hybrid_override_pattern` (M mamba, * attention, - and E no cache)
  Ling           `layer_group_size`: full attention where (i + 1) % size == 0, linear elsewhere
  Qwen3-Next     `full_attention_interval`: the same rule
  Gemma 3        `sliding_window_pattern`: global where (i + 1) % pattern == 0, sliding elsewhere
  Gemma 2        alternating, even layers sliding
  Mistral        `sliding_window` on every layer (unless `use_sliding_window` is false)
  otherwise      every layer the model's full attention (MLA with `kv_lora_rank`, else GQA/MHA)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from ctxprobe.evals.plan.config import ModelConfig
from ctxprobe.evals.plan.specs import (
    AttentionSpec,
    LayerSpec,
    MlaSpec,
    attention_spec,
    global_spec,
    linear_spec,
    mha_spec,
    mla_spec,
    require_mla,
    sliding_spec,
)
from ctxprobe.tasks.errors import UserError


class Slot(Enum):
    """A layer's role before its dims are read."""

    global_attention = "global"  # the model's own full attention: MLA or GQA
    mla = "mla"
    attention = "attention"  # MHA/GQA even where MLA dims exist
    sliding = "sliding"
    linear = "linear"
    none = "none"  # an MLP/MoE block with no cache


# --layer-pattern letters.
PATTERN_LETTERS = {
    "K": Slot.linear,
    "M": Slot.mla,
    "A": Slot.attention,
    "S": Slot.sliding,
    "-": Slot.none,
}
PATTERN_HELP = (
    "K linear attention (KDA/GatedDeltaNet/Mamba), M MLA, A full attention (MHA/GQA), S sliding window, - no cache"
)

_TYPE_NAMES = {
    "full_attention": Slot.global_attention,
    "attention": Slot.global_attention,
    "global_attention": Slot.global_attention,
    "sliding_attention": Slot.sliding,
    "sliding_window": Slot.sliding,
    "local_attention": Slot.sliding,
    "linear_attention": Slot.linear,
    "mamba": Slot.linear,
    "ssm": Slot.linear,
    "kda": Slot.linear,
    "mla": Slot.mla,
    "mlp": Slot.none,
    "moe": Slot.none,
}
_HYBRID_CHARS = {"M": Slot.linear, "*": Slot.global_attention, "-": Slot.none, "E": Slot.none}


@dataclass(frozen=True)
class ModelLayers:
    """The cache-bearing layers of one model, plus the dims its what-if comparisons need."""

    name: str
    model_type: str
    architecture: str | None
    layers: tuple[LayerSpec, ...]
    layout: str  # where the layout came from, e.g. "layer_group_size = 8"
    cacheless_blocks: int  # MLP/MoE blocks that keep no cache (Nemotron-H)
    mtp_layers: int  # multi-token-prediction layers the config declares
    global_attention: AttentionSpec | MlaSpec | None  # the model's full-attention layer
    mla: MlaSpec | None
    mha: AttentionSpec | None
    conv_dtype: str
    conv_dtype_bytes: int


def read_layers(cfg: ModelConfig, pattern: str | None = None) -> ModelLayers:
    """Classify every layer; `pattern` (e.g. `KKKKKKKM`, repeated to the layer count) overrides."""
    slots, layout = _pattern_slots(cfg, pattern) if pattern else _config_slots(cfg)
    readers: dict[Slot, Callable[[ModelConfig], LayerSpec]] = {
        Slot.global_attention: global_spec,
        Slot.mla: require_mla,
        Slot.attention: attention_spec,
        Slot.sliding: sliding_spec,
        Slot.linear: linear_spec,
    }
    specs: dict[Slot, LayerSpec] = {}
    layers: list[LayerSpec] = []
    for slot in slots:
        if slot is Slot.none:
            continue
        if slot not in specs:
            specs[slot] = readers[slot](cfg)
        layers.append(specs[slot])
    if not layers:
        raise UserError(f"{cfg.name}: no layer keeps a cache in layout {layout}")
    mtp = cfg.int_or_none("num_nextn_predict_layers") or cfg.int_or_none("mtp_num_hidden_layers") or 0
    mla, mha = mla_spec(cfg), mha_spec(cfg)
    own = specs.get(Slot.global_attention)
    if own is None:
        own = mla or (attention_spec(cfg) if mha is not None else None)
    conv_dtype, conv_bytes = cfg.activation_bytes()
    return ModelLayers(
        name=cfg.name,
        model_type=cfg.model_type,
        architecture=cfg.architecture,
        layers=tuple(layers),
        layout=layout,
        cacheless_blocks=sum(1 for slot in slots if slot is Slot.none),
        mtp_layers=mtp,
        global_attention=own if isinstance(own, AttentionSpec | MlaSpec) else None,
        mla=mla,
        mha=mha,
        conv_dtype=conv_dtype,
        conv_dtype_bytes=conv_bytes,
    )


def _num_layers(cfg: ModelConfig) -> int:
    count = cfg.require("classify layers", ("num_hidden_layers",))["num_hidden_layers"]
    if count == 0:
        raise UserError(f"{cfg.name}: num_hidden_layers is 0")
    return count


def _pattern_slots(cfg: ModelConfig, pattern: str) -> tuple[list[Slot], str]:
    letters = "".join(pattern.split()).upper()
    bad = sorted({ch for ch in letters if ch not in PATTERN_LETTERS})
    if not letters or bad:
        shown = ", ".join(repr(ch) for ch in bad) or "nothing"
        raise UserError(f"--layer-pattern {pattern!r}: unknown letters {shown}; use {PATTERN_HELP}")
    count = _num_layers(cfg)
    if count % len(letters):
        raise UserError(
            f"--layer-pattern {pattern!r} ({len(letters)} letters) does not tile {count} layers; "
            f"give a divisor of {count} letters or all {count}"
        )
    slots = [PATTERN_LETTERS[ch] for ch in letters] * (count // len(letters))
    return slots, f"--layer-pattern {letters}"


def _config_slots(cfg: ModelConfig) -> tuple[list[Slot], str]:
    section = cfg.raw("linear_attn_config")
    if isinstance(section, dict) and (section.get("full_attn_layers") or section.get("kda_layers")):
        return _kimi_slots(cfg, section), "linear_attn_config.full_attn_layers"
    for key in ("layer_types", "layers_block_type"):
        names = cfg.raw(key)
        if isinstance(names, list) and names:
            return [_type_slot(cfg, key, i, name) for i, name in enumerate(names)], key
    pattern = cfg.raw("hybrid_override_pattern")
    if isinstance(pattern, str) and pattern:
        return [_hybrid_slot(cfg, i, ch) for i, ch in enumerate(pattern)], "hybrid_override_pattern"
    for key, other in (
        ("layer_group_size", Slot.linear),
        ("full_attention_interval", Slot.linear),
        ("sliding_window_pattern", Slot.sliding),
    ):
        period = cfg.int_or_none(key)
        if period:
            count = _num_layers(cfg)
            slots = [Slot.global_attention if (i + 1) % period == 0 else other for i in range(count)]
            return slots, f"{key} = {period}"
    expected = _layout_keys_expected(cfg)
    if expected:
        raise cfg.missing("classify layers", expected, hint="or give --layer-pattern")
    count = _num_layers(cfg)
    if cfg.has("sliding_window") and cfg.model_type.startswith("gemma2"):
        return [Slot.sliding if i % 2 == 0 else Slot.global_attention for i in range(count)], "gemma2 alternation"
    if cfg.has("sliding_window") and cfg.raw("use_sliding_window") is not False:
        return [Slot.sliding] * count, "sliding_window on every layer"
    return [Slot.global_attention] * count, "every layer the same (no hybrid layout keys)"


def _layout_keys_expected(cfg: ModelConfig) -> list[str]:
    """The layout keys a hybrid config should have had, when its layer dims say it is hybrid."""
    section = cfg.raw("linear_attn_config")
    if isinstance(section, dict) and ("num_heads" in section or "head_dim" in section):
        return ["linear_attn_config.full_attn_layers (or kda_layers)"]
    if cfg.has("linear_num_value_heads") or cfg.has("linear_key_head_dim"):
        return ["layer_types (or full_attention_interval)"]
    if cfg.has("mamba_num_heads") or cfg.has("ssm_state_size"):
        return ["hybrid_override_pattern (or layers_block_type)"]
    if cfg.model_type.startswith("bailing_hybrid"):
        return ["layer_group_size (or layer_types)"]
    if cfg.has("sliding_window") and cfg.model_type.startswith("gemma3"):
        return ["sliding_window_pattern (or layer_types)"]
    return []


def _kimi_slots(cfg: ModelConfig, section: dict[str, object]) -> list[Slot]:
    """Kimi Linear numbers its layers from 1 (`full_attn_layers: [4, 8, ..., 27]` of 27)."""
    count = _num_layers(cfg)
    numbers: dict[str, set[int]] = {}
    for key in ("full_attn_layers", "kda_layers"):
        values = section.get(key) or []
        if not isinstance(values, list) or not all(isinstance(v, int) for v in values):
            raise UserError(f"{cfg.name}: linear_attn_config.{key} should be a list of layer numbers")
        numbers[key] = set(values)
    everything = numbers["full_attn_layers"] | numbers["kda_layers"]
    base = 0 if 0 in everything else 1
    outside = sorted(n for n in everything if not base <= n < count + base)
    if outside:
        raise UserError(f"{cfg.name}: linear_attn_config layer numbers {outside} are outside 1-{count}")
    full = numbers["full_attn_layers"]
    return [Slot.global_attention if i + base in full else Slot.linear for i in range(count)]


def _type_slot(cfg: ModelConfig, key: str, index: int, name: object) -> Slot:
    slot = _TYPE_NAMES.get(str(name).lower())
    if slot is None:
        raise UserError(
            f"{cfg.name}: {key}[{index}] = {name!r} is not a layer kind ctxprobe knows; "
            f"override with --layer-pattern ({PATTERN_HELP})"
        )
    return slot


def _hybrid_slot(cfg: ModelConfig, index: int, char: str) -> Slot:
    slot = _HYBRID_CHARS.get(char)
    if slot is None:
        raise UserError(
            f"{cfg.name}: hybrid_override_pattern[{index}] = {char!r} is not one of M * - E; "
            f"override with --layer-pattern ({PATTERN_HELP})"
        )
    return slot
