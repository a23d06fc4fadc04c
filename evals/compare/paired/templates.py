"""Template sensitivity: one run whose tasks ran under two prompt layouts (`templates: [ctxprobe, ruler]`,
`question_positions: [end, start]`) with identical needles. A layout is named by its template and, away
from the end, its question position (`ruler`, `ctxprobe:start`, `ruler:both`). Each pair is the same cell, seed and needles under both layouts; the rows are
compare's (paired difference, interval, exact McNemar, Holm), so a user sees how much of a score is the
prompt's layout and how much is the model."""

from __future__ import annotations

from collections import defaultdict

from ctxprobe.evals.compare.paired.pairing import Pair
from ctxprobe.evals.compare.paired.rows import CompareRow, compare_rows
from ctxprobe.evals.compare.paired.text import COLUMNS, aligned, row_cells
from ctxprobe.evals.compare.paired.verdict import adjust
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.tasks.identity import template_pair_key

BASE_LAYOUT = "ctxprobe"  # every other layout is paired against this one


def layout_name(params: dict[str, object]) -> str:
    """A recipe's layout: its template (ctxprobe's for a family without one) and, away from the end, its
    question position (`ctxprobe`, `ruler`, `ctxprobe:start`, `ruler:both`)."""
    name, position = str(params.get("template") or BASE_LAYOUT), params.get("question_position", "end")
    return name if position == "end" else f"{name}:{position}"


def template_pairs(records: list[SampleRecord], base: str = BASE_LAYOUT) -> dict[str, list[Pair]]:
    """Pairs of scored samples that differ only in their layout: the base layout against each other one."""
    by_key: dict[tuple[str, str], dict[str, SampleRecord]] = defaultdict(dict)
    for record in records:
        if record.error is None:
            by_key[template_pair_key(record.sample.recipe)][layout_name(record.sample.recipe.params)] = record
    pairs: dict[str, list[Pair]] = defaultdict(list)
    for layouts in by_key.values():
        if base in layouts:
            for name, record in layouts.items():
                if name != base:
                    pairs[name].append(Pair(layouts[base], record, same_prompt=False))
    return dict(pairs)


def template_rows(records: list[SampleRecord], alpha: float = 0.05) -> list[CompareRow]:
    """Per family x length (depths pooled, Holm-adjusted) rows of each other layout against ctxprobe's
    (`candidate` is the other layout's name); none when the run has one layout."""
    rows: list[CompareRow] = []
    for name, pairs in sorted(template_pairs(records).items()):
        rows += adjust(compare_rows(name, pairs, "family_length"), alpha)
    return rows


def render_template_sensitivity(records: list[SampleRecord], alpha: float = 0.05) -> str:
    """The terminal/markdown block; empty when the run has one layout."""
    rows = template_rows(records, alpha)
    if not rows:
        return ""
    out = ["", f"template sensitivity (same needles, paired; diff = other layout - {BASE_LAYOUT}'s):"]
    for (family, variant, haystack, name), group in _blocks(rows).items():
        out.append(f"{family}  {variant}  [{haystack}]  {BASE_LAYOUT} vs {name}")
        header = [{"base": BASE_LAYOUT, "cand": name}.get(h, h) for h in COLUMNS]
        out += ["  " + line for line in aligned([header, *[row_cells(r) for r in group]])]
    return "\n".join(out) + "\n"


def _blocks(rows: list[CompareRow]) -> dict[tuple[str, str, str, str], list[CompareRow]]:
    blocks: dict[tuple[str, str, str, str], list[CompareRow]] = {}
    for row in rows:
        blocks.setdefault((row.family, row.variant, row.haystack, row.candidate), []).append(row)
    return blocks
