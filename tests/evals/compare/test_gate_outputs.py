"""The pooled family row and the gate's CI outputs: the JUnit file read back with junitparser, the
markdown summary (and $GITHUB_STEP_SUMMARY), and the case the pooled row exists for — a small drop at
every length that no single length shows."""

from pathlib import Path

import pytest
from junitparser import Failure, JUnitXml, Skipped

import ctxprobe
from ctxprobe.evals.cli.main import main
from tests.evals.compare.synthetic import all_right, grid, write_run


@pytest.fixture
def consistent_small_drop(tmp_path: Path) -> tuple[Path, Path]:
    """40 pairs over two lengths; the candidate loses 3 at each length and wins none: per length p = 2/8,
    pooled p = 2/64 (as f16 against q4_0 KV: every discordant pair against the candidate)."""
    lost = [k for k in grid() if k[0] == 1024][:3] + [k for k in grid() if k[0] == 2048][:3]
    base = write_run(tmp_path / "base", "f16", all_right())
    cand = write_run(tmp_path / "cand", "q4_0", {**all_right(), **{k: False for k in lost}})
    return base, cand


def test_the_pooled_row_fails_a_drop_no_length_shows(consistent_small_drop):
    result = ctxprobe.compare(*consistent_small_drop, fail_if_drop=0.05, write=False)
    pooled, *lengths = result.gate_rows("q4_0")
    assert pooled.level == "family" and pooled.n == 40 and pooled.diff == pytest.approx(-6 / 40)
    assert pooled.p_value == pytest.approx(2 / 64) and pooled.p_holm == pytest.approx(2 / 64 / 0.8)
    # each length: p = 2 * (1/2)^3 = 0.25, weight 0.1 of the 0.2 still in play after the pooled row
    assert [r.p_holm for r in lengths] == pytest.approx([min(1.0, 0.25 * 0.2 / 0.1)] * 2)
    assert [r.level for r in result.failed] == ["family"] and result.exit_code == 1


def test_junit_and_summary_markdown(consistent_small_drop, tmp_path, monkeypatch, capsys):
    step_summary = tmp_path / "step_summary.md"
    step_summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    junit, summary = tmp_path / "gate.xml", tmp_path / "gate.md"
    code = main(
        [
            "compare",
            *map(str, consistent_small_drop),
            "--fail-if-drop",
            "0.05",
            "--results-dir",
            str(tmp_path / "out"),
            "--no-report",
            "--junit",
            str(junit),
            "--summary-md",
            str(summary),
        ]
    )
    assert code == 1
    xml = JUnitXml.fromfile(str(junit))
    (suite,) = list(xml)
    cases = {case.name: case for case in suite}
    assert suite.tests == 3 and suite.failures == 1 and suite.skipped == 2
    pooled = cases["niah variant=single [prose] all lengths (primary)"]
    (failure,) = pooled.result
    assert isinstance(failure, Failure) and "diff -15.0 points" in failure.message and "n 40 pairs" in failure.message
    (skipped,) = cases["niah variant=single [prose] 1K"].result
    assert isinstance(skipped, Skipped) and skipped.message.startswith("UNDECIDED")
    text = summary.read_text()
    assert (
        text.startswith("### ctxprobe gate: FAIL") and "| q4_0 | niah variant=single [prose] 2K | UNDECIDED |" in text
    )
    assert step_summary.read_text() == "earlier step\n" + text + "\n"


def test_identical_runs_pass_every_row(consistent_small_drop, tmp_path):
    import shutil

    base = consistent_small_drop[0]
    same = shutil.copytree(base, tmp_path / "same-run")  # an identical run in a folder of its own
    junit = tmp_path / "same.xml"
    assert (
        main(
            [
                "compare",
                str(base),
                str(same),
                "--fail-if-drop",
                "0.3",
                "--results-dir",
                str(tmp_path / "o"),
                "--no-report",
                "--junit",
                str(junit),
            ]
        )
        == 0
    )
    (suite,) = list(JUnitXml.fromfile(str(junit)))
    assert suite.tests == 3 and suite.failures == 0 and suite.skipped == 0  # 40 ties: within 30 points


def test_compare_on_a_run_that_stopped_adaptively_reports_anytime_valid_intervals(consistent_small_drop):
    import json

    from ctxprobe.evals.compare.confseq import PairedTally
    from ctxprobe.evals.compare.sequential.betting import betting_cs

    base, cand = consistent_small_drop
    fixed = ctxprobe.compare(base, cand, write=False)
    manifest = json.loads((cand / "manifest.json").read_text())
    (cand / "manifest.json").write_text(json.dumps({**manifest, "stop": {"stop": "decided", "threshold": 0.9}}))
    adaptive = ctxprobe.compare(base, cand, write=False)
    assert adaptive.sequential and "anytime-valid" in adaptive.interval_method and "anytime" in adaptive.p_method
    pooled_fixed, pooled = fixed.gate_rows()[0], adaptive.gate_rows()[0]
    assert (pooled.diff_lo, pooled.diff_hi) == pytest.approx(betting_cs(PairedTally(6, 34, 0)))
    assert pooled.diff_lo < pooled_fixed.diff_lo and pooled.diff_hi > pooled_fixed.diff_hi  # wider: honest
    assert pooled.p_value > pooled_fixed.p_value


def test_compare_on_a_paired_run_judges_as_the_paired_gate(tmp_path):
    """f16 against q4_0 KV as measured on the embedded engine: 136 pairs, 8 lost, none won. The paired gate
    FAILs the pooled row (one-sided, against no drop); compare on the same runs must say the same, with the
    same bounds, although its two-sided p-value alone would not."""
    import json

    from ctxprobe.evals.compare.confseq import PairedTally
    from ctxprobe.evals.compare.paired.verdict import gate_cases
    from ctxprobe.evals.compare.sequential.betting import betting_cs
    from ctxprobe.evals.compare.sequential.gate import SequentialRow, final_verdicts

    keys = [(n, d, s) for n in (1024, 2048) for d in (0.0, 100.0) for s in range(34)]
    lost = [k for k in keys if k[0] == 1024][:4] + [k for k in keys if k[0] == 2048][:4]
    base = write_run(tmp_path / "base", "f16", {k: True for k in keys})
    cand = write_run(tmp_path / "cand", "q4_0", {k: k not in lost for k in keys})
    manifest = json.loads((cand / "manifest.json").read_text())
    (cand / "manifest.json").write_text(json.dumps({**manifest, "stop": {"stop": "decided", "threshold": 0.9}}))
    result = ctxprobe.compare(base, cand, fail_if_drop=0.05, write=False)

    gate = [SequentialRow(primary=True), SequentialRow(primary=False), SequentialRow(primary=False)]
    for row, (losses, n) in zip(gate, [(8, 136), (4, 68), (4, 68)]):
        row.add(losses, n - losses, 0, margin=0.05)
    expected = final_verdicts(gate, margin=0.05, alpha=0.05)
    assert expected == ["FAIL", "UNDECIDED", "UNDECIDED"]
    cases = gate_cases(result)
    assert [c.verdict for c in cases] == expected and result.exit_code == 1
    assert (cases[0].diff_lo, cases[0].diff_hi) == pytest.approx(betting_cs(PairedTally(8, 128, 0), 0.1))
    assert "one-sided" in cases[0].interval
    assert result.gate_rows()[0].p_holm > 0.05  # the two-sided p, Holm-adjusted, would have passed it
