"""`ctxprobe run --against BASELINE --fail-if-drop MARGIN` against the fake engine: a candidate that answers
wrong on a fixed share of prompts stops early with FAIL, having sent fewer samples than the baseline holds;
an identical candidate stops with PASS; rows that run out of pairs are UNDECIDED (exit 6, or as told)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from junitparser import JUnitXml

from ctxprobe.evals.cli.main import main
from tests.evals.test_run_sequential import ASKED, NEEDLE, _finds_the_needle
from tests.runners.fake_engine import FakeEngine


def _wrong_on_odd_values(body: dict[str, Any]) -> str:
    """Finds the needle, but answers wrong whenever its value is odd (about half of the prompts)."""
    text = str(body.get("prompt") or " ".join(str(m.get("content", "")) for m in body.get("messages", [])))
    asked = ASKED.search(text)
    values = dict(NEEDLE.findall(text))
    value = values.get(asked.group(1)) if asked else None
    return "I could not find it." if value is None or int(value) % 2 else f"{value}."


def _baseline(tmp_path: Path, samples: int = 20, *extra: str) -> Path:
    with FakeEngine("vllm", context_length=8192, answer=_finds_the_needle) as engine:
        assert (
            main(
                [
                    "run",
                    "--endpoint",
                    engine.url,
                    "--family",
                    "niah",
                    "--lengths",
                    "1k,2k",
                    "--depths",
                    "0,100",
                    "--samples",
                    str(samples),
                    *extra,
                    "--quiet",
                    "--no-report",
                    "--label",
                    "base",
                    "--results-dir",
                    str(tmp_path / "base"),
                ]
            )
            == 0
        )
    return next((tmp_path / "base").iterdir())


def _against(url: str, baseline: Path, out: Path, *extra: str) -> int:
    return main(
        [
            "run",
            "--endpoint",
            url,
            "--against",
            str(baseline),
            "--quiet",
            "--no-report",
            "--label",
            "cand",
            "--results-dir",
            str(out),
            *extra,
        ]
    )


def _gate(out: Path) -> dict[str, Any]:
    return json.loads((next(out.iterdir()) / "manifest.json").read_text())["paired_gate"]


def test_a_worse_candidate_fails_early_and_an_identical_one_passes(tmp_path: Path, capsys) -> None:
    baseline = _baseline(tmp_path)
    with FakeEngine("vllm", context_length=8192, answer=_wrong_on_odd_values) as worse:
        code = _against(worse.url, baseline, tmp_path / "worse", "--fail-if-drop", "0.2")
        sent_worse = len(worse.completion_calls())
    assert code == 1
    gate = _gate(tmp_path / "worse")
    pooled = next(r for r in gate["rows"] if r["primary"])
    assert gate["verdict"] == "FAIL" and pooled["verdict"] == "FAIL" and pooled["diff"] < -0.2
    assert pooled["p_fail"] < 0.05 * 0.8 and pooled["wins"] == 0 < pooled["losses"]
    assert sent_worse == pooled["n"] < pooled["baseline_samples"] == 80 and sent_worse % 4 == 0  # whole rounds
    manifest = json.loads((next((tmp_path / "worse").iterdir()) / "manifest.json").read_text())
    assert manifest["fixed_grid_prompt_tokens"] == 20 * 2 * (1024 + 2048)  # every baseline sample sent
    assert manifest["prompt_tokens_sent"] < manifest["fixed_grid_prompt_tokens"]
    assert "FAIL" in capsys.readouterr().out

    with FakeEngine("vllm", context_length=8192, answer=_finds_the_needle) as same:
        code = _against(
            same.url, baseline, tmp_path / "same", "--fail-if-drop", "0.2", "--junit", str(tmp_path / "same.xml")
        )
        sent_same = len(same.completion_calls())
    gate = _gate(tmp_path / "same")
    pooled = next(r for r in gate["rows"] if r["primary"])
    assert code == 0 and gate["verdict"] == "PASS" and pooled["diff_lo"] > -0.2
    assert sent_same == pooled["n"] < 80 and pooled["losses"] == pooled["wins"] == 0
    (suite,) = list(JUnitXml.fromfile(str(tmp_path / "same.xml")))
    assert suite.tests == 3 and suite.failures == 0  # the pooled row passed; per-length rows passed or skipped
    # the bounds are named as what they are: each one-sided, valid at the stop (not a fixed-n 95 % interval)
    passed = [case for case in suite if not case.result]
    assert passed and all("anytime-valid bounds (each one-sided 95%)" in (case.system_out or "") for case in passed)


def test_rows_left_undecided_exit_4_unless_told(tmp_path: Path) -> None:
    baseline = _baseline(tmp_path, samples=2)  # 8 pairs: too few to decide a 5-point margin
    with FakeEngine("vllm", context_length=8192, answer=_finds_the_needle) as same:
        assert _against(same.url, baseline, tmp_path / "a", "--fail-if-drop", "0.05") == 6
        assert _against(same.url, baseline, tmp_path / "b", "--fail-if-drop", "0.05", "--undecided", "pass") == 0
        assert len(same.completion_calls()) == 16  # every baseline sample, twice
    assert {r["verdict"] for r in _gate(tmp_path / "a")["rows"]} == {"UNDECIDED"}


def test_a_baseline_that_is_not_a_run_is_one_line(tmp_path: Path, capsys) -> None:
    with FakeEngine("vllm", context_length=8192) as engine:
        assert _against(engine.url, tmp_path / "missing", tmp_path / "out") == 2
        assert not engine.completion_calls()
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_a_nested_baseline_of_too_few_chains_is_said_to_fail_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """3 chains cannot PASS a 5-point margin (98 at the fewest): the run says so before it sends, and an
    identical candidate ends UNDECIDED, as the line said."""
    baseline = _baseline(tmp_path, 3, "--layout", "nested")
    capsys.readouterr()
    with FakeEngine("vllm", context_length=8192, answer=_finds_the_needle) as engine:
        code = _against(engine.url, baseline, tmp_path / "cand", "--fail-if-drop", "0.05")
    err = capsys.readouterr().err
    assert code == 6 and _gate(tmp_path / "cand")["verdict"] == "UNDECIDED"
    assert "ctxprobe: --against: the baseline's nested families hold 3 chains (niah)" in err
    assert "PASSes at this margin from 98 at the fewest" in err and "can FAIL the candidate but not PASS it" in err
