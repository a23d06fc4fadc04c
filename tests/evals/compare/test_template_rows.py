"""Template sensitivity on synthetic records: one run's two layouts pair by needle key, the rows are
compare's (paired difference, exact McNemar, Holm), errored samples leave the pairs, and a run with one
layout gives nothing. The accuracy table keeps the two layouts apart."""

from __future__ import annotations

import pytest

from ctxprobe.evals.compare.paired.templates import render_template_sensitivity, template_pairs, template_rows
from ctxprobe.evals.records.record import ErrorKind, SampleRecord
from ctxprobe.evals.report.table import context_summary, render_text
from tests.evals.compare.synthetic import DEPTHS, SEEDS, Key, grid
from tests.evals.factories import make_record

SHORT, LONG = 1024, 2048


def _record(key: Key, template: str, outcome: bool | ErrorKind = True) -> SampleRecord:
    length, depth, seed = key
    params = {"variant": "single", "template": template}
    if isinstance(outcome, ErrorKind):
        return make_record(None, error=outcome, params=params, context_tokens=length, depth=depth, seed=seed)
    return make_record(outcome, params=params, context_tokens=length, depth=depth, seed=seed)


def _run(ruler: dict[Key, bool | ErrorKind], ctxprobe: dict[Key, bool | ErrorKind] | None = None) -> list[SampleRecord]:
    """Every grid key under both layouts: right unless `ruler` / `ctxprobe` say otherwise."""
    return [_record(k, "ctxprobe", (ctxprobe or {}).get(k, True)) for k in grid()] + [
        _record(k, "ruler", ruler.get(k, True)) for k in grid()
    ]


def _row(rows, length):
    (row,) = [r for r in rows if r.context_tokens == length]
    return row


LOST = [(LONG, d, s) for d in DEPTHS for s in SEEDS][:6]  # 6 of the 20 long cells: ctxprobe right, ruler wrong


def test_pairs_join_the_same_needles_under_the_two_layouts() -> None:
    records = _run({k: False for k in LOST})
    pairs = template_pairs(records)
    assert list(pairs) == ["ruler"] and len(pairs["ruler"]) == len(grid())
    for pair in pairs["ruler"]:
        base, cand = pair.base.sample.recipe, pair.cand.sample.recipe
        assert (base.params["template"], cand.params["template"]) == ("ctxprobe", "ruler")
        assert (base.context_tokens, base.depth, base.seed) == (cand.context_tokens, cand.depth, cand.seed)
        assert not pair.same_prompt


def test_rows_give_the_paired_difference_and_exact_mcnemar() -> None:
    rows = template_rows(_run({k: False for k in LOST}))
    assert [(r.candidate, r.level, r.context_tokens) for r in rows] == [
        ("ruler", "family_length", SHORT),
        ("ruler", "family_length", LONG),
    ]
    long, short = _row(rows, LONG), _row(rows, SHORT)
    assert (long.n, long.base_correct, long.cand_correct, long.base_only, long.cand_only) == (20, 20, 14, 6, 0)
    assert long.diff == pytest.approx(-6 / 20)
    assert long.p_value == pytest.approx(2 * 0.5**6)  # both tails of Binomial(6, 1/2) at 0: 0.03125
    assert long.diff_lo < long.diff < long.diff_hi < 0  # an interval that excludes no difference
    assert short.diff == 0 and short.p_value == 1.0
    # Holm over the two rows: 0.03125 * 2, and the other row is lifted to at least that (capped at 1)
    assert long.p_holm == pytest.approx(2 * 2 * 0.5**6) and short.p_holm == 1.0
    assert not long.significant  # 0.0625 > 0.05: a real difference that two tests cannot call at alpha 0.05
    assert _row(template_rows(_run({k: False for k in LOST}), alpha=0.1), LONG).significant


def test_records_with_errors_leave_the_pairs() -> None:
    short_keys = [k for k in grid() if k[0] == SHORT]
    records = _run(
        {**{k: False for k in LOST}, short_keys[0]: ErrorKind.timeout},
        ctxprobe={short_keys[1]: ErrorKind.rejected_too_long, LOST[0]: ErrorKind.http_error},
    )
    rows = template_rows(records)
    assert _row(rows, SHORT).n == 18  # one errored under each layout
    long = _row(rows, LONG)
    assert (long.n, long.base_only) == (19, 5)  # the errored baseline took one lost pair with it
    assert long.p_value == pytest.approx(2 * 0.5**5)


def test_one_layout_gives_no_rows_and_no_block() -> None:
    one = [_record(k, "ctxprobe") for k in grid()]
    assert template_pairs(one) == {} and template_rows(one) == []
    assert render_template_sensitivity(one) == ""
    only_ruler = [_record(k, "ruler", False) for k in grid()]
    assert template_rows(only_ruler) == [] and render_template_sensitivity(only_ruler) == ""
    no_template = [
        make_record(True, family="recall", params={"kind": "hex"}, context_tokens=n, depth=d, seed=s)
        for n, d, s in grid()
    ]
    assert template_rows(no_template) == []


def test_the_block_names_both_layouts_and_the_difference() -> None:
    text = render_template_sensitivity(_run({k: False for k in LOST}))
    assert "ctxprobe vs ruler" in text and "niah  variant=single  [prose]" in text
    (line,) = [ln for ln in text.splitlines() if ln.strip().startswith("2K")]
    cells = line.split()
    assert cells[:6] == ["2K", "all", "20", "100%", "70%", "-30"] and "0.0312" in cells


def test_the_accuracy_table_keeps_the_layouts_apart() -> None:
    records = _run({k: False for k in LOST})
    summary = context_summary(records)
    long = summary[summary["context_tokens"] == LONG].set_index("variant")
    assert sorted(long.index) == ["variant=single", "variant=single, template=ruler"]
    assert long.loc["variant=single", "correct"] == 20 and long.loc["variant=single, template=ruler", "correct"] == 14
    text = render_text(records)
    assert "niah  variant=single  [prose]" in text and "niah  variant=single, template=ruler  [prose]" in text


def test_tasks_differing_only_in_length_convention_pair_apart() -> None:
    records = []
    for convention in ("prompt", "ruler"):
        for template in ("ctxprobe", "ruler"):
            params = {"variant": "single", "template": template, "length_convention": convention}
            records += [
                make_record(True, params=params, context_tokens=length, depth=depth, seed=seed)
                for length, depth, seed in grid()
            ]
    pairs = template_pairs(records)["ruler"]
    assert len(pairs) == 2 * len(grid())
    for pair in pairs:
        assert (
            pair.base.sample.recipe.params["length_convention"] == pair.cand.sample.recipe.params["length_convention"]
        )


def _placed(key: Key, position: str, correct: bool, template: str | None = "ctxprobe") -> SampleRecord:
    length, depth, seed = key
    params: dict[str, object] = {"kind": "hex"} if template is None else {"variant": "single", "template": template}
    if position != "end":
        params["question_position"] = position
    return make_record(
        correct,
        family="recall" if template is None else "niah",
        params=params,
        context_tokens=length,
        depth=depth,
        seed=seed,
    )


@pytest.mark.parametrize("template", ["ctxprobe", None])  # niah, and recall, a family without a template
def test_the_question_at_the_start_is_a_layout_paired_with_the_end(template: str | None) -> None:
    records = [_placed(k, "end", True, template) for k in grid()] + [
        _placed(k, "start", k not in LOST, template) for k in grid()
    ]
    pairs = template_pairs(records)
    assert list(pairs) == ["ctxprobe:start"] and len(pairs["ctxprobe:start"]) == len(grid())
    long = _row(template_rows(records), LONG)
    assert (long.candidate, long.n, long.base_only, long.cand_only) == ("ctxprobe:start", 20, 6, 0)
    assert long.diff == pytest.approx(-6 / 20)
    assert "ctxprobe vs ctxprobe:start" in render_template_sensitivity(records)
