"""The answers by depth beside the accuracy table: per family x variant x haystack and depth (lengths pooled),
how many scored answers were correct, a rival (another needle's value of the prompt), other (no needle of the
prompt) or hallucinated (a value where the prompt holds none: an absent needle), each with its share of the
scored answers, and where the rivals' needles stand (their median depth in the prompt). A wrong answer lost at
a depth and one confused with a neighbour call for different fixes.

Counted from each score's `attribution` (decided at scoring time, `tasks/answers/attribution.py`): the records
are read as outlines, never their needles again. A run with no attributed answer (written before attribution,
or of answer kinds without candidates) shows nothing here; a wrong answer not attributed is in none of the
three, so the four shares add up to less than 100 % only then.

An absent question's rows (`tasks/absent.py`) hold correct and hallucinated only: its verdict never names a
rival or other (a value it answers is invented for the asked key, whichever needle it quotes), so its rival,
other and rival at cells read `-`, not a 0 % that would say its answers were never confused."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from ctxprobe.evals.compare.accuracy import ATTRIBUTION_COLUMNS, CONDITION, aggregate, record_frame
from ctxprobe.evals.records.record import SampleRecord

ANSWER_COLUMNS = ["correct", *ATTRIBUTION_COLUMNS]
RIVAL_AT = "rival at"
HEADING = (
    "answers by depth (lengths pooled; share of the scored answers): correct, rival (another needle's value "
    "of the prompt), other (no needle of the prompt), hallucinated (a value where the prompt holds none); "
    "rival at: the median depth of the needles the rivals named; on an absent question's rows rival, other and "
    "rival at are - (its verdict names neither)"
)
NOT_NAMED = ["rival", "other"]  # what an absent question's verdict never names (`tasks/answers/absence.py`)


def answers_by_depth(records: Iterable[SampleRecord]) -> pd.DataFrame | None:
    """One row per family x variant x haystack x depth: n (scored), the counts of `ANSWER_COLUMNS`, the rivals'
    median depth and whether its questions are absent ones; None where no scored answer is attributed."""
    frame = record_frame(records)
    if frame.empty or not frame[ATTRIBUTION_COLUMNS].to_numpy().any():
        return None
    keys = [*CONDITION, "depth"]
    table = aggregate(frame, keys)
    grouped = frame.assign(absent=frame["question"] == "absent").groupby(keys, sort=True)
    table = table.merge(
        grouped.agg(rival_depth=("rival_depth", "median"), absent=("absent", "all")).reset_index(), on=keys, how="left"
    )
    return table[table["n"] > 0][[*keys, "n", *ANSWER_COLUMNS, "rival_depth", "absent"]].reset_index(drop=True)


def share_cells(row: Any) -> list[str]:
    """`12 (40%)` for each of `ANSWER_COLUMNS` of a row with n scored answers, then the rivals' median depth
    (`-` without a rival); an absent question's row has `-` for what its verdict never names."""
    depth, absent = row["rival_depth"], bool(row["absent"])
    return [
        *(
            "-" if absent and col in NOT_NAMED else f"{int(row[col])} ({100 * int(row[col]) / int(row['n']):.0f}%)"
            for col in ANSWER_COLUMNS
        ),
        "-" if absent or pd.isna(depth) else f"{depth:.0f}%",
    ]


def _blocks(table: pd.DataFrame) -> list[tuple[str, list[list[str]]]]:
    header = ["depth", "n", *ANSWER_COLUMNS, RIVAL_AT]
    return [
        (
            f"{family}  {variant}  [{haystack}]",
            [header, *([f"{row['depth']:g}%", str(int(row["n"])), *share_cells(row)] for _, row in block.iterrows())],
        )
        for (family, variant, haystack), block in table.groupby(CONDITION, sort=True)
    ]


def render_attribution(records: Iterable[SampleRecord]) -> str:
    """The terminal's block: one aligned table per family x variant x haystack; "" with nothing attributed."""
    table = answers_by_depth(records)
    if table is None:
        return ""
    out = [HEADING]
    for title, rows in _blocks(table):
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        out += [title, *("  " + "  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in rows)]
    return "\n".join(out) + "\n"


def attribution_markdown(records: Iterable[SampleRecord]) -> str:
    """summary.md's section; "" with nothing attributed."""
    table = answers_by_depth(records)
    if table is None:
        return ""
    out = ["## Answers by depth", "", HEADING[0].upper() + HEADING[1:] + ".", ""]
    for title, rows in _blocks(table):
        out += [
            f"### {title}",
            "",
            "| " + " | ".join(rows[0]) + " |",
            "|" + "|".join("---:" for _ in rows[0]) + "|",
            *("| " + " | ".join(r) + " |" for r in rows[1:]),
            "",
        ]
    return "\n".join(out)
