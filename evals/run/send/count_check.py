"""Does the server count a prompt as ctxprobe planned it? Every completion answer states
`usage.prompt_tokens`; a prompt served at another length than planned (a token counter that is not the
served model's, a chat template counted wrongly, a proxy that rewrites prompts) makes the sample's length,
and every depth in it, something else than its recipe says. Such a sample is still scored (the model did
answer it) but flagged in its record (`prompt_tokens_off`), under the table and in the manifest.

The tolerance: 0.5 % of the planned length or 4 tokens, whichever is larger, for an exact counter (the
sum of per-unit counts may differ from the whole by a few tokens at unit boundaries); a quarter of the
planned length for an approximate one (`estimate`), which is off by design."""

from __future__ import annotations

from ctxprobe.runners.response import Response
from ctxprobe.tasks.sample import Sample


def count_tolerance(planned: int, approximate: bool) -> int:
    """How far the server's count may be from the planned one before the sample is flagged."""
    return max(4, planned // 4) if approximate else max(4, planned // 200)


def count_off(sample: Sample, response: Response | None) -> int | None:
    """The server's count minus the planned one where they differ by more than the tolerance, else None
    (also where the server stated no count)."""
    served = response.prompt_tokens if response is not None else None
    if not served:
        return None
    off = served - sample.planned_tokens
    return off if abs(off) > count_tolerance(sample.planned_tokens, sample.approximate) else None
