"""The plan as one pydantic record (`--json`) and as a plain-text table; both come from the same
record, so they carry the same numbers."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from ctxprobe.evals.plan.budget import KindBudget, LayoutBudget, ModelBudget
from ctxprobe.evals.plan.units import gb, mb_mib


class ContextBytes(BaseModel):
    model_config = ConfigDict(frozen=True)

    tokens: int
    bytes: int


class ContextFit(BaseModel):
    model_config = ConfigDict(frozen=True)

    tokens: int
    sequences: int


class KindRow(BaseModel):
    """All layers of one kind and shape."""

    model_config = ConfigDict(frozen=True)

    label: str
    kind: str
    layers: int
    bytes_per_token: int
    window: int | None
    state_bytes: int
    conv_bytes: int
    cache: list[ContextBytes]


class LayoutRow(BaseModel):
    """A whole model: this one (`name` "this model") or a what-if."""

    model_config = ConfigDict(frozen=True)

    name: str
    label: str
    layers: int
    bytes_per_token: int  # growth at long context (layers without a window)
    windowed_bytes_per_token: int  # sliding-window layers, up to their window
    state_bytes: int
    conv_bytes: int
    constant_bytes: int  # state, plus conv when include_conv
    per_sequence: list[ContextBytes]
    break_even_tokens: float | None
    fits: list[ContextFit] | None


class GpuRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    gpus: int
    gpu_mem_bytes: int
    util: float
    weights_bytes: int
    free_bytes: int


class PlanReport(BaseModel):
    """What `ctxprobe plan --json` prints. Bytes are exact integers; the table rounds them."""

    model_config = ConfigDict(frozen=True)

    config: str
    model_type: str
    architecture: str | None
    layout: str
    cacheless_blocks: int
    mtp_layers_in_config: int
    mtp_layers_counted: int
    cache_dtype: str
    state_dtype: str
    conv_dtype: str
    mla_cache: str
    include_conv: bool
    contexts: list[int]
    kinds: list[KindRow]
    total: LayoutRow
    alternatives: list[LayoutRow]
    mla_expanded_over_absorbed: float | None
    gpu: GpuRow | None


def _layout_row(layout: LayoutBudget, budget: ModelBudget) -> LayoutRow:
    contexts = budget.options.contexts
    per_sequence = [ContextBytes(tokens=t, bytes=layout.per_sequence_bytes(t)) for t in contexts]
    fits = None
    if budget.gpu is not None:
        fits = [ContextFit(tokens=c.tokens, sequences=budget.gpu.fits(c.bytes)) for c in per_sequence]
    return LayoutRow(
        name=layout.name,
        label=" + ".join(kind.label for kind in layout.kinds),
        layers=layout.layers,
        bytes_per_token=layout.bytes_per_token,
        windowed_bytes_per_token=layout.windowed_bytes_per_token,
        state_bytes=layout.state_bytes,
        conv_bytes=layout.conv_bytes,
        constant_bytes=layout.constant_bytes,
        per_sequence=per_sequence,
        break_even_tokens=layout.break_even_tokens(),
        fits=fits,
    )


def _kind_row(kind: KindBudget, contexts: tuple[int, ...]) -> KindRow:
    return KindRow(
        label=kind.label,
        kind=kind.kind.value,
        layers=kind.layers,
        bytes_per_token=kind.bytes_per_token,
        window=kind.window,
        state_bytes=kind.state_bytes,
        conv_bytes=kind.conv_bytes,
        cache=[ContextBytes(tokens=t, bytes=kind.cache_bytes(t)) for t in contexts],
    )


def build_report(budget: ModelBudget, cache_dtype: str, state_dtype: str) -> PlanReport:
    model, options, gpu = budget.model, budget.options, budget.gpu
    return PlanReport(
        config=model.name,
        model_type=model.model_type,
        architecture=model.architecture,
        layout=model.layout,
        cacheless_blocks=model.cacheless_blocks,
        mtp_layers_in_config=model.mtp_layers,
        mtp_layers_counted=budget.mtp_layers,
        cache_dtype=cache_dtype,
        state_dtype=state_dtype,
        conv_dtype=model.conv_dtype,
        mla_cache=options.mla_cache,
        include_conv=options.include_conv,
        contexts=list(options.contexts),
        kinds=[_kind_row(kind, options.contexts) for kind in budget.this.kinds],
        total=_layout_row(budget.this, budget),
        alternatives=[_layout_row(layout, budget) for layout in budget.alternatives],
        mla_expanded_over_absorbed=budget.mla_expanded_over_absorbed,
        gpu=None
        if gpu is None
        else GpuRow(
            gpus=gpu.gpus,
            gpu_mem_bytes=gpu.gpu_mem_bytes,
            util=float(gpu.util),
            weights_bytes=gpu.weights_bytes,
            free_bytes=gpu.free_bytes,
        ),
    )


def _grid(rows: list[list[str]]) -> list[str]:
    """Columns padded to width: the first left-aligned, the rest right-aligned."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [row[0].ljust(widths[0])] + [cell.rjust(w) for cell, w in zip(row[1:], widths[1:])]
        lines.append("  ".join(cells).rstrip())
    return lines


def _mb(num_bytes: int) -> str:
    return mb_mib(num_bytes) if num_bytes else "-"


def _header(report: PlanReport) -> list[str]:
    total = report.total
    arch = f" ({report.architecture})" if report.architecture else ""
    kinds = ", ".join(f"{k.layers} {k.label.split(' (')[0]}" for k in report.kinds)
    lines = [
        f"ctxprobe plan: {report.config}",
        f"model    {report.model_type}{arch}; layout: {report.layout}",
        f"layers   {total.layers}: {kinds}",
    ]
    if report.cacheless_blocks:
        lines.append(f"         and {report.cacheless_blocks} blocks that keep no cache (MLP/MoE)")
    if report.mtp_layers_in_config and not report.mtp_layers_counted:
        lines.append(f"         {report.mtp_layers_in_config} MTP layer(s) not counted (--include-mtp counts them)")
    dtypes = [f"cache {report.cache_dtype}"]
    if total.state_bytes:
        dtypes.append(f"state {report.state_dtype}")
    if total.conv_bytes:
        where = "counted in totals" if report.include_conv else "apart from totals, --include-conv adds it"
        dtypes.append(f"conv {report.conv_dtype} ({where})")
    if report.mla_expanded_over_absorbed is not None:
        dtypes.append(f"MLA cache {report.mla_cache}")
    lines.append(f"dtypes   {', '.join(dtypes)}")
    lines.append("units    bytes per sequence; GB = 10^9 bytes")
    return lines


def _kinds(report: PlanReport, contexts: list[str]) -> list[str]:
    total = report.total
    show_state, show_conv = total.state_bytes > 0, total.conv_bytes > 0
    header = ["layer kind", "layers", "bytes/token"]
    header += ["state/seq"] if show_state else []
    header += ["conv/seq"] if show_conv else []
    rows = [header + contexts]
    entries = [(k.label, k.layers, k.bytes_per_token, k.state_bytes, k.conv_bytes, k.cache) for k in report.kinds]
    entries.append(
        ("total", total.layers, total.bytes_per_token, total.state_bytes, total.conv_bytes, total.per_sequence)
    )
    for label, layers, per_token, state, conv, cache in entries:
        row = [label, str(layers), f"{per_token:,}"]
        row += [_mb(state)] if show_state else []
        row += [_mb(conv)] if show_conv else []
        rows.append(row + [gb(c.bytes) for c in cache])
    return _grid(rows)


def _notes(report: PlanReport) -> list[str]:
    total, lines = report.total, []
    if total.windowed_bytes_per_token:
        lines.append(f"sliding-window layers add {total.windowed_bytes_per_token:,} bytes/token up to their window")
    if total.break_even_tokens is not None:
        lines.append(f"break-even: {total.break_even_tokens:,.0f} tokens (constant state = growing cache)")
    elif total.constant_bytes:
        lines.append("break-even: never (the windowed cache stays below the constant state)")
    if report.mla_expanded_over_absorbed is not None:
        lines.append(f"MLA cache expanded / absorbed: {report.mla_expanded_over_absorbed:.2f}x")
    return lines


def _what_if(report: PlanReport, contexts: list[str]) -> list[str]:
    rows = [["same model, every layer as", "layers", "bytes/token", *contexts]]
    for row in [report.total, *report.alternatives]:
        name = row.name if row is report.total else f"{row.name}: {row.label}"
        rows.append([name, str(row.layers), f"{row.bytes_per_token:,}", *[gb(c.bytes) for c in row.per_sequence]])
    return _grid(rows)


def _fits(report: PlanReport, gpu: GpuRow, contexts: list[str]) -> list[str]:
    budget = f"{gpu.gpus} x {gb(gpu.gpu_mem_bytes)} GB x {gpu.util:g} - weights {gb(gpu.weights_bytes)} GB"
    lines = [f"GPU: {budget} = {gb(gpu.free_bytes)} GB for caches"]
    rows = [["sequences that fit", *contexts]]
    for row in [report.total, *report.alternatives]:
        rows.append([row.name, *[str(f.sequences) for f in row.fits or []]])
    return lines + _grid(rows)


def render_table(report: PlanReport) -> str:
    """The plain-text table `ctxprobe plan` prints: header, kinds, notes, what-ifs, GPU fit."""
    contexts = [f"{t:,}" for t in report.contexts]
    sections = [_header(report), _kinds(report, contexts), _notes(report)]
    if report.alternatives:
        sections.append(_what_if(report, contexts))
    if report.gpu is not None:
        sections.append(_fits(report, report.gpu, contexts))
    return "\n\n".join("\n".join(section) for section in sections if section) + "\n"
