"""Where a long prompt is assembled: haystack units up to an exact token budget, needles placed at
unit (sentence or line) boundaries at their depths, every offset recorded in tokens."""

from __future__ import annotations

import bisect
import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ctxprobe.tasks.count_cache import FIRST_LOOKAHEAD, LOOKAHEAD, Span, UnitCounts
from ctxprobe.tasks.errors import TooShort
from ctxprobe.tasks.haystack import Haystack
from ctxprobe.tasks.registry import Draft
from ctxprobe.tasks.sample import NeedleSpot

MIN_HAYSTACK_TOKENS = 64  # the least haystack a prompt may have around its needles


def tolerance(target: int) -> int:
    """How far below the target a prompt may land: 0.5% or 32 tokens, whichever is larger."""
    return max(32, target // 200)


def safety_margin(target: int) -> int:
    """Tokens kept free for boundary effects of summing per-unit counts (measured well under this)."""
    return max(2, target // 2000)


@dataclass(frozen=True)
class Assembled:
    prompt: str
    planned_tokens: int
    needles: list[NeedleSpot]


def assemble(draft: Draft, counts: UnitCounts, target: int, lead: int | None = None, window: int = 0) -> Assembled:
    """Fill `target` tokens: head + haystack with needles + tail, never above the target. `lead` is what
    the endpoint adds around the text (BOS, or the chat template's tokens; default: the counter's BOS);
    token offsets count it as coming first. The haystack text starts at unit `window`."""
    haystack, counter = counts.haystack, counts.counter
    needle_units = [n.text if n.unit else haystack.wrap_needle(n.text) for n in draft.needles]
    head_n, tail_n, *needle_n = counts.count_texts([draft.head, draft.tail, *needle_units])
    lead = counter.bos_tokens if lead is None else lead
    frame = lead + head_n + tail_n + sum(needle_n)
    budget = target - frame - safety_margin(target) - opening_cost(draft, counts, needle_units, window)
    if budget < MIN_HAYSTACK_TOKENS:
        raise TooShort(
            f"length {target} is too small for this task: its question and needles alone take {frame} tokens "
            f"(at least {frame + MIN_HAYSTACK_TOKENS + safety_margin(target)} needed)"
        )
    span, units = _select_units(counts, window, budget, tolerance(target))
    if draft.shuffle_haystack:
        units = shuffled_units(units)
    cum = np.concatenate(([0], np.cumsum(span.counts[np.asarray(units, dtype=np.int64) - span.start], dtype=np.int64)))
    hay_tokens = int(cum[-1])

    # Needle i goes before selected unit `slot[i]` (slot == len(units) means at the end).
    slots = [nearest_boundary(cum, n.depth / 100.0 * hay_tokens) for n in draft.needles]
    unit_texts = list(_unit_texts(haystack, units))  # a copy: the first may be rewritten
    if draft.context_opening is not None:
        hay_tokens = _open_context(draft.context_opening, counts, slots, needle_units, needle_n, unit_texts, cum)
        frame = lead + head_n + tail_n + sum(needle_n)
    order = sorted(range(len(slots)), key=lambda i: (slots[i], i))
    parts: list[str] = [draft.head]
    char_pos = len(draft.head)
    tok_pos = lead + head_n
    spots: list[NeedleSpot | None] = [None] * len(slots)
    total_hay = hay_tokens + sum(needle_n)
    cursor = 0
    inserted_tokens = 0
    for i in order:
        chunk = unit_texts[cursor : slots[i]]
        parts.extend(chunk)
        char_pos += sum(map(len, chunk))
        cursor = slots[i]
        offset = tok_pos + int(cum[cursor]) + inserted_tokens
        spots[i] = NeedleSpot(
            role=draft.needles[i].role,
            text=needle_units[i],
            answer=draft.needles[i].answer,
            char_offset=char_pos,
            token_offset=offset,
            depth_pct=round(100.0 * (int(cum[cursor]) + inserted_tokens) / total_hay, 3),
        )
        parts.append(needle_units[i])
        char_pos += len(needle_units[i])
        inserted_tokens += needle_n[i]
    parts.extend(unit_texts[cursor:])
    parts.append(draft.tail)
    prompt = "".join(parts)
    planned = frame + hay_tokens
    return Assembled(prompt=prompt, planned_tokens=planned, needles=[s for s in spots if s is not None])


def opening_cost(draft: Draft, counts: UnitCounts, needle_units: list[str], window: int) -> int:
    """The most tokens the context opening can add to whichever piece comes first (the window's first
    unit, or a needle at depth 0), kept out of the haystack's budget."""
    if draft.context_opening is None:
        return 0
    first = [*counts.haystack.units(window, window + 1), *needle_units]
    opened = [reopened(draft.context_opening, text) for text in first]
    before, after = counts.count_texts(first), counts.count_texts(opened)
    return max(0, *(a - b for a, b in zip(after, before)))


def reopened(opening: str, text: str) -> str:
    return opening + text.lstrip()


def _open_context(
    opening: str,
    counts: UnitCounts,
    slots: list[int],
    needle_units: list[str],
    needle_n: list[int],
    unit_texts: list[str],
    cum: np.ndarray,
) -> int:
    """Write the first piece after the head with `opening` for its separator, in place (the needle's text
    and count, or the first unit's text and the cumulative counts); returns the haystack's new token total."""
    first_needles = [i for i, slot in enumerate(slots) if slot == 0]
    if first_needles:
        i = first_needles[0]
        needle_units[i] = reopened(opening, needle_units[i])
        needle_n[i] = counts.count_texts([needle_units[i]])[0]
    elif unit_texts:
        unit_texts[0] = reopened(opening, unit_texts[0])
        cum[1:] += counts.count_texts([unit_texts[0]])[0] - (cum[1] - cum[0])
    return int(cum[-1])


def _select_units(counts: UnitCounts, window: int, budget: int, tol: int) -> tuple[Span, list[int]]:
    """The longest run of units from the window's start within budget; if that leaves more than the tolerance
    unused, add later units that still fit (skipping ones too long for the gap), looking at most `LOOKAHEAD`
    units past the run. Units past the run are counted only as far as the search looks (nine prompts in ten
    stop within 4), not all `LOOKAHEAD` of them up front: the same units are chosen either way. Returns the
    span of counts that holds every chosen unit."""
    span = counts.span(window, budget, FIRST_LOOKAHEAD)
    n = bisect.bisect_right(span.cumsum, budget) - 1
    chosen = list(range(n))
    gap = budget - int(span.cumsum[n])
    i = n
    limit = n + LOOKAHEAD
    while gap > tol // 4 and i < limit:
        if i >= len(span.counts):  # look further: count twice as far past the run, up to LOOKAHEAD units
            span = counts.span(window, budget, min(LOOKAHEAD, 2 * (i - n)))
        c = int(span.counts[i])
        if c <= gap:
            chosen.append(i)
            gap -= c
        i += 1
    return span, [span.start + u for u in chosen]


def _unit_texts(haystack: Haystack, units: list[int]) -> list[str]:
    if not units:
        return []
    first, last = min(units), max(units)
    block = haystack.units(first, last + 1)
    if units == list(range(first, last + 1)):
        return block
    return [block[u - first] for u in units]


def shuffled_units(units: list[int]) -> list[int]:
    """The units in a random order: each unit's place is a hash of its index, so a depth sweep, whose prompts
    select the same units up to one at the end, has the same shuffled haystack as it has the same coherent one."""
    return sorted(units, key=lambda u: hashlib.sha256(b"shuffled:%d" % u).digest())


def nearest_boundary(cum: np.ndarray, tokens: float) -> int:
    """The unit boundary whose token position is closest to `tokens`."""
    j = int(np.searchsorted(cum, tokens))
    if j >= len(cum):
        return len(cum) - 1
    if j > 0 and tokens - cum[j - 1] <= cum[j] - tokens:
        return j - 1
    return j


@lru_cache(maxsize=256)
def whole_word(text: str) -> re.Pattern[str]:
    """`text` as a whole word: no letter or digit right before or after it."""
    return re.compile(r"(?<![0-9A-Za-z])" + re.escape(text) + r"(?![0-9A-Za-z])")
