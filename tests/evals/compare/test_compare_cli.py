"""`ctxprobe compare` through the command line: the gate's exit codes and the files it writes."""

import json
from pathlib import Path

import pandas as pd
import pytest

from ctxprobe.evals.cli.main import main
from tests.evals.compare.synthetic import all_right, grid, write_run


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    """Candidate loses 8 of 20 pairs at 2K (8 discordant, none the other way: p = 2/256), none at 1K."""
    lost = [k for k in grid() if k[0] == 2048][:8]
    base = write_run(tmp_path / "runs" / "base", "f16", all_right(), created=1.0)
    cand = write_run(tmp_path / "runs" / "cand", "q4", {**all_right(), **{k: False for k in lost}}, created=2.0)
    return base, cand


def _compare(*args: str) -> int:
    return main(["compare", *args])


def test_gate_fails_on_a_significant_drop_and_names_the_row(runs, tmp_path, capsys):
    code = _compare(*map(str, runs), "--fail-if-drop", "0.05", "--results-dir", str(tmp_path / "out"))
    out = capsys.readouterr().out
    assert code == 1
    assert "gate --fail-if-drop 0.05: FAIL: q4 niah" in out and "2K -40" in out
    assert "1K" not in out.split("FAIL:")[1]


def test_gate_passes_when_the_drop_is_within_the_margin_or_absent(runs, tmp_path, capsys):
    assert _compare(*map(str, runs), "--fail-if-drop", "0.5", "--results-dir", str(tmp_path / "out")) == 0
    assert "gate --fail-if-drop 0.5: PASS" in capsys.readouterr().out


def test_bad_input_exits_2_in_one_line(runs, tmp_path, capsys):
    assert _compare(str(runs[0]), str(tmp_path / "missing")) == 2
    assert _compare(*map(str, runs), "--alpha", "1.5") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "not a run folder" in err[0] and "--alpha" in err[1]


def test_outputs_record_their_inputs(runs, tmp_path, capsys):
    _compare(*map(str, runs), "--results-dir", str(tmp_path / "out"))
    (folder,) = (tmp_path / "out").iterdir()
    assert folder.name.endswith("-compare-f16-vs-q4")
    data = json.loads((folder / "compare.json").read_text())
    assert data["baseline"]["path"] == str(runs[0]) and data["candidates"][0]["label"] == "q4"
    assert data["baseline"]["suite"] == "quick" and "exact paired" in data["interval_method"]
    table = pd.read_csv(folder / "compare.csv")
    pooled = table[(table.level == "family_length") & (table.context_tokens == 2048)].iloc[0]
    assert pooled["diff"] == pytest.approx(-0.4) and pooled.p_value == pytest.approx(2 / 256)
    assert pooled.p_holm == pytest.approx(2 * 2 / 256) and pooled.significant
    assert "| 2K | all | 20 | 100% | 60% | -40 |" in (folder / "compare.md").read_text()
    assert (folder / "diff_heatmap_q4_niah.png").stat().st_size > 10_000


def test_compare_writes_its_report_page_unless_told_not_to(runs, tmp_path, capsys):
    _compare(*map(str, runs), "--results-dir", str(tmp_path / "with"))
    (folder,) = (tmp_path / "with").iterdir()
    page = (folder / "report.html").read_text()
    assert "q4" in page and "<script" not in page
    _compare(*map(str, runs), "--no-report", "--results-dir", str(tmp_path / "without"))
    (folder,) = (tmp_path / "without").iterdir()
    assert not (folder / "report.html").exists() and (folder / "compare.json").exists()
