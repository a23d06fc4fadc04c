"""The terminal verdict of `ctxprobe limit`: four numbers per endpoint, side by side."""

from __future__ import annotations

from ctxprobe.evals.limit.target import TargetLimits


def _n(x: int | None) -> str:
    return f"{x:,}" if x is not None else "?"


def render_limits(results: list[TargetLimits]) -> str:
    rows: list[list[str]] = [
        ["", *[r.endpoint for r in results]],
        ["engine", *[_engine(r) for r in results]],
        ["advertised", *[_n(r.advertised.tokens) for r in results]],
        ["configured", *[_n(r.configured) for r in results]],
        ["accepted", *[_n(r.accepted.accepted_tokens) for r in results]],
        ["effective", *[_effective(r) for r in results]],
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    out = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    for r in results:
        a = r.accepted
        out.append("")
        out.append(f"{r.endpoint}")
        out.append(f"  advertised: {_n(r.advertised.tokens)} ({r.advertised.source})")
        out.append(f"  configured: {_n(r.configured)} ({r.configured_source or 'the engine does not say'})")
        room = f"leaving max_tokens {a.max_tokens} for the answer"
        if a.accepted_tokens is None:
            out.append(f"  accepted: no prompt was accepted ({a.requests} requests)")
        else:
            out.append(f"  accepted: {_n(a.accepted_tokens)} prompt tokens {room} ({a.basis})")
            served = _served(a.rejected_tokens, a.rejected_served) or _at_least(a.rejected_served_at_least)
            above = f"rejected as too long at {_n(a.rejected_tokens)}{served}" if a.rejected_tokens else "none rejected"
            out.append(
                f"    largest prompt taken {_n(a.largest_taken)}{_served(a.largest_taken, a.largest_taken_served)}; "
                f"{above} (ctxprobe's counts); {a.requests} requests"
            )
        if a.stopped_by_error:
            out.append(f"    search stopped by an error: {a.stopped_by_error}")
        if r.effective is not None:
            e = r.effective
            said = e.verdict.removeprefix("effective: ").removeprefix("effective ")  # the label is this line's
            out.append(f"  effective: {said}")
            out.append(
                f"    {e.requests} samples used; the equivalent full grid ({e.full_grid_lengths} lengths) "
                f"would use {e.full_grid_requests}"
            )
            for row in e.lengths:
                acc = "-" if row.accuracy is None else f"{row.accuracy:.2f}"
                out.append(
                    f"    {row.length:>9,}  acc {acc}  n {row.n:<3} CI [{row.lo:.2f}, {row.hi:.2f}]  {row.verdict}"
                )
    return "\n".join(out)


def _engine(r: TargetLimits) -> str:
    return f"{r.engine.engine} {r.engine.model or ''}".strip() if r.engine else "None"


def _served(planned: int | None, served: int | None) -> str:
    """The server's count beside ctxprobe's, where it gave one that differs."""
    return f" (the server counted {served:,})" if served is not None and served != planned else ""


def _at_least(bound: int | None) -> str:
    """A lower bound the server gave instead of its count (vLLM 0.32 states the limit + 1)."""
    return f" (the server said at least {bound:,})" if bound is not None else ""


def _effective(r: TargetLimits) -> str:
    e = r.effective
    if e is None:
        return "not measured"
    if e.effective is None:
        scored = [row.length for row in e.lengths if row.verdict != "no_data"]
        return f"< {min(scored):,}" if scored else "not measured (no scored samples)"
    return f">= {e.effective:,}" + (f" (< {e.bracket[1]:,})" if e.bracket else "")
