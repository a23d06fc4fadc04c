"""The order samples are sent in. A needle at depth d makes the engine recompute everything after it, so
prompts that share a prefix (same task, haystack window, length, seed, mode and tokenizer: a depth sweep)
are sent deepest needle first: each then reuses the longest prefix already computed.

A chain of the nested layout (one task and seed over every length and depth, tasks/nested.py) is one
haystack stream whose first tokens make every length's prompt, so it is sent in ascending length, the depths
of one length back to back: each prompt finds the whole shorter context already computed and adds only its
own stretch of the stream and its question, and each context token is prefilled once.

With concurrency c and at least c sweeps (or chains), c lanes each take whole groups, one sample after
another, so a group never races itself. With fewer sweeps than lanes that would leave lanes idle, so the
sweeps are fanned out (`fans_out`): each sweep's deepest sample (its head) goes first; once it has been
served its prefix is in the engine's cache, and the rest of the sweep (its tails) goes at once, on the head's
replica. Either way the cache bound (`expected_cached_tokens`) is the same. A chain is never fanned out: its
lengths build on one another, so it goes whole on one lane (a batch that holds one is not fanned out), chains
in parallel lanes as the concurrency allows. Every request of a group carries its `chain_key` (the session
header, runners/endpoint.py) and keeps to one replica.

The order never changes a prompt or its id: it is a scheduling choice, recorded in the manifest."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from ctxprobe.evals.records.manifest import OrderDetail
from ctxprobe.evals.run.send.prefix_share import ChainParts, shared_tokens
from ctxprobe.tasks.identity import sharing_key
from ctxprobe.tasks.sample import Recipe

Order = Literal["cache-aware", "as-listed"]

# Tokens at the end of a nested prompt that the next prompt of its chain does not share, where the built
# prompt's `measures["stream_tokens"]` is not at hand: the cell's question and answer prefix (and the length's
# few tokens of fill). The built-in families' tails measure 18 to 62 tokens (niah, recall, latent at 1K-16K),
# so the bound stays a bound.
QUESTION_ALLOWANCE = 96


def _nested(group: Sequence[Recipe]) -> bool:
    return bool(group) and group[0].nested is not None


def _within(recipe: Recipe) -> tuple[float, ...]:
    """A recipe's place in its group: a chain in ascending length (the depths of one length back to back, in
    the order given: a stable sort), a depth sweep deepest needle first."""
    return (recipe.context_tokens,) if recipe.nested is not None else (-recipe.depth,)


def send_groups(recipes: Sequence[Recipe], order: Order) -> list[list[Recipe]]:
    """Groups a lane sends one after another. `as-listed`: one recipe a group, in the suite's order."""
    if order == "as-listed":
        return [[r] for r in recipes]
    groups: dict[tuple[object, ...], list[Recipe]] = {}
    for recipe in recipes:
        groups.setdefault(sharing_key(recipe), []).append(recipe)
    return [sorted(g, key=_within) for g in groups.values()]


def fans_out(groups: Sequence[Sequence[Recipe]], order: Order, lanes: int) -> bool:
    """Whether the sweeps are fanned out: cache-aware, fewer sweeps than lanes, a sweep with a tail, and no
    chain of the nested layout among them (a chain goes whole on one lane)."""
    return (
        order == "cache-aware"
        and len(groups) < lanes
        and any(len(g) > 1 for g in groups)
        and not any(_nested(g) for g in groups)
    )


def reachable_in_flight(groups: Sequence[Sequence[Recipe]], lanes: int, fanned: bool) -> int:
    """The most requests the order can keep in flight at once. One lane per sweep: the lanes, or the
    sweeps where fewer. Fanned out: at best every sweep with a tail has its head served and its tails in
    flight while the others' heads are still out, so a sweep of k samples counts max(1, k - 1)."""
    if not fanned:
        return min(lanes, len(groups))
    return min(lanes, sum(max(1, len(g) - 1) for g in groups))


def _groups_named(groups: Sequence[Sequence[Recipe]]) -> str:
    chains = sum(1 for g in groups if _nested(g))
    n = len(groups)
    noun = "chain" if chains == n else "depth sweep" if chains == 0 else "sharing group"
    return f"{n} {noun}{'s' if n != 1 else ''}"


def limit_line(groups: Sequence[Sequence[Recipe]], lanes: int, fanned: bool) -> str | None:
    """What keeps fewer than `lanes` requests in flight where lanes outnumber sweeps, in one line; None where
    nothing does (as many sweeps as lanes, or no more samples than can be in flight)."""
    reach = reachable_in_flight(groups, lanes, fanned)
    if len(groups) >= lanes or reach >= lanes or sum(len(g) for g in groups) <= reach:
        return None
    how = (
        "each sweep's deepest sample goes first, the rest of the sweep at once after it, on its replica"
        if fanned
        else "a chain goes whole on one lane, in ascending length"
        if any(_nested(g) for g in groups)
        else "one lane a sharing group"
    )
    return (
        f"{_groups_named(groups)} for {lanes} lanes ({how}): at most {reach} requests can be in flight at "
        f"once, not {lanes}"
    )


def order_detail(
    groups: Sequence[Sequence[Recipe]], order: Order, lanes: int, before: OrderDetail | None = None
) -> OrderDetail:
    """The manifest's account of sending `groups` with `lanes` lanes, added to that of earlier batches."""
    fanned = fans_out(groups, order, lanes)
    detail = before.model_copy() if before is not None else OrderDetail(order=order, lanes=lanes)
    detail.batches += 1
    detail.sweeps += len(groups)
    detail.chains += sum(1 for g in groups if _nested(g)) if order == "cache-aware" else 0
    detail.samples += sum(len(g) for g in groups)
    detail.fanned_out += int(fanned)
    detail.in_flight_reachable = max(detail.in_flight_reachable, reachable_in_flight(groups, lanes, fanned))
    return detail


def stream_tokens(recipe: Recipe, streams: Mapping[str, float] | None = None) -> int:
    """The tokens a nested prompt shares with every longer prompt of its chain: its built sample's
    `measures["stream_tokens"]` where `streams` (by sample id) has it, else its length less
    `QUESTION_ALLOWANCE`."""
    known = streams.get(recipe.sample_id()) if streams else None
    return int(known) if known is not None else max(0, recipe.context_tokens - QUESTION_ALLOWANCE)


def expected_cached_tokens(
    groups: Sequence[Sequence[Recipe]],
    lead_tokens: int = 0,
    streams: Mapping[str, float] | None = None,
    offsets: Mapping[str, int] | None = None,
    block: int | None = None,
) -> tuple[int, int]:
    """(prompt tokens, of which a one-slot prefix cache per lane could serve) for sending the groups as
    listed, each group's recipes one after another. A sample reuses the previous one's tokens up to the
    shallower of the two needles (approximated by depth x length); prompts of other groups share nothing
    this model counts (instructions differ by task). It is the bound the issue's figures use.

    Two consecutive prompts of one nested chain share the shorter one's stream (`stream_tokens`: measured on
    built samples where `streams` gives them by sample id, else the length less a question allowance; the
    model of what prompts share is `prefix_share`'s, the dry run's too, with no fill counted). Sent
    in ascending length, every prompt reuses all of the previous one's context: the chain's uncached tokens
    are its longest context and every question, each context token prefilled once.

    The bound holds as well for a fanned-out sweep. Its recipes are sorted deepest first, d1 >= d2 >= ...,
    so sending them one after another, sample i (i >= 2) reuses min(d(i-1), d(i)) = d(i) of the length.
    Fanned out, no tail is sent before the head (d1) has been served, on the head's replica: the head's
    prompt is in that replica's cache, identical to the tail's up to the tail's own needle, and every tail
    reuses min(d1, d(i)) = d(i): the same tokens, summed over the same tails. The one slot holds the head
    for the whole sweep instead of each sample in turn; nothing else of the model changes.

    Built prompts say more where they are at hand: `offsets` (by sample id) gives an independent prompt's
    first needle's token offset, where it stops sharing; an engine that reuses whole blocks of `block` tokens
    only (vLLM) serves each shared prefix rounded down to a block."""
    chain = ChainParts(lambda recipe: stream_tokens(recipe, streams))
    total = cached = 0
    for group in groups:
        previous: Recipe | None = None
        for recipe in group:
            total += recipe.context_tokens
            shared = shared_tokens(previous, recipe, chain, lead_tokens, offsets)
            cached += shared - shared % block if block else shared
            previous = recipe
    return total, cached
