"""The accepted context length: the longest prompt the endpoint actually takes, found with real requests.

Grow geometrically until a too-long rejection, then bisect on token length. Where a rejection states
the limit N (every engine in docs/ENGINES.md does), N - answer_room is tried directly, so against a known
engine the search takes two requests: one accepted prompt and one cheap rejection. A server error (5xx)
is an upper bound like a rejection (an engine may state a larger limit than it holds, and fail between the
two), so it narrows the search instead of ending it; other errors end the search and are reported. Every probe asks for `answer_room` answer tokens; the
accepted length reported is the longest prompt that leaves that room.

Every length is stated in one count, ctxprobe's plan (the token counter's), for the prompts taken and
rejected alike; the server's own counts (usage of a taken prompt, the size a rejection states) are kept
beside them, so a counter that is not the served model's shows as a difference, not as a taken prompt
longer than a rejected one."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass

from ctxprobe.evals.records.limit import AcceptedResult
from ctxprobe.tasks.assemble import tolerance


@dataclass(frozen=True)
class Probe:
    """One request: the planned prompt length, and whether the endpoint took it."""

    planned_tokens: int
    outcome: str  # "accepted" | "too_long" | "failed" (a 5xx: an upper bound) | "error" (ends the search)
    prompt_tokens: int | None = None  # as the server counted the prompt (usage, or what a rejection states)
    prompt_at_least: int | None = None  # a lower bound of it, where a rejection states only that (vLLM 0.32)
    stated_limit: int | None = None  # "maximum context length is N tokens" etc.
    detail: str = ""


Try = Callable[[int], Awaitable[Probe]]


async def find_accepted(
    try_length: Try, *, start: int, max_length: int, max_tokens: int, configured: int | None = None
) -> AcceptedResult:
    """`try_length(n)` sends a prompt of about n tokens (asking for `max_tokens`) and says what happened."""
    probes: list[Probe] = []
    tried: set[int] = set()
    first = configured - max_tokens if configured and configured > max_tokens else start
    nxt: int | None = min(first, max_length)
    while nxt is not None and nxt > 0 and nxt not in tried:
        tried.add(nxt)
        probe = await try_length(nxt)
        probes.append(probe)
        if probe.outcome == "error":
            break
        nxt = _next(probes, max_tokens, max_length)
    return _result(probes, max_tokens, configured)


def _bounds(probes: list[Probe]) -> tuple[Probe | None, Probe | None, int | None]:
    taken = [p for p in probes if p.outcome == "accepted"]
    rejected = [p for p in probes if p.outcome == "too_long"]
    bounds = [p for p in probes if p.outcome in ("too_long", "failed")]
    lo = max(taken, key=lambda p: p.planned_tokens, default=None)
    hi = min(bounds, key=lambda p: p.planned_tokens, default=None)
    stated = next((p.stated_limit for p in rejected if p.stated_limit), None)
    return lo, hi, stated


def _next(probes: list[Probe], max_tokens: int, max_length: int) -> int | None:
    """The next length to try; None (or one already tried) ends the search."""
    lo, hi, stated = _bounds(probes)
    low = lo.planned_tokens if lo else 0
    if stated is not None and stated > max_tokens:
        goal = stated - max_tokens
        if low >= goal - tolerance(goal):
            return None  # confirmed: a prompt leaving the answer room was taken
        if hi is None or goal < hi.planned_tokens:
            return goal
    if hi is None:
        return min(max_length, max(2 * low, 1))  # still growing; at max_length this repeats and ends
    high = hi.planned_tokens
    if high - low <= max(tolerance(high), high // 100):  # prompts land within tolerance of their target
        return None
    return (low + high) // 2


def _result(probes: list[Probe], max_tokens: int, configured: int | None) -> AcceptedResult:
    lo, hi, stated = _bounds(probes)
    error = next((p.detail for p in probes if p.outcome == "error"), None)
    largest = lo.planned_tokens if lo else None
    accepted, basis = largest, "the longest prompt taken"
    limit, said = (stated, "the limit the rejection stated") if stated else (configured, "the configured length")
    if largest is not None and limit is not None and largest > limit - max_tokens:
        accepted = limit - max_tokens
        basis = f"{said} ({limit:,}) minus the answer room ({max_tokens}); longer prompts were taken"
    elif largest is not None and hi is None:
        basis = "the longest prompt taken; nothing longer was tried or rejected"
    elif hi is not None and hi.outcome == "failed":
        basis = f"the longest prompt taken; a prompt of {hi.planned_tokens:,} tokens failed ({hi.detail[:80]})"
    if stated and configured and stated != configured:
        basis += f"; the engine states {stated:,} tokens but was configured with {configured:,}"
    return AcceptedResult(
        accepted_tokens=accepted,
        basis=basis,
        largest_taken=largest,
        rejected_tokens=hi.planned_tokens if hi else None,
        largest_taken_served=lo.prompt_tokens if lo else None,
        rejected_served=hi.prompt_tokens if hi else None,
        rejected_served_at_least=hi.prompt_at_least if hi else None,
        max_tokens=max_tokens,
        stated_limit=stated,
        stopped_by_error=error,
        requests=len(probes),
        probes=[asdict(p) for p in probes],
    )
