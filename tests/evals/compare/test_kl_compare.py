"""KL at depth through `ctxprobe.compare` on hand-built runs whose records carry logprobs: the cell means
against an independent computation from the distributions behind the records, what is left out and how
it is said, and the table, heatmap and report section written."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from matplotlib.image import imread

import ctxprobe
from ctxprobe.evals.cli.main import main
from ctxprobe.evals.compare.outputs import render_markdown, render_text
from ctxprobe.evals.compare.paired.kl import comparable, sample_kl
from ctxprobe.evals.compare.paired.kl_text import kl_number
from ctxprobe.evals.compare.paired.pairing import Pair
from ctxprobe.evals.records.compare import COMPARE_JSON
from ctxprobe.runners.response import AnswerLogprobs, TokenLogprob
from tests.evals.compare.kl_runs import VOCAB, answer_logprobs, base_dists, shifted, write_logprob_run
from tests.evals.compare.synthetic import grid
from tests.evals.factories import make_record

T_975_DF9 = 2.262157  # Student t, two-sided 95 %, 9 degrees of freedom (printed tables)


def noise(key) -> float:
    """The candidate's logit noise: small at 1K, larger at 2K, largest at 2K and 100 % depth."""
    length, depth, _ = key
    return 0.1 if length == 1024 else (0.4 if depth == 0.0 else 1.2)


def candidate_dists(key) -> list[np.ndarray]:
    return shifted(base_dists(key), noise(key), key)


@pytest.fixture
def full_vocab_runs(tmp_path: Path) -> tuple[Path, Path]:
    base = write_logprob_run(tmp_path / "base", "f16", lambda k: answer_logprobs(base_dists(k), VOCAB))
    cand = write_logprob_run(tmp_path / "cand", "q4_0", lambda k: answer_logprobs(candidate_dists(k), VOCAB))
    return base, cand


def test_identical_runs_have_no_divergence_and_full_agreement(tmp_path: Path):
    base = write_logprob_run(tmp_path / "a", "f16", lambda k: answer_logprobs(base_dists(k), 3))
    cand = write_logprob_run(tmp_path / "b", "again", lambda k: answer_logprobs(base_dists(k), 3))
    kl = ctxprobe.compare(base, cand, write=False).kl
    assert kl is not None and kl.candidates[0].pairs == 40 and kl.candidates[0].left_out == {}
    rows = kl.candidates[0].rows
    assert {(r.level, r.n, r.positions) for r in rows} == {
        ("family", 40, 120),
        ("family_length", 20, 60),
        ("cell", 10, 30),
    }
    assert all(abs(r.kl) < 1e-12 and r.top1 == 1.0 and r.top1_hi == 1.0 and r.top1_lo < 1.0 for r in rows)


def test_cell_means_match_an_independent_computation_from_the_distributions(full_vocab_runs):
    kl = ctxprobe.compare(*full_vocab_runs, write=False).kl
    assert kl is not None
    cells = {(r.context_tokens, r.depth): r for r in kl.candidates[0].rows if r.level == "cell"}
    assert len(cells) == 4
    for (length, depth), row in cells.items():
        per_sample, agree = [], []
        for key in [k for k in grid() if k[0] == length and k[1] == depth]:
            p, q = base_dists(key), candidate_dists(key)
            per_sample.append(np.mean([np.sum(a * np.log(a / b)) for a, b in zip(p, q)]))
            agree.append(np.mean([np.argmax(a) == np.argmax(b) for a, b in zip(p, q)]))
        half = T_975_DF9 * np.std(per_sample, ddof=1) / math.sqrt(10)
        assert row.kl == pytest.approx(np.mean(per_sample), rel=1e-9)
        assert (row.kl_lo, row.kl_hi) == pytest.approx(
            (max(0.0, np.mean(per_sample) - half), np.mean(per_sample) + half), rel=1e-6
        )
        assert row.top1 == pytest.approx(np.mean(agree)) and row.base_rest == pytest.approx(0.0, abs=1e-12)
    # the worse the build at a cell, the more KL there: depth 100 % at 2K apart from 1K
    assert cells[(2048, 100.0)].kl_lo > cells[(1024, 100.0)].kl_hi
    assert cells[(2048, 100.0)].kl > cells[(2048, 0.0)].kl > cells[(1024, 0.0)].kl


def test_a_small_top_k_reads_less_kl_than_the_full_vocabulary_and_says_what_it_cannot_see(tmp_path: Path):
    base = write_logprob_run(tmp_path / "a", "f16", lambda k: answer_logprobs(base_dists(k), 2))
    cand = write_logprob_run(tmp_path / "b", "q4_0", lambda k: answer_logprobs(candidate_dists(k), 2))
    kl = ctxprobe.compare(base, cand, write=False).kl
    assert kl is not None
    pooled = next(r for r in kl.candidates[0].rows if r.level == "family")
    exact = np.mean(
        [np.mean([np.sum(a * np.log(a / b)) for a, b in zip(base_dists(k), candidate_dists(k))]) for k in grid()]
    )
    assert 0.0 < pooled.kl <= exact and pooled.top_k == 2 and pooled.base_rest > 0.0


def test_pairs_without_logprobs_are_left_out_and_counted_once(tmp_path: Path):
    keys = grid()
    missing, unavailable = set(keys[:5]), set(keys[5:8])

    def cand_logprobs(key):
        if key in missing:
            return None
        return "unavailable" if key in unavailable else answer_logprobs(candidate_dists(key), 3)

    base = write_logprob_run(tmp_path / "a", "f16", lambda k: answer_logprobs(base_dists(k), 3))
    cand = write_logprob_run(tmp_path / "b", "q4_0", cand_logprobs)
    result = ctxprobe.compare(base, cand, write=False)
    assert result.kl is not None
    assert result.kl.candidates[0].pairs == 32
    assert result.kl.candidates[0].left_out == {"candidate logprobs unavailable": 3, "candidate without logprobs": 5}
    text = render_text(result)
    assert text.count("left out: 3 candidate logprobs unavailable, 5 candidate without logprobs") == 1
    assert next(r for r in result.kl.candidates[0].rows if r.level == "family").n == 32


def test_prompts_or_gold_tokens_that_differ_are_left_out(tmp_path: Path):
    base = write_logprob_run(tmp_path / "a", "f16", lambda k: answer_logprobs(base_dists(k), 3))
    other_tokenizer = write_logprob_run(
        tmp_path / "b", "hf", lambda k: answer_logprobs(base_dists(k), 3), tokenizer="hf:other"
    )
    other_gold = write_logprob_run(tmp_path / "c", "gold", lambda k: answer_logprobs(base_dists(k), 3, gold=[3, 1, 5]))
    kl = ctxprobe.compare(base, other_tokenizer, other_gold, write=False).kl
    assert kl is not None
    assert [(c.pairs, c.left_out) for c in kl.candidates] == [
        (0, {"prompts differ": 40}),
        (0, {"gold tokens differ": 40}),
    ]


def test_no_logprobs_gives_one_clear_line_not_a_table_nor_a_traceback(tmp_path: Path, capsys):
    base = write_logprob_run(tmp_path / "runs" / "a", "f16", lambda k: None)
    cand = write_logprob_run(tmp_path / "runs" / "b", "q4_0", lambda k: "unavailable")
    code = main(["compare", str(base), str(cand), "--results-dir", str(tmp_path / "out")])
    captured = capsys.readouterr()
    assert code == 0 and "Traceback" not in captured.out + captured.err
    lines = [line for line in captured.out.splitlines() if line.startswith("KL at depth")]
    assert lines == [
        "KL at depth: not computed: no pair has answer logprobs on both sides (q4_0: 40 baseline "
        "without logprobs); run both with --logprobs on an engine that gives them"
    ]
    folder = next((tmp_path / "out").iterdir())
    assert not list(folder.glob("kl_heatmap_*.png"))
    assert json.loads((folder / COMPARE_JSON).read_text())["kl"]["candidates"][0]["pairs"] == 0
    assert "KL at depth: not computed: no pair has answer logprobs" in (folder / "report.html").read_text()


def test_table_heatmap_and_report_are_written(full_vocab_runs, tmp_path: Path):
    result = ctxprobe.compare(*full_vocab_runs, results_dir=tmp_path / "out")
    folder = Path(result.out_dir or "")
    png = folder / "kl_heatmap_q4_0_niah.png"
    assert str(png) in result.files
    image = imread(png)
    assert image.ndim == 3 and image.shape[0] > 300 and image.shape[1] > 500
    row = next(
        r
        for r in result.kl.candidates[0].rows
        if r.level == "cell"
        and r.context_tokens == 2048  # type: ignore[union-attr]
        and r.depth == 100.0
    )
    shown = kl_number(row.kl)
    assert shown == f"{row.kl:.3g}"
    text = render_text(result)
    assert "KL at depth" in text
    assert any(line.split()[:5] == ["length", "depth", "n", "positions", "KL"] for line in text.splitlines())
    assert any(line.split()[:3] == ["2K", "100%", "10"] and shown in line for line in text.splitlines())
    markdown = render_markdown(result)
    assert "## KL at depth" in markdown and f"| 2K | 100% | 10 | 30 | {shown} |" in markdown
    page = (folder / "report.html").read_text()
    assert "<h3>KL at depth</h3>" in page and shown in page and 'alt="kl_heatmap_q4_0_niah.png"' in page


def test_a_comparison_written_before_kl_reads_and_says_so(full_vocab_runs, tmp_path: Path):
    result = ctxprobe.compare(*full_vocab_runs, results_dir=tmp_path / "out", html_report=False)
    folder = Path(result.out_dir or "")
    data = json.loads((folder / COMPARE_JSON).read_text())
    del data["kl"]
    (folder / COMPARE_JSON).write_text(json.dumps(data))
    page = ctxprobe.report([folder], tmp_path / "page.html").read_text()
    assert "KL at depth: this comparison was written before KL at depth was computed" in page


def _entry(token: str, p: float, id: int | None = None) -> TokenLogprob:
    return TokenLogprob(token=token, logprob=math.log(p), id=id)


def test_tokens_without_ids_are_matched_by_text():
    base = AnswerLogprobs(
        gold="a", logprobs=[math.log(0.6)], top=[[_entry("a", 0.6), _entry("b", 0.3)]], method="generated"
    )
    cand = AnswerLogprobs(
        gold="a", logprobs=[math.log(0.4)], top=[[_entry("b", 0.5), _entry("a", 0.4)]], method="generated"
    )
    got = sample_kl(base, cand)
    assert got.top1 == 0.0 and got.positions == 1 and got.top_k == 2
    assert got.kl == pytest.approx(0.6 * math.log(0.6 / 0.4) + 0.3 * math.log(0.3 / 0.5) + 0.1 * math.log(0.1 / 0.1))


def test_the_gold_token_outside_the_top_k_is_known_on_both_sides():
    base = AnswerLogprobs(
        gold="x", token_ids=[2], logprobs=[math.log(0.2)], top=[[_entry("a", 0.7, 0)]], method="generated"
    )
    cand = AnswerLogprobs(
        gold="x", token_ids=[2], logprobs=[math.log(0.05)], top=[[_entry("a", 0.7, 0)]], method="generated"
    )
    got = sample_kl(base, cand)
    # buckets {0, gold 2, rest}: baseline 0.7, 0.2, 0.1; candidate 0.7, 0.05, 0.25
    assert got.kl == pytest.approx(0.2 * math.log(0.2 / 0.05) + 0.1 * math.log(0.1 / 0.25))
    assert got.top1 == 1.0 and got.base_rest == pytest.approx(0.1)


def test_positions_with_broken_or_missing_lists_are_not_compared():
    good = [_entry("a", 0.6, 0), _entry("b", 0.3, 1)]
    broken = [TokenLogprob(token="a", logprob=float("nan"), id=0)]
    base = AnswerLogprobs(gold="ab", logprobs=[math.log(0.6)] * 3, top=[good, broken, []], method="generated")
    cand = AnswerLogprobs(gold="ab", logprobs=[math.log(0.6)] * 3, top=[good, good, good], method="generated")
    got = sample_kl(base, cand)
    assert got.positions == 1 and got.kl == pytest.approx(0.0, abs=1e-12) and math.isfinite(got.kl)
    only_broken = base.model_copy(update={"top": [broken, broken, []]})
    pair = Pair(
        base=make_record().model_copy(update={"logprobs": only_broken}),
        cand=make_record().model_copy(update={"logprobs": cand}),
        same_prompt=True,
    )
    assert comparable(pair) == "no top-k alternatives"
