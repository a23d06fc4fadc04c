"""Template sensitivity on the run page: a run with two prompt layouts shows, per family x length, each
layout's accuracy (k/n), the paired difference with its interval, p and Holm p (the compare page's rows); a
run with one layout shows nothing of it. End to end: `ctxprobe run --templates ctxprobe,ruler` against the
fake engine writes template_sensitivity.md and the section into report.html."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import ctxprobe
from ctxprobe.evals.cli.main import main
from ctxprobe.tasks.lengths import format_length
from ctxprobe.tasks.suite import Suite
from tests.evals.report.synthetic_runs import small_suite, write_run
from tests.runners.fake_engine import FakeEngine

SECTION = "<h3>Template sensitivity</h3>"


def _page(tmp_path: Path, run: Path) -> str:
    return ctxprobe.report([run], tmp_path / "out" / "report.html").read_text(encoding="utf-8")


def _section(html: str) -> str:
    start = html.index(SECTION)
    return html[start : html.index("<h3>", start + len(SECTION))]


def _cell_row(section: str, length: str) -> list[str]:
    """The cells of the niah row at `length`, tags stripped."""
    for row in re.findall(r"<tr>(.*?)</tr>", section, re.S):
        cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        if cells and cells[0] == "niah" and cells[3] == length:
            return cells
    raise AssertionError(f"no niah row at {length} in {section}")


def _expected_counts(run: Path) -> dict[int, tuple[int, int, int]]:
    """Per length, from the records: (pairs, ctxprobe right, ruler right) over the needles both layouts scored."""
    by_needles: dict[tuple[int, float, int], dict[str, bool]] = defaultdict(dict)
    for r in ctxprobe.load_run(run).records:
        recipe = r.sample.recipe
        if recipe.family == "niah" and r.error is None and r.score is not None:
            by_needles[(recipe.context_tokens, recipe.depth, recipe.seed)][recipe.params["template"]] = r.score.correct
    out: dict[int, tuple[int, int, int]] = {}
    for (length, _, _), layouts in sorted(by_needles.items()):
        if len(layouts) == 2:
            n, base, ruler = out.get(length, (0, 0, 0))
            out[length] = (n + 1, base + layouts["ctxprobe"], ruler + layouts["ruler"])
    return out


def test_run_page_shows_each_layout_and_the_paired_difference(tmp_path: Path) -> None:
    suite = Suite.model_validate({**small_suite().model_dump(), "templates": ["ctxprobe", "ruler"]})
    run = write_run(tmp_path / "run", suite)
    section = _section(_page(tmp_path, run))
    assert "ctxprobe → ruler" in section and "<th>ctxprobe</th><th>ruler</th>" in section
    assert "95% CI" in section and "Holm p" in section and "recall" not in section  # recall has no layouts
    expected = _expected_counts(run)
    assert sorted(expected) == [1024, 2048, 4096]
    for length, (n, base, ruler) in expected.items():
        cells = _cell_row(section, format_length(length))
        assert cells[4] == str(n)
        assert cells[5] == f"{100 * base / n:.0f}% ({base}/{n})" and cells[6] == f"{100 * ruler / n:.0f}% ({ruler}/{n})"
        assert cells[7] == f"{100 * (ruler - base) / n:+.0f}"
        assert re.fullmatch(r"\[[-+]\d+, [-+]\d+\]", cells[8]) and cells[9] and cells[10]


def test_a_run_with_one_layout_has_no_section(tmp_path: Path) -> None:
    assert "Template sensitivity" not in _page(tmp_path, write_run(tmp_path / "run", small_suite()))


NEEDLE = re.compile(r"special magic numbers for (\S+) is: (\d+)\.")
ASKED = re.compile(r"special magic number for (\S+) mentioned")


def _reads_only_ctxprobes_layout(body: dict[str, Any]) -> str:
    """A model that finds the needle in ctxprobe's layout and never in RULER's."""
    text = str(body.get("prompt") or " ".join(str(m.get("content", "")) for m in body.get("messages", [])))
    if "A special magic number is hidden" in text:  # RULER's instruction for one value
        return "I could not find it."
    asked = ASKED.search(text)
    values = dict(NEEDLE.findall(text))
    return f"{values[asked.group(1)]}." if asked and asked.group(1) in values else "I could not find it."


def test_run_with_two_templates_writes_the_section(tmp_path: Path) -> None:
    results = tmp_path / "results"
    with FakeEngine("vllm", context_length=8192, answer=_reads_only_ctxprobes_layout) as engine:
        code = main(
            [
                "run",
                "--endpoint",
                engine.url,
                "--family",
                "niah",
                "--lengths",
                "1k",
                "--depths",
                "0,50,100",
                "--samples",
                "3",
                "--templates",
                "ctxprobe,ruler",
                "--quiet",
                "--results-dir",
                str(results),
            ]
        )
        sent = len(engine.completion_calls())
    assert code == 0 and sent == 2 * 9
    (run_dir,) = results.iterdir()

    markdown = (run_dir / "template_sensitivity.md").read_text(encoding="utf-8")
    assert "ctxprobe vs ruler" in markdown
    (line,) = [ln for ln in markdown.splitlines() if ln.strip().startswith("1K")]
    # 9 pairs, every one lost under RULER's layout: p = 2 * 0.5**9
    assert line.split()[:6] == ["1K", "all", "9", "100%", "0%", "-100"] and f"{2 * 0.5**9:.3g}" in line.split()

    section = _section((run_dir / "report.html").read_text(encoding="utf-8"))
    cells = _cell_row(section, "1K")
    assert cells[4:8] == ["9", "100% (9/9)", "0% (0/9)", "-100"]
    assert cells[9] == f"{2 * 0.5**9:.3g}" and cells[10] == cells[9]  # one row: Holm changes nothing
    assert cells[11] == "DROP"
