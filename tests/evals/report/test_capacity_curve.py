"""The capacity curve and the capacity rule on synthetic records against a hand computation, partial
recall scored as a fraction of the asked values in any order, the run's capacity files, and compare and
history finding a halved capacity as a paired drop at the N where it happens."""

from __future__ import annotations

from pathlib import Path

import pytest

import ctxprobe
from ctxprobe.evals.records.manifest import RunManifest
from ctxprobe.evals.records.record import ErrorKind, SampleRecord
from ctxprobe.evals.records.store import RunStore
from ctxprobe.evals.report.capacity import capacities, capacity_curve, capacity_markdown, curve_table, samples_to_clear
from ctxprobe.evals.report.summary import write_report
from ctxprobe.evals.scoring.score import score_sample
from ctxprobe.tasks.build import builder_for, token_counter
from ctxprobe.tasks.sample import sha256_text
from ctxprobe.tasks.suite import Suite, SuiteTask
from tests.evals.factories import make_record

# Clopper-Pearson 95% lower bounds worked by hand: for n of n, p^n = 0.025, p = 0.025^(1/n); for 39 of 40,
# P(X >= 39) = p^40 + 40 p^39 (1 - p) = 0.025: 0.86841 (0.86841^40 + 40 * 0.86841^39 * 0.13159 = 0.0250).
LO_40_OF_40 = 0.025 ** (1 / 40)  # 0.9120
LO_39_OF_40 = 0.86841


def _records(
    length: int, facts: int, right: int, total: int = 40, errors: int = 0, params: dict[str, object] | None = None
) -> list[SampleRecord]:
    recs = [
        make_record(
            i < right, family="capacity", params={"facts": facts, **(params or {})}, context_tokens=length, seed=i
        )
        for i in range(total)
    ]
    return recs + [
        make_record(
            None,
            error=ErrorKind.timeout,
            family="capacity",
            params={"facts": facts},
            context_tokens=length,
            seed=total + i,
        )
        for i in range(errors)
    ]


def _grid() -> list[SampleRecord]:
    out: list[SampleRecord] = []
    for facts, right in ((1, 40), (4, 40), (16, 39), (64, 40)):  # 2K dips at 16 and recovers at 64
        out += _records(2048, facts, right, errors=3 if facts == 16 else 0)
    for facts in (1, 4, 16, 64):  # 4K holds everything tested
        out += _records(4096, facts, 40)
    out += _records(8192, 1, 30) + _records(8192, 4, 40)  # 8K fails at the fewest
    return out


def test_the_curve_and_the_capacity_match_a_hand_computation() -> None:
    curve = curve_table(_grid())
    row = curve[(curve["context_tokens"] == 2048) & (curve["facts"] == 16)].iloc[0]
    assert (row["n"], row["correct"], row["errors"]) == (39 + 1, 39, 3)  # errors apart, never in n
    assert row["ci_lo"] == pytest.approx(LO_39_OF_40, abs=1e-4)
    full = curve[(curve["context_tokens"] == 4096)]
    assert list(full["ci_lo"]) == pytest.approx([LO_40_OF_40] * 4)
    assert set(curve["variant"]) == {"-"}  # the condition leaves facts out: one line per length
    caps = {c.context_tokens: c for c in capacities(curve, 0.9)}
    # 2K: 1 and 4 pass (0.9124 >= 0.9), 16 fails (0.8712): 4, though 64 passes again
    assert (caps[2048].capacity, caps[2048].label()) == (4, "4")
    assert (caps[4096].capacity, caps[4096].label()) == (64, ">=64")  # every N tested passed
    assert (caps[8192].capacity, caps[8192].label()) == (0, "<1")  # 30/40: lower bound 0.598
    lower = {c.context_tokens: c.label() for c in capacities(curve, 0.85)}
    assert lower == {2048: ">=64", 4096: ">=64", 8192: "<1"}  # 0.8712 clears 0.85


def test_conditions_other_than_facts_get_their_own_curves() -> None:
    recs = _records(2048, 4, 40) + _records(2048, 4, 20, params={"interference": "similar"})
    caps = {c.variant: c.label() for c in capacities(curve_table(recs))}
    assert caps == {"-": ">=4", "interference=similar": "<4"}
    assert curve_table([make_record(True)]).empty  # niah holds no facts: no curve


def test_partial_recall_is_the_fraction_of_asked_values_in_any_order() -> None:
    builder = builder_for(token_counter("estimate"))
    sample = builder.build(
        builder.recipe(family="capacity", params={"facts": 16, "asked": 4}, context_tokens=2048, seed=1)
    )
    a, b, c, d = sample.expected.answers
    score = score_sample(sample, f" {c}, 1234567, {a} and {d}.")
    assert (score.partial, score.correct) == (3 / 4 * 3 / 4, False)  # 3 of 4 recalled, 3 of 4 offered asked
    assert score_sample(sample, f" {d}, {b}, {c}, {a}.").correct  # a set: any order
    one = builder.build(builder.recipe(family="capacity", params={"facts": 16}, context_tokens=2048, seed=1))
    assert one.expected.kind == "value" and score_sample(one, f" {one.expected.answers[0]}.").correct


def test_a_run_writes_the_capacity_table_png_and_terminal_lines(tmp_path: Path) -> None:
    manifest = RunManifest(
        label="t", suite=Suite(name="capacity", lengths=[2048], depths=[50], tasks=[SuiteTask(family="capacity")])
    )
    table = write_report(_grid(), tmp_path, manifest)
    assert "capacity  capacity  -  [prose]  (threshold 0.9" in table
    summary = (tmp_path / "summary.md").read_text()
    assert "# Recall capacity" in summary and "| capacity | 4 | >=64 | <1 |" in summary
    assert "| 16 | 98% (40) [87-100] |" in summary
    assert (tmp_path / "capacity.png").stat().st_size > 10_000
    assert capacity_markdown(capacity_curve([make_record(True)])) == ""


def _write_run(path: Path, label: str, wrong_at_64: int, threshold: float | None = None, created: float = 1.0) -> Path:
    """A capacity run at 4K: 20 seeds at N = 1, 4, 16, 64, every answer right but `wrong_at_64` at N = 64."""
    store = RunStore(path)
    store.write_manifest(
        RunManifest(
            label=label,
            created=created,
            status="finished",
            tokenizer="estimate:4",
            options={"threshold": threshold} if threshold else {},
            suite=Suite(name="capacity", lengths=[4096], depths=[50], tasks=[SuiteTask(family="capacity")]),
        )
    )
    for facts in (1, 4, 16, 64):
        for seed in range(20):
            rec = make_record(
                not (facts == 64 and seed < wrong_at_64),
                family="capacity",
                params={"facts": facts},
                context_tokens=4096,
                seed=seed,
            )
            sample = rec.sample.model_copy(update={"prompt_sha256": sha256_text(rec.sample.recipe.canonical_json())})
            store.append(rec.model_copy(update={"sample": sample}))
    store.close()
    return path


def test_compare_shows_a_halved_capacity_as_a_paired_drop_at_its_n(tmp_path: Path) -> None:
    base = _write_run(tmp_path / "f16", "f16", 0)
    cand = _write_run(tmp_path / "q4", "q4", 12)
    result = ctxprobe.compare(base, cand, write=False)
    rows = {r.variant: r for r in result.rows if r.level == "family_length"}
    assert rows["facts=64"].diff == pytest.approx(-12 / 20) and rows["facts=64"].significant
    assert all(rows[f"facts={n}"].diff == 0 and not rows[f"facts={n}"].significant for n in (1, 4, 16))


def test_history_flags_the_night_capacity_halved_at_its_n(tmp_path: Path) -> None:
    for night, wrong in enumerate((0, 0, 12), 1):
        _write_run(tmp_path / "results" / f"n{night}", "nightly", wrong, created=100.0 * night)
    result = ctxprobe.history(tmp_path / "results", label="nightly", write=False)
    assert [len(step.drops) for step in result.steps] == [0, 2]  # the family pooled, and facts=64 at 4K
    pooled, drop = result.steps[1].drops
    assert pooled.level == "family" and (drop.variant, drop.context_tokens) == ("facts=64", 4096)
    assert drop.diff == pytest.approx(-0.6)


def test_the_report_page_has_the_capacity_section(tmp_path: Path) -> None:
    run = _write_run(tmp_path / "q4", "q4", 12)
    page = ctxprobe.report([run], tmp_path / "report.html").read_text(encoding="utf-8")
    assert "<h3>Recall capacity</h3>" in page and "data:image/svg+xml;base64," in page
    # 20 of 20 right: lower bound 0.025^(1/20) = 0.832 < 0.9, too few samples to clear it at all
    assert "<td>capacity</td><td>&lt;1 (n=20 cannot clear 0.9: 36 needed)</td>" in page
    run = _write_run(tmp_path / "q4-at-0.8", "q4", 12, threshold=0.8)  # the run's --threshold
    page = ctxprobe.report([run], tmp_path / "report.html").read_text(encoding="utf-8")
    assert "<td>capacity</td><td>16</td>" in page and "at least 0.8 at N" in page  # 64: 8 of 20
    niah = write_run_without_facts(tmp_path / "niah")
    assert "Recall capacity" not in ctxprobe.report([niah], tmp_path / "niah.html").read_text(encoding="utf-8")


def write_run_without_facts(path: Path) -> Path:
    from tests.evals.compare.synthetic import all_right, write_run

    return write_run(path, "niah", all_right())


def test_a_capacity_stopped_by_too_few_samples_says_so() -> None:
    # by hand: Clopper-Pearson's lower bound at n of n right is 0.025^(1/n); it reaches 0.9 first at n = 36
    # (0.025^(1/36) = 0.9026; 0.025^(1/35) = 0.8999), so 8 of 8 (0.631) cannot clear it and 36 of 36 can
    assert samples_to_clear(0.9) == min(n for n in range(1, 100) if 0.025 ** (1 / n) >= 0.9) == 36
    few = [make_record(True, family="capacity", params={"facts": 1}, context_tokens=2048) for _ in range(8)]
    enough = [make_record(True, family="capacity", params={"facts": 1}, context_tokens=4096) for _ in range(36)]
    enough += [make_record(False, family="capacity", params={"facts": 4}, context_tokens=4096) for _ in range(36)]
    caps = {c.context_tokens: c for c in capacities(curve_table(few + enough))}
    assert caps[2048].undecided and caps[2048].label() == "<1 (n=8 cannot clear 0.9: 36 needed)"
    assert not caps[4096].undecided and caps[4096].label() == "1"  # 0/36 at N=4 is a real failure
