"""Absent questions in the tables (evals/compare/accuracy.py `absent_beside`, evals/report/table.py, the HTML
report's accuracy table): their accuracy beside the present question's, length by length, never pooled into
it; an absent question with no present one beside it keeps a block of its own."""

from __future__ import annotations

import pandas as pd
import pytest

from ctxprobe.evals.compare.stats import clopper_pearson
from ctxprobe.evals.report.html_report.run_section import accuracy_rows
from ctxprobe.evals.report.table import context_summary, render_markdown, render_text, write_summary
from tests.evals.factories import make_record

SINGLE = {"variant": "single"}
ABSENT = {"variant": "single", "absent": True}


def records(absent_right: dict[int, tuple[int, int]], present: bool = True):
    """niah single at 1K and 2K, depths 0 and 100, 5 seeds: 1K all right, 2K 6 of 10; and per length
    (right, asked) absent questions, one per seed at depth 0."""
    recs = []
    if present:
        for length, right in ((1024, 10), (2048, 6)):
            recs += [
                make_record(i < right, context_tokens=length, depth=float(100 * (i % 2)), seed=i // 2, params=SINGLE)
                for i in range(10)
            ]
    for length, (right, asked) in absent_right.items():
        recs += [
            make_record(i < right, kind="absent", context_tokens=length, depth=0.0, seed=i, params=ABSENT)
            for i in range(asked)
        ]
    return recs


def row(table: pd.DataFrame, **coords: object) -> pd.Series:
    mask = pd.Series(True, index=table.index)
    for key, value in coords.items():
        mask &= table[key] == value
    assert mask.sum() == 1, coords
    return table[mask].iloc[0]


def test_absent_accuracy_stands_beside_recall_and_is_not_pooled_into_it():
    summary = context_summary(records({1024: (4, 5), 2048: (1, 5)}))
    present = row(summary, variant="variant=single", context_tokens=2048)
    assert (present["n"], present["correct"]) == (10, 6)  # recall alone
    assert (present["absent_n"], present["absent_correct"], present["absent_accuracy"]) == (5, 1, 0.2)
    assert (present["absent_ci_lo"], present["absent_ci_hi"]) == pytest.approx(clopper_pearson(1, 5))
    own = row(summary, variant="variant=single, absent=True", context_tokens=1024)  # still a row of its own
    assert (own["n"], own["correct"]) == (5, 4) and pd.isna(own["absent_n"])


def test_a_run_without_absent_questions_keeps_its_columns():
    assert not any(c.startswith("absent") for c in context_summary(records({})).columns)


def test_the_terminal_and_markdown_tables_show_an_absent_row_in_the_present_block():
    recs = records({1024: (4, 5), 2048: (1, 5)})
    lines = render_text(recs).splitlines()
    assert "niah  variant=single  [prose]" in lines
    assert not any("absent=True" in line for line in lines)  # folded into the present block
    absent = next(line for line in lines if line.split()[:1] == ["absent"])
    assert absent.split() == ["absent", "80%", "(5)", "20%", "(5)"]
    everything = next(line for line in lines if line.split()[:1] == ["all"])
    assert everything.split() == ["all", "100%", "(10)", "60%", "(10)"]
    assert "| absent | 80% (5) [28-99] | 20% (5) [1-72] |" in render_markdown(recs)


def test_an_absent_question_without_its_present_one_is_a_block_of_its_own():
    lines = render_text(records({1024: (3, 5)}, present=False)).splitlines()
    assert "niah  variant=single, absent=True  [prose]" in lines


def test_the_html_table_has_an_absent_column_and_no_row_for_what_it_shows(tmp_path):
    rows = accuracy_rows(records({1024: (4, 5), 2048: (1, 5)}))
    assert [(r["variant"], r["length"]) for r in rows] == [("variant=single", "1K"), ("variant=single", "2K")]
    assert rows[1]["absent"] == "20.0% (5) [0.5%, 71.6%]"
    write_summary(records({1024: (4, 5)}), tmp_path)
    by_context = pd.read_csv(tmp_path / "summary_by_context.csv")
    assert set(by_context["variant"]) == {"variant=single", "variant=single, absent=True"}
    assert row(by_context, variant="variant=single", context_tokens=1024)["absent_accuracy"] == 0.8
