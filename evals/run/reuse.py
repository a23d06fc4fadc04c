"""The engine's prefix reuse held against what the run's layout and send order allow.

A nested chain saves its prefill only where the engine reuses each shorter context, and a depth sweep only
where it reuses the text before the shallower needle. Engines can reuse less than that: sliding-window or
recurrent layers that keep state only at checkpoints, prefix caching off, eviction, a router that sends a
chain's requests to workers that do not hold it. The run would then cost many times its floor and score as
usual, so every run says how much of the possible reuse it got:

    reuse: 96 % of the layout's bound (62,589 cached of 65,002 it allows); computed prefill 1.05 x its floor

The bound is `send.order.expected_cached_tokens` (the `--dry-run` bound) over the lanes the run's order sends
(`prefill_cost.lanes_of`), counted on the built prompts: a nested prompt's `stream_tokens`, an independent
prompt's first needle's token offset; an engine that reuses whole blocks only is held to its blocks. The
floor is what the engine must compute with that bound: the prompt tokens less the bound. Below
`WARN_SHARE` of the bound, or above `WARN_EXCESS` times the floor, one more line names the likely causes and
the settings that restore reuse: the engine adapter's own (`reuse_causes`) after those of any deployment.

A one-slot cache per lane is the model; an engine that keeps more (vLLM's paged cache, llama-server's idle
slots in host memory) can pass 100 %. Where the engine counts what it computed (llama-server's
`/metrics`), the replies' cached tokens are held against that count too, and a disagreement is said. Where a
reply carries the engine's own count of its prompt (llama-server's `timings`: `cache_n` served from the
cache, `prompt_n` computed), the two must add up to its usage's prompt tokens and `cache_n` must be its
usage's cached tokens; a reply where they do not is counted, and one line names the first with each number
and where it was read: the engine misreports its reuse (a fault of its reporting, not the model's), and the
share above, read from the usage, is in doubt."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ctxprobe.evals.records.manifest import OrderDetail, ReuseRecord
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.evals.run.prefill_cost import lanes_of
from ctxprobe.evals.run.send.order import Order, expected_cached_tokens
from ctxprobe.runners.engines.base import REUSE_CAUSES_ANY, registered
from ctxprobe.runners.response import Response
from ctxprobe.tasks.sample import Sample

WARN_SHARE = 0.9  # below this share of the bound, the run says why
WARN_EXCESS = 1.25  # computed prefill above this multiple of the floor, the run says why
DISAGREE_SHARE = 0.01  # the engine's own computed count off the replies' by more than this share of the prompt tokens


def reuse_bound(samples: Sequence[Sample], order: Order, lanes: int, block: int | None = None) -> int:
    """The prompt tokens a one-slot prefix cache per lane can serve when `samples` are sent in `order` over
    `lanes` lanes (each sample's prompt as built)."""
    streams = {s.sample_id: s.measures["stream_tokens"] for s in samples if "stream_tokens" in s.measures}
    offsets = {
        s.sample_id: min(n.token_offset for n in s.needles) for s in samples if s.recipe.nested is None and s.needles
    }
    groups = lanes_of([s.recipe for s in samples], order, lanes)
    return expected_cached_tokens(groups, streams=streams, offsets=offsets, block=block)[1]


def measure_reuse(
    records: Sequence[SampleRecord],
    detail: OrderDetail | None,
    counters: Mapping[str, float] | None = None,
    engine: str | None = None,
    block: int | None = None,
    only_answers: bool = True,
) -> ReuseRecord | None:
    """The run's reuse record; None where no reply said its cached tokens or nothing was sent in order.
    `counters` are the engine's /metrics deltas over the run, compared where the engine's adapter names its
    computed-tokens counter and `only_answers` (no other request reached the engine)."""
    answered = [
        r
        for r in records
        if r.response is not None and r.response.cached_tokens is not None and r.response.prompt_tokens
    ]
    if not answered or detail is None:
        return None
    prompt = sum(r.response.prompt_tokens or 0 for r in answered if r.response is not None)
    cached = sum(r.response.cached_tokens or 0 for r in answered if r.response is not None)
    order: Order = "as-listed" if detail.order == "as-listed" else "cache-aware"
    bound = min(reuse_bound([r.sample for r in answered], order, detail.lanes, block), prompt)
    share = cached / bound if bound else None
    floor = prompt - bound
    computed = prompt - cached
    adapter = registered().get(engine or "")
    own = None
    if adapter is not None and adapter.computed_metric and counters and only_answers:
        value = counters.get(adapter.computed_metric)
        own = int(value) if value is not None else None
    below = (share is not None and share < WARN_SHARE) or (floor > 0 and computed > WARN_EXCESS * floor)
    timed = [r for r in answered if r.response is not None and r.response.timings is not None]
    disagreed = [
        (r.sample.sample_id, said)
        for r in timed
        if r.response is not None and (said := timings_disagreement(r.response)) is not None
    ]
    return ReuseRecord(
        prompt_tokens=prompt,
        cached_tokens=cached,
        bound_tokens=bound,
        share=share,
        computed_tokens=computed,
        floor_tokens=floor,
        block=block,
        engine_computed_tokens=own,
        timed_replies=len(timed),
        timings_disagreed=len(disagreed),
        timings_disagreement=f"sample {disagreed[0][0]}: {disagreed[0][1]}" if disagreed else None,
        below=below,
    )


def timings_disagreement(response: Response) -> str | None:
    """Where a reply's own count of its prompt (`timings`) disagrees with its usage: each number with where it
    was read; None where they agree or the reply carries no such count."""
    timings = response.timings
    if timings is None:
        return None
    said = []
    if response.cached_tokens is not None and response.cached_tokens != timings.cache_n:
        said.append(
            f"usage.prompt_tokens_details.cached_tokens {response.cached_tokens:,} but timings.cache_n "
            f"{timings.cache_n:,}"
        )
    if response.prompt_tokens is not None and timings.cache_n + timings.prompt_n != response.prompt_tokens:
        said.append(
            f"usage.prompt_tokens {response.prompt_tokens:,} but timings.cache_n + timings.prompt_n "
            f"{timings.cache_n:,} + {timings.prompt_n:,}"
        )
    return "; ".join(said) or None


def reuse_lines(record: ReuseRecord, engine: str | None, session_header: str | None = "X-Session-ID") -> list[str]:
    """What a run prints of its reuse: the share line, a disagreement of the engine's own count where there
    is one, and the causes line where reuse fell short."""
    if record.share is None:
        head = (
            f"reuse: the layout and order allow none ({record.cached_tokens:,} of {record.prompt_tokens:,} "
            "prompt tokens cached)"
        )
    else:
        head = (
            f"reuse: {100 * record.share:.0f} % of the layout's bound ({record.cached_tokens:,} cached of "
            f"{record.bound_tokens:,} it allows" + (f", in blocks of {record.block}" if record.block else "") + ")"
        )
    if record.floor_tokens > 0:
        head += f"; computed prefill {record.computed_tokens / record.floor_tokens:.2f} x its floor"
    lines = [head]
    own = record.engine_computed_tokens
    if own is not None and abs(own - record.computed_tokens) > DISAGREE_SHARE * record.prompt_tokens:
        lines.append(
            f"reuse: the engine's /metrics says it computed {own:,} prompt tokens, its replies "
            f"{record.computed_tokens:,} (sent less cached): they disagree (a request that timed out or "
            "failed is computed and not answered; behind a router /metrics is one worker's; else the "
            "replies' cached tokens are not what it reused)"
        )
    if record.timings_disagreed:
        lines.append(
            f"reuse: the engine's own count of the prompt disagrees with its usage in "
            f"{record.timings_disagreed:,} of {record.timed_replies:,} replies (first, "
            f"{record.timings_disagreement}): a fault of the engine's reporting, not the model's; the "
            "share above reads the usage"
        )
    if record.below:
        lines.append(
            f"reuse below {100 * WARN_SHARE:.0f} % of the bound or computed prefill above "
            f"{WARN_EXCESS:g} x its floor: " + likely_causes(engine, session_header)
        )
    return lines


def likely_causes(engine: str | None, session_header: str | None = "X-Session-ID") -> str:
    """The likely causes of lost reuse on `engine`, with the settings that restore it, in one line."""
    adapter = registered().get(engine or "")
    own = adapter.reuse_causes if adapter is not None else ()
    sent = () if session_header else ("this run sent no session header (--session-header none)",)
    name = engine or "an unknown engine"
    return f"likely causes ({name}): " + "; ".join((*sent, *own, *REUSE_CAUSES_ANY))
