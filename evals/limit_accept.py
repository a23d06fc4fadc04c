"""The accepted context length: the longest prompt the endpoint actually takes, found with real requests.
Grow geometrically until a too-long rejection, then bisect on token length; a limit stated in the
rejection message is tried first. Errors other than too-long end the search and are reported."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Awaitable, Callable

from pydantic import BaseModel

from tasks.assemble import tolerance


@dataclass(frozen=True)
class Probe:
    """One request: the planned prompt length, and whether the endpoint took it."""

    planned_tokens: int
    outcome: str  # "accepted" | "too_long" | "error"
    prompt_tokens: int | None = None  # as the server counted an accepted prompt
    stated_limit: int | None = None  # "maximum context length is N tokens" etc.
    detail: str = ""


class AcceptedResult(BaseModel):
    accepted_tokens: int | None  # longest accepted prompt (server's count where it gave one)
    rejected_tokens: int | None  # shortest prompt rejected as too long
    max_tokens: int  # the answer room every probe asked for
    stated_limit: int | None
    stopped_by_error: str | None
    requests: int
    probes: list[dict[str, object]]


Try = Callable[[int], Awaitable[Probe]]


async def find_accepted(try_length: Try, *, start: int, max_length: int, max_tokens: int,
                        configured: int | None = None, precision: float = 0.01) -> AcceptedResult:
    """`try_length(n)` sends a prompt of about n tokens (asking for `max_tokens`) and says what happened."""
    lo: Probe | None = None
    hi: Probe | None = None
    probes: list[Probe] = []
    stated: int | None = None
    error: str | None = None
    tried: set[int] = set()
    nxt = min(max_length, configured - max_tokens) if configured and configured > max_tokens else min(start, max_length)
    while nxt not in tried and nxt > 0:
        tried.add(nxt)
        probe = await try_length(nxt)
        probes.append(probe)
        if probe.outcome == "error":
            error = probe.detail
            break
        if probe.outcome == "accepted":
            lo = probe if lo is None or probe.planned_tokens > lo.planned_tokens else lo
        else:
            hi = probe if hi is None or probe.planned_tokens < hi.planned_tokens else hi
            stated = probe.stated_limit or stated
        nxt = _next(lo, hi, stated, max_tokens, max_length, precision)
    return AcceptedResult(
        accepted_tokens=(lo.prompt_tokens or lo.planned_tokens) if lo else None,
        rejected_tokens=hi.planned_tokens if hi else None,
        max_tokens=max_tokens, stated_limit=stated, stopped_by_error=error, requests=len(probes),
        probes=[p.__dict__ for p in probes],
    )


def _next(lo: Probe | None, hi: Probe | None, stated: int | None, max_tokens: int, max_length: int,
          precision: float) -> int:
    """The next length to try, or one already tried (which ends the search)."""
    low = lo.planned_tokens if lo else 0
    if hi is None:
        return min(max_length, max(low * 2, 1))  # still growing (returns `low` at max_length: done)
    high = hi.planned_tokens
    if stated is not None:
        guess = stated - max_tokens
        if low < guess < high:
            return guess
    if high - low <= max(tolerance(high), int(precision * max(low, 1))):  # prompts land within tolerance
        return low  # bracket closed
    return (low + high) // 2
