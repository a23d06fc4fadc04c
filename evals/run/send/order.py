"""The order samples are sent in. A needle at depth d makes the engine recompute everything after it, so
prompts that share a prefix (same task, haystack window, length, seed, mode and tokenizer: a depth sweep)
are sent deepest needle first: each then reuses the longest prefix already computed.

With concurrency c and at least c sweeps, c lanes each take whole sweeps, one sample after another, so a
sweep never races itself. With fewer sweeps than lanes that would leave lanes idle, so the sweeps are
fanned out (`fans_out`): each sweep's deepest sample (its head) goes first; once it has been served its
prefix is in the engine's cache, and the rest of the sweep (its tails) goes at once, on the head's replica.
Either way the cache bound (`expected_cached_tokens`) is the same.

The order never changes a prompt or its id: it is a scheduling choice, recorded in the manifest."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from ctxprobe.evals.records.manifest import OrderDetail
from ctxprobe.tasks.identity import sharing_key
from ctxprobe.tasks.sample import Recipe

Order = Literal["cache-aware", "as-listed"]


def send_groups(recipes: Sequence[Recipe], order: Order) -> list[list[Recipe]]:
    """Groups a lane sends one after another. `as-listed`: one recipe a group, in the suite's order."""
    if order == "as-listed":
        return [[r] for r in recipes]
    groups: dict[tuple[object, ...], list[Recipe]] = {}
    for recipe in recipes:
        groups.setdefault(sharing_key(recipe), []).append(recipe)
    return [sorted(g, key=lambda r: -r.depth) for g in groups.values()]


def fans_out(groups: Sequence[Sequence[Recipe]], order: Order, lanes: int) -> bool:
    """Whether the sweeps are fanned out: cache-aware, fewer sweeps than lanes, and a sweep with a tail."""
    return order == "cache-aware" and len(groups) < lanes and any(len(g) > 1 for g in groups)


def reachable_in_flight(groups: Sequence[Sequence[Recipe]], lanes: int, fanned: bool) -> int:
    """The most requests the order can keep in flight at once. One lane per sweep: the lanes, or the
    sweeps where fewer. Fanned out: at best every sweep with a tail has its head served and its tails in
    flight while the others' heads are still out, so a sweep of k samples counts max(1, k - 1)."""
    if not fanned:
        return min(lanes, len(groups))
    return min(lanes, sum(max(1, len(g) - 1) for g in groups))


def limit_line(groups: Sequence[Sequence[Recipe]], lanes: int, fanned: bool) -> str | None:
    """What keeps fewer than `lanes` requests in flight where lanes outnumber sweeps, in one line; None where
    nothing does (as many sweeps as lanes, or no more samples than can be in flight)."""
    reach = reachable_in_flight(groups, lanes, fanned)
    if len(groups) >= lanes or reach >= lanes or sum(len(g) for g in groups) <= reach:
        return None
    how = ("each sweep's deepest sample goes first, the rest of the sweep at once after it, on its replica"
           if fanned else "one lane a sharing group")
    sweeps = f"{len(groups)} depth sweep{'s' if len(groups) != 1 else ''}"
    return f"{sweeps} for {lanes} lanes ({how}): at most {reach} requests can be in flight at once, not {lanes}"


def order_detail(groups: Sequence[Sequence[Recipe]], order: Order, lanes: int,
                 before: OrderDetail | None = None) -> OrderDetail:
    """The manifest's account of sending `groups` with `lanes` lanes, added to that of earlier batches."""
    fanned = fans_out(groups, order, lanes)
    detail = before.model_copy() if before is not None else OrderDetail(order=order, lanes=lanes)
    detail.batches += 1
    detail.sweeps += len(groups)
    detail.samples += sum(len(g) for g in groups)
    detail.fanned_out += int(fanned)
    detail.in_flight_reachable = max(detail.in_flight_reachable, reachable_in_flight(groups, lanes, fanned))
    return detail


def expected_cached_tokens(groups: Sequence[Sequence[Recipe]], lead_tokens: int = 0) -> tuple[int, int]:
    """(prompt tokens, of which a one-slot prefix cache per lane could serve) for sending the groups as
    listed, each group's recipes one after another. A sample reuses the previous one's tokens up to the
    shallower of the two needles (approximated by depth x length); prompts of other groups share nothing
    this model counts (instructions differ by task). It is the bound the issue's figures use.

    The bound holds as well for a fanned-out sweep. Its recipes are sorted deepest first, d1 >= d2 >= ...,
    so sending them one after another, sample i (i >= 2) reuses min(d(i-1), d(i)) = d(i) of the length.
    Fanned out, no tail is sent before the head (d1) has been served, on the head's replica: the head's
    prompt is in that replica's cache, identical to the tail's up to the tail's own needle, and every tail
    reuses min(d1, d(i)) = d(i): the same tokens, summed over the same tails. The one slot holds the head
    for the whole sweep instead of each sample in turn; nothing else of the model changes."""
    total = cached = 0
    for group in groups:
        previous: Recipe | None = None
        for recipe in group:
            total += recipe.context_tokens
            if previous is not None and sharing_key(previous) == sharing_key(recipe):
                cached += lead_tokens + int(min(previous.depth, recipe.depth) / 100.0 * recipe.context_tokens)
            previous = recipe
    return total, cached
