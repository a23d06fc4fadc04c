"""One gate, one word: for the same comparison, the terminal line, compare.md, compare.json, the HTML report, the
JUnit file and the markdown summary all say PASS, FAIL or UNDECIDED alike. Six pairs with an interval of
[-59, +59] points once printed "gate: pass" while JUnit and compare.json said UNDECIDED; each word here is
also checked against the intervals compare.json records (a PASS lies wholly within the margin)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ctxprobe.evals.cli.main import main
from tests.evals.compare.synthetic import all_right, grid, write_run

MARGIN = 0.3


def _runs(tmp: Path, case: str) -> tuple[Path, Path]:
    if case == "FAIL":  # 8 of 20 pairs lost at 2K, none won: a significant drop of 40 points
        lost = [k for k in grid() if k[0] == 2048][:8]
        base, cand = all_right(), {**all_right(), **{k: False for k in lost}}
    elif case == "PASS":  # 40 pairs, all tied: the interval lies within the margin
        base, cand = all_right(), all_right()
    else:  # six pairs, one lost and one won: an interval far wider than the margin either way
        keys = grid()[:6]
        base = {k: i != 0 for i, k in enumerate(keys)}
        cand = {k: i != 1 for i, k in enumerate(keys)}
    return (
        write_run(tmp / "runs" / "base", "f16", base, created=1.0),
        write_run(tmp / "runs" / "cand", "q4", cand, created=2.0),
    )


def _junit_word(path: Path) -> str:
    root = ET.parse(path).getroot()
    cases = root.findall(".//testcase")
    if any(c.find("failure") is not None for c in cases):
        return "FAIL"
    primary = [c for c in cases if c.get("name", "").endswith("(primary)")]
    return "UNDECIDED" if any(c.find("skipped") is not None for c in primary) else "PASS"


def _gate_word(text: str) -> str:
    found = re.findall(r"gate --fail-if-drop [0-9.]+: (PASS|FAIL|UNDECIDED|pass)", text, flags=re.IGNORECASE)
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize("case", ["PASS", "FAIL", "UNDECIDED"])
def test_every_output_says_the_same_word(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base, cand = _runs(tmp_path, case)
    junit, summary = tmp_path / "ci" / "gate.xml", tmp_path / "ci" / "gate.md"
    capsys.readouterr()
    code = main(
        [
            "compare",
            str(base),
            str(cand),
            "--fail-if-drop",
            str(MARGIN),
            "--results-dir",
            str(tmp_path / "out"),
            "--junit",
            str(junit),
            "--summary-md",
            str(summary),
        ]
    )
    terminal = capsys.readouterr().out
    (folder,) = (tmp_path / "out").iterdir()
    data = json.loads((folder / "compare.json").read_text())
    words = {
        "terminal": _gate_word(terminal),
        "compare.md": _gate_word((folder / "compare.md").read_text()),
        "compare.json": data["verdict"],
        "report": re.search(
            r"Gate --fail-if-drop [0-9.]+: (?:<span class=\"bad\">)?(PASS|FAIL|UNDECIDED|pass)",
            (folder / "report.html").read_text(),
        ).group(1),  # type: ignore[union-attr]
        "junit": _junit_word(junit),
        "summary": re.search(r"^### ctxprobe gate: (\w+)", summary.read_text(), flags=re.M).group(1),  # type: ignore[union-attr]
    }
    assert set(words.values()) == {case}, words
    assert code == {"FAIL": 1, "PASS": 0, "UNDECIDED": 6}[case]  # UNDECIDED: `run --against`'s code too
    # the word against the intervals compare.json records, computed here: PASS when every pooled row's
    # interval lies above -margin, FAIL when a row was failed, else UNDECIDED
    pooled = [r for r in data["rows"] if r["level"] == "family"]
    expected = "FAIL" if data["failed"] else "PASS" if all(r["diff_lo"] > -MARGIN for r in pooled) else "UNDECIDED"
    assert expected == case


def test_six_pairs_with_a_wide_interval_are_undecided_not_a_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, cand = _runs(tmp_path, "UNDECIDED")
    capsys.readouterr()
    assert (
        main(
            [
                "compare",
                str(base),
                str(cand),
                "--fail-if-drop",
                "0.05",
                "--results-dir",
                str(tmp_path / "out"),
                "--no-report",
            ]
        )
        == 6
    )
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("gate --fail-if-drop"))
    assert line.startswith("gate --fail-if-drop 0.05: UNDECIDED: q4 niah") and ", 6 pairs (" in line, line
    assert "pass" not in line.lower().split("undecided")[0]


@pytest.mark.parametrize(("undecided", "code"), [("exit", 6), ("fail", 1), ("pass", 0)])
def test_undecided_exits_as_run_against_does(
    undecided: str, code: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`compare --undecided` maps UNDECIDED as `run --against --undecided` does, and its code is the run's."""
    from ctxprobe.evals.run.result import ExitCode

    base, cand = _runs(tmp_path, "UNDECIDED")
    assert (
        main(
            [
                "compare",
                str(base),
                str(cand),
                "--fail-if-drop",
                "0.05",
                "--undecided",
                undecided,
                "--results-dir",
                str(tmp_path / "out"),
                "--no-report",
            ]
        )
        == code
    )
    assert ExitCode.UNDECIDED == 6 and "6    a gate is UNDECIDED" in capsys.readouterr().out + _help("compare")


def test_undecided_without_a_gate_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base, cand = _runs(tmp_path, "UNDECIDED")
    assert main(["compare", str(base), str(cand), "--undecided", "pass", "--results-dir", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--undecided pass needs a gate" in err[0]
    assert not (tmp_path / "out").exists()


def _help(command: str) -> str:
    from ctxprobe.evals.cli.main import build_parser

    parser = build_parser(command)
    return parser._subparsers._group_actions[0].choices[command].format_help()  # type: ignore[union-attr]


def test_an_undecided_gate_names_what_is_short_pairs_or_chains(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Independent pairs: 'more pairs are needed'; a nested run's rows pool chains, so '30 pairs in 2 chains'
    and 'more chains are needed'."""
    from ctxprobe.evals.compare.paired.verdict import undecided_text
    from ctxprobe.evals.records.compare import read_compare

    base, cand = _runs(tmp_path, "UNDECIDED")
    main(["compare", str(base), str(cand), "--fail-if-drop", str(MARGIN), "--results-dir", str(tmp_path / "out")])
    capsys.readouterr()
    (folder,) = (tmp_path / "out").iterdir()
    result = read_compare(folder)
    text = undecided_text(result)
    assert re.search(r", 6 pairs \(the interval reaches past the margin: more pairs are needed to PASS\)$", text)
    nested = result.model_copy(
        update={"rows": [r.model_copy(update={"clusters": 2}) if r.level == "family" else r for r in result.rows]}
    )
    text = undecided_text(nested)
    assert ", 6 pairs in 2 chains (the interval reaches past the margin: more chains are needed to PASS" in text
    from ctxprobe.evals.compare.sequential.gate import fewest_to_pass

    fewest = fewest_to_pass(MARGIN, result.alpha / 2)  # compare's chain rows read a two-sided 95 % sequence
    assert text.endswith(f"; at this margin a row of chains PASSes from {fewest} at the fewest, every chain equal)")
