"""The nested layout: one haystack stream per (task, seed), every length its first tokens.

In the independent layout every (length, depth, seed) cell is a prompt of its own, so a prefix cache can
share only the text before a depth sweep's shallowest needle. In the nested layout a chain (one task and seed)
has one haystack stream holding a needle for every (length, depth) cell of its grid, each at its depth of its
own length; the prompt of length L is the instructions, the stream's first tokens (with every needle that falls
inside them) and one cell's question. One prefill of the longest context then serves every shorter length, and
every depth of a length is the same context with another question: the chain's requests, sent in ascending
length on one lane, compute each context token once, plus the questions.

Each prompt lands within the exact-length tolerance of the independent layout: the stream is cut at the last
unit that fits the length's budget (the same for every depth of the length, so its questions share the whole
context), and the gap left is filled with later units that fit (`fill`), after the shared part."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import numpy as np

from ctxprobe.tasks.assemble import (
    MIN_HAYSTACK_TOKENS,
    nearest_boundary,
    opening_cost,
    reopened,
    safety_margin,
    tolerance,
    whole_word,
)
from ctxprobe.tasks.count_cache import LOOKAHEAD, Span, UnitCounts
from ctxprobe.tasks.draft import Draft
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.families.vocab import drawn_apart
from ctxprobe.tasks.haystack.words import WORD, words_of
from ctxprobe.tasks.identity import needle_key
from ctxprobe.tasks.registry import get_family, validate_params
from ctxprobe.tasks.sample import NeedleSpot, NestedGrid, Recipe, Sample, seed_window, sha256_text
from ctxprobe.tasks.sized import is_sized
from ctxprobe.tasks.token_counter import TokenCounter

T = TypeVar("T")


class ChainBuilder(Protocol):
    """What a chain is laid out with: the builder's counter, its haystacks' unit counts and the chain's
    parts laid out once for all its cells (`tasks.build.PromptBuilder` is one; it imports this module)."""

    counter: TokenCounter

    def unit_counts(self, haystack_spec: str) -> UnitCounts: ...

    def chain_layout(
        self, recipe: Recipe, lead: int, lay_out: Callable[[ChainBuilder, Recipe, int], T], part: str = "layout"
    ) -> T: ...


MAX_ATTEMPTS = 32  # a cell is redrawn when its keys or values meet an earlier cell's, or the haystack holds one
PROBES = 4  # a chain of one cell: the draws apart from it that must not all ask its needle
PLACEMENT_ROUNDS = 16  # rounds of placing needles by their lengths' haystacks until nothing moves
Cell = tuple[int, float]  # (length, depth)


def check_nests(family: str, params: dict[str, Any], cells: int | None = None) -> None:
    """Refuse, in one line, a task the nested layout cannot lay out, or whose chain cannot hold `cells`
    (length, depth) cells: a family that draws from a finite pool says how many cells a chain of its
    parameters always holds (`nested_capacity(params)`), so the grid decides, never the seed's luck."""
    found = get_family(family)
    capacity = getattr(found, "nested_capacity", None)
    most = capacity(validate_params(found, params)) if cells is not None and capacity is not None else None
    if most is not None and cells is not None and cells > most:
        raise UserError(
            f"layout nested: {family} ({_shown(params)}) draws each cell's needles apart from a "
            f"finite pool, so a chain holds at most {most} cells, and this grid has {cells} "
            "(lengths x depths): give fewer lengths or depths, or layout independent"
        )
    if is_sized(found):
        raise UserError(
            f"layout nested: family {family} sizes its whole document to each length, so no length's "
            "prompt is the start of a longer one: give it layout independent"
        )
    if params.get("question_position", "end") != "end":
        raise UserError(
            f"layout nested: {family}'s question stands at the {params['question_position']} "
            "(question_position), before the haystack, so its prompts share no prefix: put it at the end"
        )
    if params.get("haystack_order", "coherent") != "coherent":
        raise UserError(
            f"layout nested: {family}'s haystack is shuffled per prompt (haystack_order), so no length's "
            "haystack is the start of a longer one: keep it coherent"
        )


def nested_recipes(
    task: Recipe,
    lengths: Sequence[int],
    depths: Sequence[float],
    seeds: Sequence[int],
    block: int | None = None,
    chains: tuple[Sequence[int], Sequence[float]] | None = None,
) -> list[Recipe]:
    """The recipes of a task's chains, one chain per seed, each in the order it is sent: ascending length,
    the depths of one length back to back. `task` gives every field but the length, depth, seed and window;
    `block`, the engine's reuse unit where it reuses whole blocks only (`NestedGrid.block`); `chains`, the
    lengths and depths of the chains' grid where they are not the task's own (absent questions asked in the
    chains of their present twin: `Suite.chain_grid`): the task's lengths and depths then pick the cells asked."""
    grid_lengths, grid_depths = chains or (lengths, depths)
    grid = NestedGrid(lengths=tuple(sorted(set(grid_lengths))), depths=tuple(sorted(set(grid_depths))), block=block)
    check_nests(task.family, task.params, len(grid.lengths) * len(grid.depths))
    if not set(lengths) <= set(grid.lengths) or not set(depths) <= set(grid.depths):
        raise UserError(
            f"layout nested: {task.family} ({_shown(task.params)}) asks lengths or depths that the chains "
            "it is asked in do not hold: give it lengths and depths among theirs"
        )
    fields = task.model_dump(exclude={"context_tokens", "depth", "seed", "window", "nested"})
    return [
        Recipe(
            **fields,
            context_tokens=length,
            depth=depth,
            seed=seed,
            window=seed_window(seed, grid.lengths[-1]),
            nested=grid,
        )
        for seed in seeds
        for length in grid.lengths
        if length in lengths
        for depth in depths
    ]


@dataclass(frozen=True)
class _Needle:
    """One needle of the chain's stream: the cell it belongs to, its text as a unit, its tokens, and the unit
    boundary it stands at (before stream unit `slot`)."""

    cell: Cell
    index: int  # which of its draft's needles
    text: str
    tokens: int
    slot: int


@dataclass(frozen=True)
class ChainLayout:
    """Where everything of one chain stands: the drafts of its cells, its needles' slots, each length's cut
    (the stream units it holds) and fill (later units that close the gap to the length's target)."""

    head: str
    head_tokens: int
    lead: int
    opening: str | None
    opening_delta: int  # the tokens the opening adds to the first piece (0 without one)
    span: Span
    drafts: dict[Cell, Draft]
    tails: dict[Cell, int]
    needles: tuple[_Needle, ...]  # in stream order
    cuts: dict[int, int]
    fills: dict[int, tuple[int, ...]]  # absolute unit indices
    stream_tokens: dict[int, int]  # the stream's tokens through each length's cut (needles and opening included)


def build_nested(
    builder: ChainBuilder, recipe: Recipe, lead: int, question: Callable[[ChainLayout], tuple[Draft, int]] | None = None
) -> Sample:
    """The sample of one cell of a nested chain: the chain's head, its stream's first units with every needle
    that stands among them, the length's fill, and the cell's question (or the draft and tail tokens `question`
    gives for the layout: an absent question, tasks/nested_absent.py)."""
    assert recipe.nested is not None
    layout = builder.chain_layout(recipe, lead, chain_layout)
    length, cell = recipe.context_tokens, (recipe.context_tokens, float(recipe.depth))
    if cell not in layout.drafts:
        raise UserError(
            f"sample {recipe.sample_id()}: length {length} and depth {recipe.depth:g} are not in its chain's grid"
        )
    haystack = builder.unit_counts(recipe.haystack).haystack
    cut, start = layout.cuts[length], layout.span.start
    units = haystack.units(start, start + cut) if cut else []
    fill = [haystack.units(u, u + 1)[0] for u in layout.fills[length]]
    draft, tail_tokens = (layout.drafts[cell], layout.tails[cell]) if question is None else question(layout)
    inside = [n for n in layout.needles if n.slot <= cut]
    hay_tokens = (
        layout.stream_tokens[length] - layout.lead - layout.head_tokens + _tokens(layout.span, layout.fills[length])
    )
    parts: list[str] = [layout.head]
    spots: list[NeedleSpot] = []
    chars, tokens, cursor = len(layout.head), 0, 0

    def opened(text: str) -> str:
        """The first piece after the head, with the family's context opening for its separator."""
        nonlocal tokens
        if layout.opening is None or len(parts) > 1:
            return text
        tokens += layout.opening_delta
        return reopened(layout.opening, text)

    for needle in [*inside, None]:
        stop = cut if needle is None else needle.slot
        chunk = units[cursor:stop]
        if chunk:
            tokens += int(layout.span.cumsum[stop] - layout.span.cumsum[cursor])
            chunk = [opened(chunk[0]), *chunk[1:]]
            parts.extend(chunk)
            chars += sum(map(len, chunk))
        cursor = stop
        if needle is None:
            break
        offset = tokens  # where the needle starts: before its opening, when it comes first
        text = opened(needle.text)
        spots.append(
            NeedleSpot(
                role=draft.needles[needle.index].role if needle.cell == cell else "distractor",
                text=text,
                answer=layout.drafts[needle.cell].needles[needle.index].answer,
                char_offset=chars,
                token_offset=layout.lead + layout.head_tokens + offset,
                depth_pct=round(100.0 * offset / hay_tokens, 3),
            )
        )
        parts.append(text)
        chars += len(text)
        tokens += needle.tokens
    parts.extend(fill)
    parts.append(draft.tail)
    prompt = "".join(parts)
    planned = layout.stream_tokens[length] + _tokens(layout.span, layout.fills[length]) + tail_tokens
    return Sample(
        sample_id=recipe.sample_id(),
        recipe=recipe,
        prompt=prompt,
        prompt_sha256=sha256_text(prompt),
        planned_tokens=planned,
        approximate=builder.counter.approximate,
        question=draft.question,
        answer_prefix=draft.answer_prefix,
        max_tokens=draft.max_tokens,
        expected=draft.expected,
        needles=sorted(spots, key=lambda s: (s.role != "target", s.token_offset)),
        measures={
            **draft.measures,
            "stream_tokens": float(layout.stream_tokens[length]),
            "needles_held": float(len(spots)),
        },
    )


def chain_layout(builder: ChainBuilder, recipe: Recipe, lead: int) -> ChainLayout:
    """Draw every cell's draft apart from the earlier cells' and from the chain's haystack, then lay the chain out."""
    grid = recipe.nested
    assert grid is not None
    drafts = draw_cells(recipe, haystack_fits(builder, recipe), f" in haystack {recipe.haystack!r}")
    return _lay_out(drafts, builder.unit_counts(recipe.haystack), lead, recipe.window, grid.block)


def haystack_fits(builder: ChainBuilder, recipe: Recipe) -> Callable[[set[str]], bool]:
    """Whether a draw's keys and values are none of the chain's haystack's words (all it may ever hold)."""
    grid = recipe.nested
    assert grid is not None
    counts = builder.unit_counts(recipe.haystack)
    span = counts.span(recipe.window, grid.lengths[-1], LOOKAHEAD)  # more than any length's stream and fill
    units = counts.haystack.units(span.start, span.start + len(span.counts))
    haystack, words = "\x00".join(units), words_of(counts.haystack, span.start, units)
    return lambda own: not _in_haystack(own, haystack, words)


def draw_cells(
    recipe: Recipe, fits: Callable[[set[str]], bool] = lambda own: True, where: str = ""
) -> dict[Cell, Draft]:
    """Every cell's draft of a chain, in grid order, each redrawn until its keys and values are none of an
    earlier cell's and `fits` (the chain's haystack holds none of them). With no haystack (`fits` left out)
    this is what a run checks before anything is made: the refusals that depend on the drafts alone (a family
    that asks the same needle whatever the draw, cells that cannot be drawn apart, other instructions per
    question) come before the run folder, not midway through sending."""
    grid = recipe.nested
    assert grid is not None
    family = get_family(recipe.family)
    params = validate_params(family, recipe.params)
    check_nests(recipe.family, params.model_dump(mode="json"), len(grid.lengths) * len(grid.depths))
    chain = chain_seed(recipe)
    taken: set[str] = set()
    drafts: dict[Cell, Draft] = {}
    for cell in [(length, depth) for length in grid.lengths for depth in grid.depths]:
        for attempt in range(MAX_ATTEMPTS):
            draft = draw(family, params, recipe, cell, taken, f"{chain}#{cell[0]}#{cell[1]!r}#{attempt}")
            own = {*draft.unique, *(n.answer for n in draft.needles)}
            first = next(iter(drafts.values()), None)
            # a second cell whose first draw asks the first cell's needle; a chain of one cell: other draws
            if attempt == 0 and all(
                _same_answers(draft, other)
                for other in (
                    [first]
                    if first is not None
                    else [draw(family, params, recipe, cell, own, f"{chain}#apart#{n}") for n in range(PROBES)]
                )
            ):
                raise UserError(
                    f"layout nested: family {recipe.family} asks the same needle however it is drawn, "
                    "and a chain needs a needle of its own per (length, depth), even a chain of one "
                    "cell: give it layout independent"
                )
            if own.isdisjoint(taken) and fits(own):
                break
        else:
            raise UserError(
                f"could not draw distinct needles for every cell of a nested chain of {recipe.family}"
                f"{where} after {MAX_ATTEMPTS} tries (the family draws from too few keys or values for "
                "the grid, or the haystack holds them): give fewer depths or lengths"
            )
        drafts[cell] = draft
        taken |= own
    _same_frame(recipe.family, drafts)
    return drafts


def chain_seed(recipe: Recipe) -> str:
    """The text a chain's draws are seeded from: its needle key at its longest length."""
    assert recipe.nested is not None
    return needle_key(recipe.model_copy(update={"context_tokens": recipe.nested.lengths[-1], "depth": 0.0}))


def draw(family: Any, params: Any, recipe: Recipe, cell: Cell, taken: set[str], seed_text: str) -> Draft:
    with drawn_apart(taken):
        return family.draft(params, cell[1], recipe.mode, random.Random(hashlib.sha256(seed_text.encode()).digest()))


def _shown(params: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in params.items() if k in ("kind", "hops", "chains", "variant")) or "defaults"


def _same_answers(a: Draft, b: Draft) -> bool:
    return [n.answer for n in a.needles] == [n.answer for n in b.needles]


def _in_haystack(texts: set[str], haystack: str, words: set[str]) -> bool:
    """Whether the haystack holds one of the texts as a whole word (as the independent layout checks). A text
    held as a whole word has each of its letter-and-digit runs among the haystack's (`words`): a text with one
    missing is ruled out without scanning the haystack (a 1M-token chain is megabytes of text)."""
    return any(
        set(WORD.findall(text)) <= words and text in haystack and whole_word(text).search(haystack) for text in texts
    )


def _same_frame(family: str, drafts: dict[Cell, Draft]) -> None:
    """Every cell of a chain shares the instructions: a family whose head depends on the question cannot nest."""
    first = next(iter(drafts.values()))
    for draft in drafts.values():
        if (draft.head, draft.context_opening, draft.reserve_tokens, draft.document_start) != (
            first.head,
            first.context_opening,
            first.reserve_tokens,
            first.document_start,
        ) or draft.messages:
            raise UserError(
                f"layout nested: family {family} writes other instructions for other questions, so its "
                "prompts share no prefix: give it layout independent"
            )


def _lay_out(
    drafts: dict[Cell, Draft], counts: UnitCounts, lead: int, window: int, block: int | None = None
) -> ChainLayout:
    haystack = counts.haystack
    first = next(iter(drafts.values()))
    cells = list(drafts)
    texts = {cell: [n.text if n.unit else haystack.wrap_needle(n.text) for n in drafts[cell].needles] for cell in cells}
    flat = [(cell, i, text) for cell in cells for i, text in enumerate(texts[cell])]
    head_n, *rest = counts.count_texts([first.head, *(drafts[c].tail for c in cells), *(t for _, _, t in flat)])
    tails = dict(zip(cells, rest[: len(cells)]))
    needle_n = rest[len(cells) :]
    lengths = sorted({length for length, _ in cells})
    opening = opening_cost(first, counts, [t for _, _, t in flat], window)
    budgets = {}
    for length in lengths:
        target = length - first.reserve_tokens
        frame = lead + head_n + max(tails[c] for c in cells if c[0] == length)
        budgets[length] = target - frame - safety_margin(target) - opening
        if budgets[length] < MIN_HAYSTACK_TOKENS + sum(n for (c, _, _), n in zip(flat, needle_n) if c[0] <= length):
            raise UserError(
                f"length {length} is too small for this nested chain: its question and the needles of "
                f"its cells and of the shorter lengths' take {target - budgets[length]} tokens or more"
            )
    span = counts.span(window, budgets[lengths[-1]], LOOKAHEAD)
    cum = span.cumsum
    depth_of = [drafts[c].needles[i].depth for c, i, _ in flat]
    hay = {
        length: budgets[length] - sum(n for (c, _, _), n in zip(flat, needle_n) if c[0] <= length) for length in lengths
    }
    slots = [0] * len(flat)
    cuts: dict[int, int] = {}
    # on a block boundary: the stream (from the prompt's first token) ends as near past one as the gap the fill
    # would leave open allows
    aligned = (
        None
        if block is None
        else _Blocks(
            block, lead + head_n, {length: tolerance(length - first.reserve_tokens) // 2 for length in lengths}
        )
    )
    for _ in range(PLACEMENT_ROUNDS):
        slots = [nearest_boundary(cum, depth / 100.0 * hay[c[0]]) for (c, _, _), depth in zip(flat, depth_of)]
        cuts = _cuts(cum, slots, needle_n, budgets, opening, aligned)
        # a cell's own needles stand inside its length
        slots = [min(slot, cuts[c[0]]) for slot, (c, _, _) in zip(slots, flat)]
        cuts = _cuts(cum, slots, needle_n, budgets, opening, aligned)
        moved = {length: int(cum[cuts[length]]) for length in lengths}
        if moved == hay:
            break
        hay = moved
    if any(slot > cuts[c[0]] for slot, (c, _, _) in zip(slots, flat)):
        raise UserError(
            "could not place every needle of a nested chain inside its own length: give fewer depths or longer lengths"
        )
    order = sorted(range(len(flat)), key=lambda k: (slots[k], flat[k][0], flat[k][1]))
    needles = tuple(
        _Needle(cell=flat[k][0], index=flat[k][1], text=flat[k][2], tokens=needle_n[k], slot=slots[k]) for k in order
    )
    delta = _first_piece_delta(first.context_opening, counts, span, needles)
    gaps = {length: budgets[length] - _stream(cum, needles, cuts[length], delta) for length in lengths}
    fills = {
        length: ()
        if aligned is not None and gaps[length] <= aligned.gap[length]  # kept on its boundary
        else _fill(span, cuts[length], gaps[length], tolerance(length - first.reserve_tokens))
        for length in lengths
    }
    return ChainLayout(
        head=first.head,
        head_tokens=head_n,
        lead=lead,
        opening=first.context_opening,
        opening_delta=delta,
        span=span,
        drafts=drafts,
        tails=tails,
        needles=needles,
        cuts=cuts,
        fills=fills,
        stream_tokens={length: lead + head_n + _stream(cum, needles, cuts[length], delta) for length in lengths},
    )


@dataclass(frozen=True)
class _Blocks:
    """An engine's reuse unit and what a cut may give up for it: `offset`, the prompt's tokens before the
    stream's units (lead, instructions); `gap`, per length, the most tokens a cut may leave below its budget
    (half the tolerance; such a length takes no fill, which would end its shared part off the boundary)."""

    size: int
    offset: int
    gap: dict[int, int]


def _cuts(
    cum: np.ndarray,
    slots: list[int],
    needle_n: list[int],
    budgets: dict[int, int],
    opening: int,
    blocks: _Blocks | None = None,
) -> dict[int, int]:
    """Each length's cut: the most stream units whose tokens, with the needles standing among them (a needle at
    the cut included), fit its budget. With `blocks`, of the cuts within the allowed gap below the budget, the
    one whose stream ends nearest past a block boundary (the longest of equals): an engine that reuses whole
    blocks then reuses the whole stream but that remainder. Where no cut is within the gap, the last that fits."""
    at_slot = np.zeros(len(cum), dtype=np.int64)
    np.add.at(at_slot, np.asarray(slots, dtype=np.int64), np.asarray(needle_n, dtype=np.int64))
    total = cum + np.cumsum(at_slot) + opening
    cuts = {length: max(0, int(np.searchsorted(total, budget, side="right")) - 1) for length, budget in budgets.items()}
    if blocks is None:
        return cuts
    for length, cut in cuts.items():
        best = cut
        for k in range(cut, -1, -1):
            if budgets[length] - int(total[k]) > blocks.gap[length]:
                break
            if (blocks.offset + int(total[k])) % blocks.size < (blocks.offset + int(total[best])) % blocks.size:
                best = k
        cuts[length] = best
    return cuts


def _stream(cum: np.ndarray, needles: tuple[_Needle, ...], cut: int, opening: int) -> int:
    return int(cum[cut]) + sum(n.tokens for n in needles if n.slot <= cut) + opening


def _fill(span: Span, cut: int, gap: int, tol: int) -> tuple[int, ...]:
    """Later units that fit the gap a length's cut leaves, as the independent layout closes its last gap:
    they follow the shared stream, so only that length's prompts hold them."""
    chosen: list[int] = []
    for i in range(cut, min(cut + LOOKAHEAD, len(span.counts))):
        if gap <= tol // 4:
            break
        if int(span.counts[i]) <= gap:
            chosen.append(span.start + i)
            gap -= int(span.counts[i])
    return tuple(chosen)


def _tokens(span: Span, units: tuple[int, ...]) -> int:
    return sum(int(span.counts[u - span.start]) for u in units)


def _first_piece_delta(opening: str | None, counts: UnitCounts, span: Span, needles: tuple[_Needle, ...]) -> int:
    """The tokens the opening actually adds to the stream's first piece: a needle at the start, else its first unit."""
    if opening is None:
        return 0
    text = needles[0].text if needles and needles[0].slot == 0 else counts.haystack.units(span.start, span.start + 1)[0]
    before, after = counts.count_texts([text, reopened(opening, text)])
    return after - before
