"""The cache-path control in a run's tables (terminal, summary.md, report.html): its one line and, where
checks were made, what was checked and what differed per length. A run whose cache path is at fault has its
tables headed by that line: the scores below it are the engine's as much as the model's."""

from __future__ import annotations

from ctxprobe.evals.records.cache_check import CacheCheck
from ctxprobe.evals.records.manifest import RunManifest

SUSPECT = "SUSPECT: these scores were served through a prefix-cache path that changes answers (an engine fault)"


def control_of(manifest: RunManifest | None) -> CacheCheck | None:
    """The run's control where it says something (None: not recorded, or off)."""
    control = manifest.cache_check if manifest is not None else None
    return None if control is None or control.verdict == "off" else control


def render_cache_path(control: CacheCheck) -> str:
    """The control's line and its per-length counts, as text."""
    out = [control.line()]
    if control.per_length:
        out.append("  length   checked  differed")
        out += [f"  {row.context_tokens:>6,}   {row.checked:>7}  {row.differed:>8}" for row in control.per_length]
    if control.how and control.verdict not in ("unsupported",):
        out.append(f"  cold path: {control.how}; {control.prefill_tokens:,} prompt tokens prefilled cold")
    return "\n".join(out) + "\n"


def with_cache_path(table: str, manifest: RunManifest | None) -> str:
    """The terminal table with the control: headed by the suspect line on a fault, its lines after it."""
    control = control_of(manifest)
    if control is None:
        return table
    text = render_cache_path(control)
    return (SUSPECT + "\n" + table + text) if control.fault else table + text
