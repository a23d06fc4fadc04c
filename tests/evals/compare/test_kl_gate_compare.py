"""`ctxprobe compare --metric kl`: the KL gate on two finished runs, through the API and the command line.
The runs' records carry top-k lists of the whole (small) vocabulary (`tests.evals.compare.kl_runs`), so
each pair's KL is exact and the pooled row's mean is checked against numpy's sum over the distributions;
the verdicts FAIL a build whose answer distributions moved and PASS one whose did not; a run without
log-probabilities is refused (exit 5), and the CI outputs carry the KL rows."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ctxprobe
from ctxprobe.evals.cli.main import main
from ctxprobe.evals.compare.gate import GateRefused
from ctxprobe.evals.compare.paired.kl_gate import CAP_TIMES, KL_MARGIN
from tests.evals.compare.kl_runs import VOCAB, answer_logprobs, base_dists, shifted, write_logprob_run
from tests.evals.compare.synthetic import DEPTHS, LENGTHS, all_right, write_run

KEYS = [(n, d, s) for n in LENGTHS for d in DEPTHS for s in range(30)]  # 120 pairs


def _runs(tmp_path: Path, amount: float, label: str) -> tuple[Path, Path]:
    base = tmp_path / "base"
    if not base.exists():
        write_logprob_run(base, "f16", lambda k: answer_logprobs(base_dists(k), VOCAB), KEYS)
    cand = write_logprob_run(
        tmp_path / label, label, lambda k: answer_logprobs(shifted(base_dists(k), amount, k), VOCAB), KEYS
    )
    return base, cand


def _exact_kl(key, amount: float) -> float:
    """KL(base || cand) of one sample from its distributions: the mean over its gold positions."""
    p, q = base_dists(key), shifted(base_dists(key), amount, key)
    return float(np.mean([np.sum(a * np.log(a / b)) for a, b in zip(p, q)]))


def test_a_divergent_build_fails_and_an_equal_one_passes(tmp_path):
    base, moved = _runs(tmp_path, 0.6, "q4_0")
    _, same = _runs(tmp_path, 0.01, "f16b")
    result = ctxprobe.compare(base, moved, same, metric="kl", write=False)
    assert result.exit_code == 1 and {r.candidate for r in result.failed} == {"q4_0"}
    assert result.passed is not None and {r.candidate for r in result.passed} == {"f16b"}
    by = {c.candidate: c for c in result.kl.candidates}  # type: ignore[union-attr]
    pooled = {name: next(r for r in c.rows if r.level == "family") for name, c in by.items()}
    exact = float(np.mean([min(_exact_kl(k, 0.6), CAP_TIMES * KL_MARGIN) for k in KEYS]))
    assert pooled["q4_0"].kl == pytest.approx(np.mean([_exact_kl(k, 0.6) for k in KEYS]), rel=1e-9)
    assert pooled["q4_0"].verdict == "FAIL" and pooled["q4_0"].gate_lo > KL_MARGIN  # type: ignore[operator]
    assert pooled["q4_0"].gate_lo <= exact <= pooled["q4_0"].gate_hi  # type: ignore[operator]  # the capped mean
    assert pooled["f16b"].verdict == "PASS" and pooled["f16b"].gate_hi < KL_MARGIN  # type: ignore[operator]
    assert all(r.verdict is None for c in by.values() for r in c.rows if r.level == "cell")


def test_the_command_line_exits_1_and_names_the_rows(tmp_path, capsys):
    base, moved = _runs(tmp_path, 0.6, "q4_0")
    junit = tmp_path / "gate.xml"
    code = main(
        [
            "compare",
            str(base),
            str(moved),
            "--metric",
            "kl",
            "--results-dir",
            str(tmp_path / "out"),
            "--no-report",
            "--junit",
            str(junit),
        ]
    )
    out = capsys.readouterr().out
    assert code == 1 and f"gate --metric kl --kl-margin {KL_MARGIN:g}: FAIL: q4_0 niah" in out
    assert "bounds (capped)" in out and "FAIL" in out.split("KL at depth")[1]
    xml = junit.read_text()
    assert xml.count("<failure") == 3 and "kl: mean" in xml  # the pooled row and both lengths
    written = json.loads(next((tmp_path / "out").glob("*/compare.json")).read_text())
    assert written["metric"] == "kl" and written["kl"]["margin"] == KL_MARGIN


def test_a_wider_margin_passes_what_the_default_fails(tmp_path):
    base, moved = _runs(tmp_path, 0.6, "q4_0")
    mean = ctxprobe.compare(base, moved, write=False).kl.candidates[0].rows[0].kl  # type: ignore[union-attr]
    wide = ctxprobe.compare(base, moved, metric="kl", kl_margin=4 * mean, write=False)
    assert wide.exit_code == 0 and wide.passed and not wide.failed


def test_runs_without_top_k_lists_are_refused(tmp_path, capsys):
    a = write_run(tmp_path / "a", "f16", all_right())
    b = write_run(tmp_path / "b", "q4_0", all_right())
    with pytest.raises(GateRefused, match="--metric kl gate cannot judge"):
        ctxprobe.compare(a, b, metric="kl", write=False)
    assert main(["compare", str(a), str(b), "--metric", "kl", "--results-dir", str(tmp_path / "out")]) == 5
    assert main(["compare", str(a), str(b), "--metric", "kl", "--kl-margin", "0"]) == 2
    err = capsys.readouterr().err
    assert "kl" in err.splitlines()[-1] and "Traceback" not in err


def test_a_cell_of_one_sample_has_no_interval_and_reads_back(tmp_path):
    """One sample a cell: Student's t has no interval there (NaN, written as null in compare.json); the folder
    still reads back for the report, and the table prints '-'."""
    from ctxprobe.evals.records.compare import read_compare

    keys = [(n, d, 0) for n in LENGTHS for d in DEPTHS]
    base = write_logprob_run(tmp_path / "base", "f16", lambda k: answer_logprobs(base_dists(k), VOCAB), keys)
    cand = write_logprob_run(
        tmp_path / "q4_0", "q4_0", lambda k: answer_logprobs(shifted(base_dists(k), 0.6, k), VOCAB), keys
    )
    result = ctxprobe.compare(base, cand, metric="kl", results_dir=tmp_path / "out", html_report=True)
    back = read_compare(Path(result.out_dir))  # type: ignore[arg-type]
    cell = next(r for r in back.kl.candidates[0].rows if r.level == "cell")  # type: ignore[union-attr]
    assert cell.n == 1 and np.isnan(cell.kl_lo) and cell.kl > 0
    assert (Path(result.out_dir) / "report.html").stat().st_size > 0  # type: ignore[arg-type]


def test_compare_warns_where_a_runs_own_cache_path_floor_is_above_the_margins(tmp_path):
    from ctxprobe.evals.compare.paired.kl_gate import margin_for_floor
    from ctxprobe.evals.records.cache_check import CacheCheck

    base, same = _runs(tmp_path, 0.01, "f16b")
    manifest = base / "manifest.json"
    written = json.loads(manifest.read_text())
    noisy = 4 * KL_MARGIN  # a floor whose margin is 4 x FLOOR_TIMES the default's
    written["cache_check"] = CacheCheck(verdict="agrees", checked=3, kl_max=noisy).model_dump(mode="json")
    manifest.write_text(json.dumps(written))
    warned = [w for w in ctxprobe.compare(base, same, metric="kl", write=False).warnings if "NOISE FLOOR" in w]
    assert len(warned) == 1 and warned[0].startswith("NOISE FLOOR: f16's")
    assert f"{margin_for_floor(noisy):.3g} nats" in warned[0]
    assert not [
        w
        for w in ctxprobe.compare(base, same, metric="kl", kl_margin=margin_for_floor(noisy), write=False).warnings
        if "NOISE FLOOR" in w
    ]
    assert not [w for w in ctxprobe.compare(base, same, write=False).warnings if "NOISE FLOOR" in w]  # not gating kl
