"""The arithmetic: bytes per token, constant bytes per sequence, the cache at a context length,
the break-even length, what-if layouts (all MLA, all MHA) and how many sequences fit on the GPUs."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from ctxprobe.evals.plan.layers import ModelLayers
from ctxprobe.evals.plan.specs import AttentionSpec, LayerKind, LayerSpec, LinearSpec, MlaSpec

MlaCache = Literal["absorbed", "expanded"]


@dataclass(frozen=True)
class BudgetOptions:
    contexts: tuple[int, ...]
    cache_bytes: int  # per element of K, V or MLA latent
    state_bytes: int  # per element of a recurrent state
    mla_cache: MlaCache = "absorbed"
    include_mtp: bool = False
    include_conv: bool = False  # count the short-convolution state in totals and fits


@dataclass(frozen=True)
class GpuBudget:
    """`gpus x gpu_mem x util - weights` bytes are left for caches."""

    gpus: int
    gpu_mem_bytes: int
    util: Decimal
    weights_bytes: int

    @property
    def free_bytes(self) -> int:
        return int(self.gpus * self.gpu_mem_bytes * self.util) - self.weights_bytes

    def fits(self, per_sequence_bytes: int) -> int:
        """Whole sequences that fit; 0 when the weights leave nothing."""
        if self.free_bytes <= 0 or per_sequence_bytes <= 0:
            return 0
        return self.free_bytes // per_sequence_bytes


def token_bytes(spec: LayerSpec, options: BudgetOptions) -> int:
    """Cache bytes one layer adds per token."""
    if isinstance(spec, AttentionSpec):
        return spec.kv_heads * (spec.k_head_dim + spec.v_head_dim) * options.cache_bytes
    if isinstance(spec, MlaSpec):
        width = spec.absorbed_width if options.mla_cache == "absorbed" else spec.expanded_width
        return width * options.cache_bytes
    return 0


def state_bytes(spec: LayerSpec, options: BudgetOptions) -> int:
    """The constant recurrent state one layer keeps per sequence."""
    if isinstance(spec, LinearSpec):
        return spec.heads * spec.key_dim * spec.value_dim * options.state_bytes
    return 0


def conv_bytes(spec: LayerSpec, dtype_bytes: int) -> int:
    """The short-convolution state: the last `kernel - 1` inputs of every channel."""
    if isinstance(spec, LinearSpec) and spec.conv_kernel > 1:
        return spec.conv_channels * (spec.conv_kernel - 1) * dtype_bytes
    return 0


@dataclass(frozen=True)
class KindBudget:
    """All layers of one spec: per-token growth, window cap and constant state, summed."""

    label: str
    kind: LayerKind
    layers: int
    bytes_per_token: int
    window: int | None
    state_bytes: int
    conv_bytes: int

    def cache_bytes(self, tokens: int) -> int:
        kept = min(tokens, self.window) if self.window else tokens
        return self.bytes_per_token * kept + self.state_bytes


@dataclass(frozen=True)
class LayoutBudget:
    """One whole model (this one, or a what-if where every layer is one kind)."""

    name: str
    kinds: tuple[KindBudget, ...]
    include_conv: bool

    @property
    def layers(self) -> int:
        return sum(kind.layers for kind in self.kinds)

    @property
    def bytes_per_token(self) -> int:
        """Growth per token at long context (layers without a window)."""
        return sum(kind.bytes_per_token for kind in self.kinds if not kind.window)

    @property
    def windowed_bytes_per_token(self) -> int:
        return sum(kind.bytes_per_token for kind in self.kinds if kind.window)

    @property
    def state_bytes(self) -> int:
        return sum(kind.state_bytes for kind in self.kinds)

    @property
    def conv_bytes(self) -> int:
        return sum(kind.conv_bytes for kind in self.kinds)

    @property
    def constant_bytes(self) -> int:
        return self.state_bytes + (self.conv_bytes if self.include_conv else 0)

    def per_sequence_bytes(self, tokens: int) -> int:
        """Cache plus constant state for one sequence of `tokens`."""
        growing = sum(kind.cache_bytes(tokens) - kind.state_bytes for kind in self.kinds)
        return growing + self.constant_bytes

    def break_even_tokens(self) -> float | None:
        """The length where the growing cache equals the constant state (None: no state, or the
        growing cache never reaches it because every attention layer is windowed)."""
        if self.constant_bytes == 0:
            return None
        windows = sorted({kind.window for kind in self.kinds if kind.window})
        start, cached = 0, 0
        for end in [*windows, None]:
            slope = sum(k.bytes_per_token for k in self.kinds if not k.window or (end is not None and k.window >= end))
            if slope and (end is None or cached + slope * (end - start) >= self.constant_bytes):
                return start + (self.constant_bytes - cached) / slope
            if end is None:
                return None
            cached += slope * (end - start)
            start = end
        return None


def layout_budget(
    name: str, groups: list[tuple[str, list[LayerSpec]]], options: BudgetOptions, conv_dtype_bytes: int
) -> LayoutBudget:
    """Sum each group of layers (same spec) into one KindBudget."""
    kinds = []
    for label, specs in groups:
        spec = specs[0]
        kinds.append(
            KindBudget(
                label=label,
                kind=spec.kind,
                layers=len(specs),
                bytes_per_token=sum(token_bytes(s, options) for s in specs),
                window=spec.window if isinstance(spec, AttentionSpec) else None,
                state_bytes=sum(state_bytes(s, options) for s in specs),
                conv_bytes=sum(conv_bytes(s, conv_dtype_bytes) for s in specs),
            )
        )
    return LayoutBudget(name=name, kinds=tuple(kinds), include_conv=options.include_conv)


def describe(spec: LayerSpec, options: BudgetOptions) -> str:
    if isinstance(spec, MlaSpec):
        width = spec.absorbed_width if options.mla_cache == "absorbed" else spec.expanded_width
        return f"MLA {options.mla_cache} ({width:,} per token)"
    return spec.describe()


@dataclass(frozen=True)
class ModelBudget:
    model: ModelLayers
    options: BudgetOptions
    this: LayoutBudget
    alternatives: tuple[LayoutBudget, ...]
    mla_expanded_over_absorbed: float | None
    mtp_layers: int  # counted in every layout (0 unless --include-mtp)
    gpu: GpuBudget | None


def plan_budget(model: ModelLayers, options: BudgetOptions, gpu: GpuBudget | None = None) -> ModelBudget:
    """This model's budget and the what-ifs: every layer MLA, every layer the model's own full
    attention, every layer MHA (each only where the config has the dims, and unlike this model)."""
    mtp = model.mtp_layers if options.include_mtp and model.global_attention is not None else 0
    groups: dict[LayerSpec, list[LayerSpec]] = {}
    for spec in model.layers:
        groups.setdefault(spec, []).append(spec)
    labelled = [(describe(spec, options), specs) for spec, specs in groups.items()]
    if mtp and model.global_attention is not None:
        labelled.append((f"MTP {describe(model.global_attention, options)}", [model.global_attention] * mtp))
    this = layout_budget("this model", labelled, options, model.conv_dtype_bytes)

    count = len(model.layers) + mtp
    candidates: list[tuple[str, LayerSpec | None]] = [
        ("all MLA", model.mla),
        ("all full attention", model.global_attention),
        ("all MHA", model.mha),
    ]
    alternatives: list[LayoutBudget] = []
    seen: set[LayerSpec] = set()
    for name, candidate in candidates:
        if candidate is None or candidate in seen or all(layer == candidate for layer in model.layers):
            continue
        seen.add(candidate)
        label = describe(candidate, options)
        alternatives.append(layout_budget(name, [(label, [candidate] * count)], options, model.conv_dtype_bytes))

    ratio = None
    in_use = [layer for layer in model.layers if isinstance(layer, MlaSpec)]
    mla = in_use[0] if in_use else model.mla
    if mla is not None:
        ratio = mla.expanded_width / mla.absorbed_width
    return ModelBudget(model, options, this, tuple(alternatives), ratio, mtp, gpu)
