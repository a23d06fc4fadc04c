"""`compare --metric p_answer`: the answer probability's paired difference beside accuracy, its gate (FAIL
on a build that answers right but less surely, which accuracy cannot see; PASS where nothing moved), rows
whose pairs lack it saying so, and the CI outputs showing both metrics."""

from pathlib import Path

import numpy as np
import pytest

import ctxprobe
from ctxprobe.evals.cli.main import main
from ctxprobe.evals.compare.gate import GateRefused
from ctxprobe.evals.compare.paired.verdict import gate_cases
from tests.evals.compare.synthetic import all_right, grid, write_run


def _probs(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    return {k: float(0.6 + 0.35 * rng.random()) for k in grid()}


@pytest.fixture
def less_sure(tmp_path: Path) -> tuple[Path, Path, dict, dict]:
    """Both builds answer all 40 right; the candidate's answer probability is 0.3 lower on every pair."""
    base_p = _probs(1)
    cand_p = {k: p - 0.3 for k, p in base_p.items()}
    base = write_run(tmp_path / "base", "f16", all_right(), p_answer=base_p)
    cand = write_run(tmp_path / "cand", "q4_0", all_right(), p_answer=cand_p)
    return base, cand, base_p, cand_p


def test_p_answer_fails_a_build_that_answers_right_but_less_surely(less_sure):
    base, cand, base_p, cand_p = less_sure
    binary = ctxprobe.compare(base, cand, fail_if_drop=0.05, write=False)
    assert binary.exit_code == 6 and not binary.failed  # accuracy sees no drop (UNDECIDED at 40 pairs)
    result = ctxprobe.compare(base, cand, fail_if_drop=0.05, write=False, metric="p_answer")
    assert result.metric == "p_answer" and result.exit_code == 1
    pooled = result.gate_rows("q4_0")[0]
    assert pooled.level == "family" and pooled.p_answer is not None
    by_hand = [cand_p[k] - base_p[k] for k in grid()]
    assert pooled.p_answer.n == 40 and pooled.p_answer.missing == 0
    assert pooled.p_answer.diff == pytest.approx(sum(by_hand) / 40)
    assert pooled.p_answer.base == pytest.approx(sum(base_p.values()) / 40)
    assert pooled.p_answer.lo < -0.3 < pooled.p_answer.hi < 0
    assert pooled in result.failed
    # the binary columns are what they were: all right on both sides
    assert (pooled.base_correct, pooled.cand_correct, pooled.diff) == (40, 40, 0.0)


def test_nothing_moved_passes_on_p_answer(tmp_path):
    probs = _probs(2)
    base = write_run(tmp_path / "base", "f16", all_right(), p_answer=probs)
    cand = write_run(tmp_path / "cand", "f16b", all_right(), p_answer=probs)
    result = ctxprobe.compare(base, cand, fail_if_drop=0.3, write=False, metric="p_answer")
    assert result.exit_code == 0
    assert {r.level for r in result.passed or []} == {"family", "family_length"}
    cases = gate_cases(result)
    assert all(c.verdict == "PASS" and c.metric == "p_answer" and c.other.startswith("correct:") for c in cases)


def test_rows_without_p_answer_say_so(tmp_path, capsys):
    probs = _probs(3)
    half = {k: p for k, p in probs.items() if k[0] == 1024}  # the 2K samples have none on the candidate
    base = write_run(tmp_path / "base", "f16", all_right(), p_answer=probs)
    cand = write_run(
        tmp_path / "cand", "q4_0", all_right(), p_answer={**half, **{k: "unavailable" for k in grid() if k[0] == 2048}}
    )
    result = ctxprobe.compare(base, cand, write=False)
    pooled, at_1k, at_2k = result.gate_rows("q4_0")
    assert pooled.p_answer is not None and (pooled.p_answer.n, pooled.p_answer.missing) == (20, 20)
    assert at_1k.p_answer is not None and at_2k.p_answer is None  # never a zero difference
    code = main(["compare", str(base), str(cand), "--results-dir", str(tmp_path / "out"), "--no-report"])
    out = capsys.readouterr().out
    assert code == 0 and "p_ans diff [95% CS]" in out and "no p_answer" in out and "20/40" in out
    # no pair with answer probabilities at all: the p_answer gate refuses (exit 5), it does not pass
    plain = write_run(tmp_path / "plain", "q8", all_right())
    with pytest.raises(GateRefused, match="no pair has answer probabilities"):
        ctxprobe.compare(base, plain, fail_if_drop=0.05, write=False, metric="p_answer")
    assert (
        main(
            [
                "compare",
                str(base),
                str(plain),
                "--fail-if-drop",
                "0.05",
                "--metric",
                "p_answer",
                "--results-dir",
                str(tmp_path / "out2"),
            ]
        )
        == 5
    )


def test_ci_outputs_show_both_metrics(less_sure, tmp_path, capsys):
    base, cand, _, _ = less_sure
    junit, summary = tmp_path / "gate.xml", tmp_path / "gate.md"
    code = main(
        [
            "compare",
            str(base),
            str(cand),
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
    assert code == 6  # gated on correctness: no drop, UNDECIDED at 40 pairs
    text = summary.read_text()
    assert "(on correct)" in text and "beside it" in text and "p_answer: diff -30.0 points" in text
    assert "beside it p_answer: diff -30.0" in junit.read_text()
    out = capsys.readouterr().out
    assert (
        "gate --fail-if-drop 0.05: UNDECIDED" in out and "### ctxprobe gate: UNDECIDED" in text
    )  # 40 tied pairs: [-12, +12]
