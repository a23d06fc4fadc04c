"""`ctxprobe report`: what the page shows for run, limit, compare and history folders, that model output
and haystack text are escaped, that the page needs nothing from the network, and that it stays small."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import ctxprobe
from ctxprobe.evals.cli.main import main
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.suite import load_suite
from tests.evals.report.synthetic_runs import (
    HAYSTACK_INJECTED,
    small_suite,
    write_compare,
    write_history,
    write_limit,
    write_run,
)

RAW_MARKUP = re.compile(r"<\s*(script|img\s+src=x|iframe|object|embed|link)\b", re.IGNORECASE)


def _page(tmp_path: Path, *folders: Path) -> str:
    return ctxprobe.report(list(folders), tmp_path / "out" / "report.html").read_text(encoding="utf-8")


def test_model_output_and_haystack_text_are_escaped(tmp_path: Path) -> None:
    haystack = tmp_path / "hay.txt"
    haystack.write_text(("Plain prose about lobsters and tides. " * 30 + HAYSTACK_INJECTED + "\n\n") * 40)
    run = write_run(tmp_path / "run", small_suite(f"file:{haystack}"), built=True)
    html = _page(tmp_path, run)
    assert RAW_MARKUP.search(html) is None
    assert "&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;" in html  # the answer, as text
    assert "&lt;script&gt;document.title=&#39;haystack&#39;&lt;/script&gt;" in html  # the prompt window
    assert "<mark>" in html and "sha256 mismatch" not in html  # rebuilt byte for byte with the estimate counter


def test_page_is_self_contained(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", small_suite())
    html = _page(tmp_path, run, write_limit(tmp_path / "limit"))
    assert not re.search(r"""(src|href|action)\s*=\s*["']?\s*(https?:|//|file:)""", html, re.IGNORECASE)
    assert not re.search(r"url\(", html)  # no stylesheet fetches
    srcs = re.findall(r"""<img[^>]*\ssrc="([^"]*)\"""", html)
    assert srcs and all(s.startswith(("data:image/svg+xml;base64,", "data:image/png;base64,")) for s in srcs)
    assert "default-src 'none'" in html


# The nightly-sized run is the slow tier's; the fast tier checks the same on a run of the small suite.
@pytest.mark.parametrize(
    "nightly", [pytest.param(False, id="small"), pytest.param(True, id="nightly", marks=pytest.mark.slow)]
)
def test_nightly_sized_run_stays_small(nightly: bool, tmp_path: Path) -> None:
    """The nightly's tasks x 6 lengths x 11 depths x 8 samples (3,696 records, and its absent questions): the page
    is well under 2 MB, one heat panel and three failure examples for each task."""
    suite = load_suite("nightly") if nightly else small_suite()
    run = write_run(tmp_path / "run", suite)
    out = ctxprobe.report([run], tmp_path / "report.html")
    size = out.stat().st_size
    print(f"{suite.name} run report: {size:,} bytes")
    assert (50_000 if nightly else 20_000) < size < 2_000_000  # small: 45 KB
    html = out.read_text(encoding="utf-8")
    assert html.count('<table class="heat">') == len(suite.tasks)  # one panel per task
    assert html.count('class="example"') == 3 * len(suite.tasks)  # three failures per task


def test_run_page_shows_header_cells_errors_timing_and_failures(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", small_suite())
    html = _page(tmp_path, run)
    for text in (
        "gemma-3-270m-it",
        "llama.cpp b6000",
        "gemma-3-270m-Q4_K_M.gguf",
        "q8_0",
        "small",
        "estimate:4",
        "1h 02m",
        "95% Clopper-Pearson",
    ):
        assert text in html
    assert re.search(r'<span class="s">n=2 \[[0-9.]+, [0-9.]+\]', html)  # n and interval in a heatmap cell
    at_4k = [
        r.response for r in ctxprobe.load_run(run).records if r.response and r.sample.recipe.context_tokens == 4096
    ]
    share = sum(x.cached_tokens or 0 for x in at_4k) / sum(x.prompt_tokens or 0 for x in at_4k)
    assert "latency p50" in html and f"<td>{share:.1%}</td></tr>" in html  # cached share of the 4K row
    assert "Failure examples" in html and "needle depth" in html and "the prompt around the needle" in html


def test_run_with_a_server_counter_says_why_the_prompt_is_not_shown(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", small_suite())
    manifest = (
        (run / "manifest.json")
        .read_text()
        .replace('"token_counter": "estimate"', '"token_counter": "server:http://gpu:8000"')
    )
    (run / "manifest.json").write_text(manifest)
    assert "which a report does not call" in _page(tmp_path, run)


def test_limit_page_shows_the_four_numbers_and_the_curve(tmp_path: Path) -> None:
    html = _page(tmp_path, write_limit(tmp_path / "limit"))
    for text in (
        "131,072",
        "config.json max_position_embeddings",
        "32,768",
        "GET /v1/models max_model_len",
        "32,512",
        "the limit the rejection stated",
        "≥ 16,384 (&lt; 23,296)",
        "threshold and the bracket",
    ):
        assert text in html
    assert html.count("data:image/svg+xml;base64,") == 1


def test_compare_and_history_pages(tmp_path: Path) -> None:
    base = write_run(tmp_path / "base", small_suite(), label="fp16")
    cand = write_run(tmp_path / "cand", small_suite(), label="q4km", drop=0.3)
    html = _page(
        tmp_path,
        write_compare(tmp_path / "cmp", base, cand),
        write_history(tmp_path / "results" / "history-nightly", [base, cand]),
    )
    assert "DROP" in html and "0.0078" in html and "[-50, -30]" in html  # verdict, Holm p, interval
    assert "FAIL" in html and "diff_heatmap_q4km_niah.png" in html and "errored in candidate: 1 timeout" in html
    assert "candidate output" in html and "&lt;script&gt;document.title=&#39;pwned&#39;" in html
    assert "1 flagged night" in html and 'class="flag"' in html and "-30 points" in html
    assert RAW_MARKUP.search(html) is None


def test_not_a_report_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="not a run, limit, compare or history folder"):
        ctxprobe.report([tmp_path / "empty"], tmp_path / "r.html")
    assert main(["report", str(tmp_path / "missing"), "-o", str(tmp_path / "r.html")]) == 2
    assert "not a folder" in capsys.readouterr().err and not (tmp_path / "r.html").exists()


def test_cli_writes_the_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = write_run(tmp_path / "run", small_suite())
    assert main(["report", str(run), "-o", str(tmp_path / "page.html")]) == 0
    assert "page.html" in capsys.readouterr().out and (tmp_path / "page.html").stat().st_size > 10_000


def test_pages_from_what_compare_and_history_write(tmp_path: Path) -> None:
    """Against the real `compare` and `history` (skips on a branch without them): their folders, and a
    results folder of runs (its history computed on the spot), render without a gap."""
    api = pytest.importorskip("ctxprobe.evals.compare.api", reason="the compare command is not on this branch")
    history = pytest.importorskip("ctxprobe.evals.compare.history").history
    results = tmp_path / "results"
    runs = [
        write_run(results / f"2026110{i}-000000-{label}", small_suite(), label=label, seed=i, drop=drop, built=True)
        for i, (label, drop) in enumerate((("fp16", 0.0), ("q4km", 0.6)), start=1)
    ]
    compared = api.compare_folders(runs[0], runs[1], fail_if_drop=0.05, results_dir=tmp_path / "cmp")
    nights = history(results, write=True)
    html = _page(tmp_path, Path(str(compared.out_dir)), Path(str(nights.out_dir)), results)
    assert "Verdicts by family and length" in html and "Holm p" in html and "candidate output" in html
    assert html.count("data:image/png;base64,") >= 3  # the diff heatmaps and history's trend
    assert html.count("<h2>History: history of suite small</h2>") == 2  # from history.json, and computed now
