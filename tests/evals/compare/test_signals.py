"""`compare` and `history` name, beside a drop, the signals that moved with it (evals/compare/signals.py): two
synthetic runs where the candidate loses 9 of 20 answers at 2K, and with it (or not) more rival answers, samples
served at another length, a cache path that differs, and a new deployment lint line."""

from __future__ import annotations

from pathlib import Path

import pytest

import ctxprobe
from ctxprobe.evals.cli.main import main
from ctxprobe.evals.compare.signals import cache_line, lint_lines
from ctxprobe.evals.records.cache_check import CacheCheck
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.evals.report.html_report.history_section import history_section
from ctxprobe.runners.response import LintLine
from tests.evals.compare.synthetic import Key, all_right, grid, write_run

LOST = [k for k in grid() if k[0] == 2048][:9]
RIVALS = LOST[:6]  # of the lost answers, those that named another needle
OFF = LOST[:3]  # samples the server counted off their plan
ROPE = LintLine(
    rule="rope_scaling",
    message="serves 1,048,576 tokens above max_position_embeddings 262,144 (config.json) with no rope scaling",
    sources=["config.json"],
)


def _attributed(key: Key, rec: SampleRecord, rivals: list[Key], off: list[Key]) -> SampleRecord:
    assert rec.score is not None
    score = rec.score
    if not score.correct:
        score = score.model_copy(
            update={
                "attribution": "rival" if key in rivals else "other",
                "rival_depth": 25.0 if key in rivals else None,
            }
        )
    return rec.model_copy(update={"score": score, "prompt_tokens_off": 300 if key in off else None})


def _runs(results: Path, *, moved: bool, attributed: bool = True) -> tuple[Path, Path]:
    base = write_run(
        results / "a",
        "nightly",
        all_right(),
        created=100.0,
        edit=(lambda k, r: _attributed(k, r, [], [])) if attributed else None,
        manifest_fields={"cache_check": CacheCheck(verdict="agrees", checked=8), "deployment_lint": []},
    )
    cand_check = (
        CacheCheck(verdict="fault", checked=8, differed=3, cold_right_cached_wrong=3)
        if moved
        else CacheCheck(verdict="agrees", checked=8)
    )
    cand = write_run(
        results / "b",
        "nightly",
        {**all_right(), **{k: False for k in LOST}},
        created=200.0,
        edit=(lambda k, r: _attributed(k, r, RIVALS if moved else [], OFF if moved else [])) if attributed else None,
        manifest_fields={"cache_check": cand_check, "deployment_lint": [ROPE] if moved else []},
    )
    return base, cand


def test_each_signal_that_moved_is_one_line(tmp_path: Path) -> None:
    base, cand = _runs(tmp_path / "results", moved=True)
    result = ctxprobe.compare(base, cand, fail_if_drop=0.05, write=False)
    assert result.failed  # the drop itself
    pairs = len(grid())  # the family pooled over its lengths dropped: every pair is the drop's
    assert result.pairings[0].signals == [
        f"served != planned in 0 -> {len(OFF)} of {pairs} samples (prompt_tokens_off: a prompt served at another "
        "length than its recipe's)",
        "cache path differed in 3 of 8 checks (baseline 0 of 8; agrees -> fault)",
        f"deployment lint, new: {ROPE.message}",
        f"rival share 0 % -> {100 * len(RIVALS) / pairs:.0f} % (0 -> {len(RIVALS)} of {pairs} answers named another "
        "needle of their prompt)",
    ]


def test_a_drop_with_nothing_moved_says_nothing(tmp_path: Path) -> None:
    base, cand = _runs(tmp_path / "results", moved=False)
    result = ctxprobe.compare(base, cand, fail_if_drop=0.05, write=False)
    assert result.failed and result.pairings[0].signals == []


def test_records_before_attribution_give_no_rival_share(tmp_path: Path) -> None:
    """Wrong answers with no attribution (records written before it): the rival share is unknown, never 0 %."""
    base, cand = _runs(tmp_path / "results", moved=True, attributed=False)
    signals = ctxprobe.compare(base, cand, write=False).pairings[0].signals
    assert len(signals) == 2 and signals[0].startswith("cache path") and signals[1].startswith("deployment lint")


def test_no_drop_no_signals(tmp_path: Path) -> None:
    """The same movements without a drop (the candidate as right as the baseline) are not said."""
    results = tmp_path / "results"
    base = write_run(results / "a", "nightly", all_right(), manifest_fields={"deployment_lint": []})
    cand = write_run(results / "b", "nightly", all_right(), manifest_fields={"deployment_lint": [ROPE]})
    assert ctxprobe.compare(base, cand, write=False).pairings[0].signals == []


def test_compare_and_history_print_them_beside_the_drop(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "results"
    base, cand = _runs(results, moved=True)
    assert main(["compare", str(base), str(cand), "--results-dir", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out.splitlines()
    differ = next(i for i, line in enumerate(out) if line.startswith("rows that differ:"))
    assert out[differ + 1 : differ + 5] == [
        f"with it: {s}" for s in ctxprobe.compare(base, cand, write=False).pairings[0].signals
    ]
    assert main(["history", str(results), "--label", "nightly"]) == 0
    lines = capsys.readouterr().out.splitlines()
    drop = next(i for i, line in enumerate(lines) if "DROP" in line)
    assert lines[drop + 1].startswith("  with it: served != planned") and "rival share 0 % -> 15 %" in lines[drop + 4]
    history = ctxprobe.history(results, label="nightly", write=False)
    assert len(history.steps[0].signals) == 4
    (page,) = (tmp_path / "out").glob("*/report.html")
    assert "cache path differed in 3 of 8 checks (baseline 0 of 8; agrees -&gt; fault)" in page.read_text()
    flagged = history_section(history.model_dump(mode="json"), None)["flagged"]
    assert flagged[0]["signals"] == history.steps[0].signals


def test_the_cache_path_moves_on_its_verdict_or_its_differing_checks() -> None:
    agrees, fault = CacheCheck(verdict="agrees", checked=8), CacheCheck(verdict="fault", checked=8, differed=3)
    assert cache_line(agrees, CacheCheck(verdict="agrees", checked=10)) == ""  # more checks, none differed
    assert cache_line(None, None) == "" and cache_line(fault, fault) == ""
    assert (
        cache_line(None, fault) == "cache path differed in 3 of 8 checks (baseline not checked; not recorded -> fault)"
    )
    assert cache_line(fault, CacheCheck(verdict="off")) == "cache path not checked (baseline 3 of 8; fault -> off)"
    differs = CacheCheck(verdict="differs", checked=8, differed=1)
    assert (
        cache_line(differs, differs.model_copy(update={"differed": 2}))
        == "cache path differed in 2 of 8 checks (baseline 1 of 8; differs -> differs)"
    )


def test_a_lint_line_gone_or_run_on_one_side_only() -> None:
    assert lint_lines([ROPE], []) == [f"deployment lint, gone: {ROPE.message}"]
    assert lint_lines(None, [ROPE]) == [f"deployment lint (run on the candidate only): {ROPE.message}"]
    assert lint_lines(None, []) == [] and lint_lines([ROPE], [ROPE]) == []


def test_absent_questions_are_left_out_of_the_rival_share() -> None:
    """An absent question's wrong answer is hallucinated, never a rival: it is in neither count."""
    from ctxprobe.evals.compare.signals import rival_share
    from ctxprobe.tasks.absent import ABSENT
    from tests.evals.factories import make_record

    def absent(rec: SampleRecord) -> SampleRecord:
        expected = rec.sample.expected.model_copy(update={"kind": ABSENT})
        return rec.model_copy(update={"sample": rec.sample.model_copy(update={"expected": expected})})

    rival = make_record(False)
    rival = rival.model_copy(update={"score": rival.score.model_copy(update={"attribution": "rival"})})
    invented = make_record(False)
    invented = absent(
        invented.model_copy(update={"score": invented.score.model_copy(update={"attribution": "hallucinated"})})
    )
    assert rival_share([rival, make_record(True), invented, absent(make_record(True))]) == (1, 2)
    assert rival_share([invented]) == (0, 0)
