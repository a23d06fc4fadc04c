"""report.html never carries raw control bytes (NUL, ESC, BEL) or a lone surrogate from a model's output,
and a 1 MB answer is cut for display with its length said (the page stays small; samples.jsonl keeps it)."""

from __future__ import annotations

import re
from pathlib import Path

import ctxprobe
from ctxprobe.evals.records.record import Response
from ctxprobe.evals.records.store import RunStore
from ctxprobe.evals.report.html_report.shown_text import SHOWN_CHARS, clipped, printable
from tests.evals.compare.synthetic import all_right, grid, write_run

NASTY = "before\x00NUL \x1b[31mESC\x1b[0m \x07BEL \x7fDEL \x85NEL \ud800 after\ttab\nline"
HUGE = "7" * 1_048_576


def _run_with_outputs(folder: Path) -> Path:
    keys = grid()
    write_run(folder, "dirty", {**all_right(), keys[0]: False, keys[1]: False, keys[25]: False})
    store = RunStore(folder)
    records = list(store.latest_records().values())
    for record, text in zip([r for r in records if r.score and not r.score.correct], (NASTY, HUGE, HUGE)):
        store.append(record.model_copy(update={"response": Response(endpoint="completions", text=text, latency_s=0.1)}))
    store.close()
    return folder


def test_printable_shows_control_characters_as_symbols() -> None:
    assert (
        printable(NASTY)
        == "before\u2400NUL \u241b[31mESC\u241b[0m \u2407BEL \u2421DEL \\x85NEL \ufffd after\ttab\nline"
    )
    assert printable(5) == 5 and printable("plain ü 日本") == "plain ü 日本"


def test_clipped_says_how_long_the_text_was() -> None:
    assert clipped("short") == "short" and clipped(None) is None
    cut = clipped(HUGE)
    assert cut is not None and cut.startswith("7" * SHOWN_CHARS + "…") and "1,048,576 characters" in cut
    assert len(cut) < SHOWN_CHARS + 100


def test_the_page_has_no_control_bytes_and_stays_small(tmp_path: Path) -> None:
    run = _run_with_outputs(tmp_path / "run")
    page = ctxprobe.report([run], tmp_path / "page.html")
    data = page.read_bytes()
    text = data.decode("utf-8")  # a lone surrogate would have made the page unwritable
    assert not re.search(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", data)
    assert "\u241b[31mESC" in text and "\u2400NUL" in text and "\u2407BEL" in text
    assert "1,048,576 characters; the first 2,000 shown" in text
    assert len(data) < 600_000, len(data)  # two 1 MB answers, each shown as its first 2,000 characters
    assert HUGE in (run / "samples.jsonl").read_text()  # the record keeps every character
