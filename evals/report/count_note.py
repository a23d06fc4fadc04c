"""The line under a run's table that names samples the server counted at another length than planned
(records' `prompt_tokens_off`, set by the run: evals/run/send/count_check.py)."""

from __future__ import annotations

from collections.abc import Iterable

from ctxprobe.evals.records.record import SampleRecord


def count_note(records: Iterable[SampleRecord]) -> str:
    """One line naming how many samples were served off their planned length, and the worst ('' if none)."""
    off = [r for r in records if r.prompt_tokens_off is not None]
    if not off:
        return ""
    worst = max(off, key=lambda r: abs(r.prompt_tokens_off or 0))
    planned = worst.sample.planned_tokens
    return (
        f"prompt length off the plan: {len(off)} samples served at a length beyond the tolerance (worst: "
        f"{worst.sample.sample_id} planned {planned:,} tokens, the server counted "
        f"{planned + (worst.prompt_tokens_off or 0):,}); is the token counter the served model's?\n"
    )
