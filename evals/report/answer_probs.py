"""The answer probabilities beside the accuracy table: per cell (family x variant x haystack x length x
depth), the samples whose gold answer was teacher-forced, their mean `p_answer` (the chance the model would
write exactly the expected answer when sampling) and mean top-1 agreement (the share of answer positions
where the likeliest token is the gold one). Read from each record's `logprobs`; a run without them shows
nothing here, and samples recorded without them are counted apart."""

from __future__ import annotations

import math
from collections.abc import Iterable

from ctxprobe.evals.records.record import LOGPROBS_UNAVAILABLE, AnswerLogprobs, SampleRecord
from ctxprobe.evals.records.rows import variant_label
from ctxprobe.tasks.lengths import format_length

Cell = tuple[str, str, str, int, float]
NAMED = 5  # samples named in the footnote on those without probabilities


def _why(record: SampleRecord) -> str:
    """A sample without answer probabilities: its id, and why where the record says."""
    why = record.logprobs_detail or (
        "the engine gives none" if record.logprobs == LOGPROBS_UNAVAILABLE else "not measured"
    )
    return f"{record.sample.sample_id} ({why})"


def answer_probabilities(records: Iterable[SampleRecord]) -> dict[Cell, tuple[int, float, float]]:
    """Per cell: (samples measured, mean p_answer, mean top-1 agreement)."""
    groups: dict[Cell, list[AnswerLogprobs]] = {}
    for r in records:
        if isinstance(r.logprobs, AnswerLogprobs) and r.logprobs.tokens:
            recipe = r.sample.recipe
            key = (
                recipe.family,
                variant_label(recipe.params, recipe.family),
                recipe.haystack,
                recipe.context_tokens,
                recipe.depth,
            )
            groups.setdefault(key, []).append(r.logprobs)
    return {
        key: (
            len(lps),
            math.fsum(lp.p_answer for lp in lps) / len(lps),
            math.fsum(lp.top1_agreement for lp in lps) / len(lps),
        )
        for key, lps in groups.items()
    }


def render_answer_probabilities(records: Iterable[SampleRecord]) -> str:
    """One line per cell with answer probabilities, and a line for the samples without them; "" when no
    sample has any."""
    records = list(records)
    cells = answer_probabilities(records)
    unavailable = sum(1 for r in records if r.logprobs == LOGPROBS_UNAVAILABLE)
    if not cells:
        return f"answer probabilities: unavailable from this engine ({unavailable} samples)\n" if unavailable else ""
    lines = ["answer probabilities (teacher-forced expected answer): mean p_answer, mean top-1 agreement, n"]
    for (family, variant, haystack, length, depth), (n, p, top1) in sorted(cells.items()):
        lines.append(
            f"  {family}  {variant}  [{haystack}]  {format_length(length)}  depth {depth:g}%: "
            f"p_ans {p:.3f}  top1 {top1:.2f}  (n={n})"
        )
    without = [
        r
        for r in records
        if r.response is not None and not (isinstance(r.logprobs, AnswerLogprobs) and r.logprobs.tokens)
    ]
    if without:
        lines.append(
            f"  ({len(without)} answered sample{'' if len(without) == 1 else 's'} without them: "
            + "; ".join(_why(r) for r in without[:NAMED])
            + (f"; and {len(without) - NAMED} more" if len(without) > NAMED else "")
            + "; each record's logprobs_detail says why)"
        )
    return "\n".join(lines) + "\n"
