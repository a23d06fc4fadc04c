"""The `--fail-if-drop` gate refuses, with exit code 5 and one line, what it cannot judge: a run that did
not finish (the attack's candidate at 46 of 110 samples passed), a run against itself, runs of different
suites. Without the gate the same facts are warnings; `history` lists the unfinished runs it left out."""

from __future__ import annotations

from pathlib import Path

import pytest

import ctxprobe
from ctxprobe.evals.cli.main import main
from tests.evals.compare.synthetic import all_right, grid, write_run

HALF = dict(list(all_right().items())[:18])  # 18 of 40 samples, as a run still going


@pytest.mark.parametrize(
    "case, reason",
    [
        ("running", "cand is not finished (status running, 18 of ? samples)"),
        ("killed", "cand is not finished (status interrupted, 18 of ? samples)"),
        ("baseline_running", "base is not finished (status running"),
        ("itself", "is the baseline itself"),
        ("other_suite", "ran another suite than the baseline (name: 'quick' vs 'nightly')"),
        ("other_lengths", "ran another suite than the baseline (lengths: [1024, 2048] vs [1024])"),
    ],
)
def test_the_gate_refuses_in_one_line_with_code_5(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, reason: str
) -> None:
    base = write_run(
        tmp_path / "base", "base", all_right(), status="running" if case == "baseline_running" else "finished"
    )
    cand = {
        "running": lambda: write_run(tmp_path / "cand", "cand", HALF, status="running"),
        "killed": lambda: write_run(tmp_path / "cand", "cand", HALF, status="interrupted"),
        "baseline_running": lambda: write_run(tmp_path / "cand", "cand", all_right()),
        "itself": lambda: base,
        "other_suite": lambda: write_run(tmp_path / "cand", "cand", all_right(), suite="nightly"),
        "other_lengths": lambda: write_run(tmp_path / "cand", "cand", {k: True for k in grid() if k[0] == 1024}),
    }[case]()
    out = ["--results-dir", str(tmp_path / "out"), "--no-report"]
    assert main(["compare", str(base), str(cand), "--fail-if-drop", "0.05", *out]) == 5
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ctxprobe: error: the --fail-if-drop gate cannot judge: ")
    assert reason in err[0]
    assert not (tmp_path / "out").exists()  # nothing written for a refused gate
    assert main(["compare", str(base), str(cand), *out]) == 0  # without the gate: shown, with a warning
    assert "ctxprobe: warning: " in capsys.readouterr().err


def test_finished_runs_of_one_suite_pass_the_gate(tmp_path: Path) -> None:
    base = write_run(tmp_path / "base", "base", all_right())
    cand = write_run(tmp_path / "cand", "cand", all_right())
    assert (
        main(
            [
                "compare",
                str(base),
                str(cand),
                "--fail-if-drop",
                "0.05",
                "--results-dir",
                str(tmp_path / "o"),
                "--no-report",
            ]
        )
        == 6
    )  # judged, not refused (5): 40 tied pairs at 0.05 are UNDECIDED


def test_history_lists_the_runs_it_skipped_and_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "results"
    write_run(results / "n1", "nightly", all_right(), created=1.0)
    write_run(results / "n2", "nightly", all_right(), created=2.0)
    write_run(results / "killed", "nightly", HALF, created=3.0, status="running")
    write_run(results / "lost", "nightly", HALF, created=4.0, status="endpoint_lost")
    (results / "broken").mkdir()
    (results / "broken" / "manifest.json").write_bytes(b"\xff\xfe{")
    result = ctxprobe.history(results, label="nightly", write=False)
    assert [r.path for r in result.runs] == [str(results / "n1"), str(results / "n2")]
    assert sorted(s.split(":")[0] for s in result.skipped) == ["broken", "killed", "lost"]
    assert "killed: not finished (status running, 18 of ? samples done)" in result.skipped
    assert main(["history", str(results), "--label", "nightly"]) == 0
    out = capsys.readouterr().out
    assert "skipped killed: not finished (status running" in out and "skipped lost: not finished" in out
