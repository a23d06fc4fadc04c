"""RULER's own score beside ctxprobe's strict one, for the samples written in RULER's layout.

Published RULER tables mean RULER's metric: `string_match_all`, the share of the expected answers found in
the output as substrings, any case (QA: lm-eval 0.4.13's `string_match_part`, the same share), recall
only. ctxprobe's strict score asks for the answer and nothing else of its kind, so the two differ where a
model lists candidates or writes `16462207` for `6462207`. Both come from the same outputs: RULER's is
`reference_scores.ruler_substring` on each record, ctxprobe's the record's score."""

from __future__ import annotations

from collections.abc import Iterable

from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.evals.records.rows import variant_label
from ctxprobe.evals.scoring.ruler_score import SUBSTRING
from ctxprobe.tasks.lengths import format_length


def render_ruler_beside(records: Iterable[SampleRecord]) -> str:
    """One line per family x variant x haystack x length of RULER-layout samples: RULER's mean score (in
    points) and the share it counts fully matched, beside ctxprobe's strict accuracy; "" when none."""
    groups: dict[tuple[str, str, str, int], list[SampleRecord]] = {}
    for r in records:
        if r.score is not None and SUBSTRING in r.reference_scores:
            recipe = r.sample.recipe
            key = (recipe.family, variant_label(recipe.params, recipe.family), recipe.haystack, recipe.context_tokens)
            groups.setdefault(key, []).append(r)
    if not groups:
        return ""
    lines = [
        "RULER's own metric (string_match_all: recall of the answers as substrings) beside ctxprobe's strict "
        "score, same outputs:"
    ]
    for (family, variant, haystack, length), group in sorted(groups.items()):
        ruler = [r.reference_scores[SUBSTRING] for r in group]
        strict = sum(1 for r in group if r.score is not None and r.score.correct)
        lines.append(
            f"  {family}  {variant}  [{haystack}]  {format_length(length)}: RULER "
            f"{100 * sum(ruler) / len(ruler):.1f} ({sum(s == 1.0 for s in ruler)}/{len(ruler)} all found)"
            f"  ctxprobe strict {100 * strict / len(group):.0f}% ({strict}/{len(group)})"
        )
    return "\n".join(lines) + "\n"
