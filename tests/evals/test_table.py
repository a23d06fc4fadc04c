import math

import pandas as pd
import pytest

from ctxprobe.evals.compare.stats import clopper_pearson
from ctxprobe.evals.records.record import ErrorKind
from ctxprobe.evals.report.table import accuracy_table, context_summary, render_text, variant_label, write_summary
from tests.evals.factories import make_record

SINGLE = {"variant": "single", "value_kind": "number"}


def grid_records():
    """niah single: 4K all right at both depths; 32K depth 0: 8/10, depth 50: 5/10 plus 2 timeouts;
    1m: only rejected prompts. niah multivalue with partial credit; recall at 4K."""
    recs = []
    for depth in (0.0, 50.0):
        recs += [make_record(True, context_tokens=4096, depth=depth, params=SINGLE) for _ in range(10)]
    recs += [make_record(i < 8, context_tokens=32768, depth=0.0, params=SINGLE) for i in range(10)]
    recs += [make_record(i < 5, context_tokens=32768, depth=50.0, params=SINGLE) for i in range(10)]
    recs += [make_record(error=ErrorKind.timeout, context_tokens=32768, depth=50.0, params=SINGLE) for _ in range(2)]
    recs += [
        make_record(error=ErrorKind.rejected_too_long, context_tokens=1_000_000, depth=d, params=SINGLE)
        for d in (0.0, 50.0)
    ]
    mv = {"variant": "multivalue", "value_kind": "number"}
    recs += [make_record(False, 0.5, context_tokens=4096, depth=0.0, params=mv) for _ in range(4)]
    recs += [make_record(True, family="recall", params={"kind": "hex"}, context_tokens=4096)]
    return recs


def cell(table, **coords):
    mask = pd.Series(True, index=table.index)
    for key, value in coords.items():
        mask &= table[key] == value
    rows = table[mask]
    assert len(rows) == 1
    return rows.iloc[0]


def test_variant_label_orders_variant_first():
    assert (
        variant_label({"placement": "random", "value_kind": "uuid", "variant": "multikey"})
        == "variant=multikey, value_kind=uuid, placement=random"
    )
    assert variant_label({}) == "-"


def test_cells_count_errors_apart():
    table = accuracy_table(grid_records())
    single = "variant=single"
    c = cell(table, family="niah", variant=single, context_tokens=32768, depth=50.0)
    assert (c["n"], c["correct"], c["errors"], c["err_timeout"]) == (10, 5, 2, 2)
    assert c["accuracy"] == 0.5
    c = cell(table, family="niah", variant=single, context_tokens=32768, depth=0.0)
    assert (c["ci_lo"], c["ci_hi"]) == pytest.approx(clopper_pearson(8, 10))
    assert c["partial_mean"] == pytest.approx(0.8)
    c = cell(table, family="niah", variant=single, context_tokens=1_000_000, depth=0.0)
    assert c["n"] == 0 and math.isnan(c["accuracy"]) and c["err_rejected_too_long"] == 1
    assert (c["ci_lo"], c["ci_hi"]) == (0.0, 1.0)
    mv = cell(table, variant="variant=multivalue")
    assert mv["accuracy"] == 0.0 and mv["partial_mean"] == 0.5
    assert len(table) == 2 * 3 + 2  # niah single: 3 lengths x 2 depths; multivalue; recall


def test_context_summary_pools_depths():
    summary = context_summary(grid_records())
    c = cell(summary, family="niah", variant="variant=single", context_tokens=32768)
    assert (c["n"], c["correct"], c["errors"]) == (20, 13, 2)
    assert (c["ci_lo"], c["ci_hi"]) == pytest.approx(clopper_pearson(13, 20))


def test_render_text_grid():
    text = render_text(grid_records())
    lines = text.splitlines()
    start = lines.index("niah  variant=single  [prose]")
    header, row0, ci_row = lines[start + 1 : start + 4]
    assert header.split() == ["depth", "4K", "32K", "1m"]
    assert row0.split() == ["0%", "100%", "(10)", "80%", "(10)", "-", "(0)"]
    assert ci_row.split() == ["interval", "[69-100]", "[44-97]"]  # Clopper-Pearson: 0.025^(1/10) = 0.69; 8 of 10
    assert any(line.startswith("errors (not in n): 32K: 2 timeout; 1m: 2 rejected_too_long") for line in lines)
    assert "recall  kind=hex  [prose]" in lines
    assert any(line.split()[:3] == ["partial", "credit", "50%"] for line in lines)  # multivalue partial credit
    grid_rows = [line for line in lines if line.startswith(" ") or line[:1].isdigit()]
    assert grid_rows and all(
        line.split()[0][:1] not in "[-" for line in grid_rows if line.strip()
    )  # every row labelled


def test_record_without_score_or_error_is_a_bug():
    rec = make_record(True)
    with pytest.raises(ValueError):
        accuracy_table([rec.model_copy(update={"score": None})])


def test_write_summary(tmp_path):
    paths = write_summary(iter(grid_records()), tmp_path / "out")
    assert [p.name for p in paths] == ["summary.csv", "summary_by_context.csv", "summary.md"]
    csv = pd.read_csv(paths[0])
    assert {
        "family",
        "variant",
        "context_tokens",
        "depth",
        "n",
        "accuracy",
        "ci_lo",
        "ci_hi",
        "partial_mean",
        "errors",
        "err_timeout",
    } <= set(csv.columns)
    assert len(csv) == 8 and csv["n"].sum() == 45
    md = paths[2].read_text()
    assert "| depth | 4K | 32K | 1m |" in md and "80% (10) [44-97]" in md


def test_label_leaves_out_defaults_so_spelled_out_and_implicit_defaults_group_together():
    assert variant_label({"variant": "single", "value_kind": "number", "distractors": 3}, "niah") == "variant=single"
    assert variant_label({}, "niah") == "variant=single"
    assert variant_label({"variant": "multikey", "distractors": 8}, "niah") == "variant=multikey, distractors=8"


def test_blocks_read_numbers_in_labels_as_numbers():
    recs = [make_record(True, family="capacity", params={"facts": n}, context_tokens=2048) for n in (1, 16, 4, 64)]
    heads = [line for line in render_text(recs).splitlines() if line.startswith("capacity  ")]
    assert [h.split()[1].split("facts=")[1].rstrip(",") for h in heads] == ["1", "4", "16", "64"]


def test_framed_records_are_framed_once(monkeypatch):
    from ctxprobe.evals.compare import accuracy

    records = [make_record(i % 2 == 0, depth=d) for i, d in enumerate((0.0, 50.0, 100.0, 50.0))]
    made = []
    real = accuracy._frame
    monkeypatch.setattr(accuracy, "_frame", lambda recs: made.append(len(recs)) or real(recs))
    with accuracy.framed(records):
        first = accuracy.record_frame(records)
        first.loc[0, "correct"] = 99.0  # a caller's change to its copy is its own
        again = accuracy.record_frame(iter(records))
        other = accuracy.record_frame(records[:2])  # other records: framed anew
    after = accuracy.record_frame(records)
    assert made == [4, 2, 4]
    assert again.equals(after) and again.loc[0, "correct"] == 1.0 and len(other) == 2
