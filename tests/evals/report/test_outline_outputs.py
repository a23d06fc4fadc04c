"""Tables, heatmaps, `show` and the report's page read records as outlines (no needles,
`evals/records/outline.py`): what they write must be what whole records give, byte for byte, on a nested
run (records with many needles) that has right answers, wrong ones (the page's failure examples, which
read their few records whole) and errors."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from ctxprobe.evals.cli.main import main
from ctxprobe.evals.records.load import load_run
from ctxprobe.evals.records.outline import RecordOutline, full_records
from ctxprobe.evals.records.store import SAMPLES
from ctxprobe.evals.report.html_report.render import render_page, report
from ctxprobe.evals.report.html_report.run_section import run_section
from ctxprobe.evals.report.summary import write_report
from tests.runners.fake_engine import FakeEngine, Reply

SUMMARY_FILES = ("summary.csv", "summary_by_context.csv", "summary.md")
_NEEDLE = re.compile(r"special magic numbers? for ([\w-]+) is: (\d+)")


def _answer(body: dict[str, Any]) -> str:
    """The gold value for questions whose key sorts before 'm', a wrong one after: both kinds of cell."""
    text = str(body["messages"][-1]["content"])
    key = re.search(r"special magic number for ([\w-]+) mentioned", text)
    gold = dict(_NEEDLE.findall(text)).get(key.group(1)) if key else None
    return f"The answer is {gold}." if gold and key and key.group(1) < "m" else "The answer is 42."


@pytest.fixture(scope="module")
def nested_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    results = tmp_path_factory.mktemp("outline") / "results"
    with FakeEngine("vllm", context_length=1 << 16, answer=_answer) as engine:
        engine.script.extend([Reply(status=500)])  # one sample ends in an http error
        code = main(
            [
                "run",
                "--endpoint",
                engine.url,
                "--family",
                "niah",
                "--params",
                "variant=multikey",
                "--lengths",
                "1k,2k",
                "--depths",
                "0,50,100",
                "--samples",
                "2",
                "--layout",
                "nested",
                "--mode",
                "chat",
                "--token-counter",
                "estimate",
                "--retries",
                "0",
                "--concurrency",
                "1",
                "--allow-errors",
                "--quiet",
                "--no-report",
                "--results-dir",
                str(results),
            ]
        )
    assert code == 0
    (run_dir,) = results.iterdir()
    return run_dir


def test_outlines_hold_every_field_but_the_needles(nested_run: Path) -> None:
    whole, outlines = load_run(nested_run).records, load_run(nested_run, needles=False).records
    assert len(whole) == len(outlines) == 12 and all(isinstance(r, RecordOutline) for r in outlines)
    assert any(len(r.sample.needles) > 1 for r in whole) and any(r.error for r in whole)
    assert {r.score.correct for r in whole if r.score} == {True, False}
    for a, b in zip(whole, outlines):
        assert a.model_dump(exclude={"sample": {"needles"}}) == b.model_dump()
        with pytest.raises(AttributeError):
            b.sample.needles  # noqa: B018 - an outline never pretends to have none
    picked = [whole[3].sample.sample_id, whole[7].sample.sample_id]
    assert full_records(nested_run / SAMPLES, picked) == {
        r.sample.sample_id: r for r in whole if r.sample.sample_id in picked
    }


def test_summary_files_heatmaps_and_table_are_those_of_whole_records(nested_run: Path, tmp_path: Path) -> None:
    outputs = {}
    for needles in (True, False):
        folder = tmp_path / f"needles-{needles}"
        shutil.copytree(nested_run, folder)
        run = load_run(folder, needles=needles)
        table = write_report(run.records, folder, run.manifest)
        written = {
            p.name: p.read_bytes()
            for p in sorted(folder.iterdir())
            if p.name in SUMMARY_FILES or p.name.startswith("heatmap_")
        }
        outputs[needles] = (table, written)
    table, written = outputs[True]
    assert "50%" in table and "err" in table and set(SUMMARY_FILES) <= set(written) and "heatmap_niah.png" in written
    assert outputs[False] == outputs[True]


def test_show_prints_what_whole_records_give(nested_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = load_run(nested_run)
    expected = f"{run.dir}  [{run.manifest.status}]  {len(run.records)} samples\n" + write_report(
        run.records, run.dir, run.manifest
    )
    capsys.readouterr()
    assert main(["show", str(nested_run)]) == 0
    assert capsys.readouterr().out == expected


def test_report_page_is_the_one_whole_records_give(nested_run: Path, tmp_path: Path) -> None:
    whole = run_section(load_run(nested_run))
    expected = render_page([whole], "ctxprobe report: " + str(whole["title"]))
    page = report([nested_run], tmp_path / "report.html").read_text(encoding="utf-8")
    assert whole["failures"] and whole["failures"][0].prompt.windows  # the failure examples show their needles
    assert page == expected


def _with_needles(record: Any, texts: list[str], **params: Any) -> Any:
    from ctxprobe.tasks.sample import NeedleSpot

    sample = record.sample.model_copy(
        update={
            "needles": [
                NeedleSpot(role="target", text=t, answer=t, char_offset=i, token_offset=i, depth_pct=50.0)
                for i, t in enumerate(texts)
            ],
            "recipe": record.sample.recipe.model_copy(update={"params": {**record.sample.recipe.params, **params}}),
        }
    )
    return record.model_copy(update={"sample": sample})


@pytest.mark.parametrize(
    "texts, params",
    [
        (['a "quoted" ],"measures": {} text', "], ]", '\\"]'], {}),  # what ends the list, inside a needle's text
        (["one", "two"], {"needles": ["x", "y"], "file": "n.json"}),  # a list named `needles` before the sample's own
    ],
)
def test_an_outline_is_the_whole_record_less_its_needles(
    tmp_path: Path, texts: list[str], params: dict[str, Any]
) -> None:
    from ctxprobe.evals.records.lines import parse_line
    from ctxprobe.evals.records.store import record_line
    from tests.evals.factories import make_record

    record = _with_needles(make_record(True), texts, **params)
    raw = record_line(record).rstrip("\n").encode()
    assert len(RecordOutline.skim(raw)) < len(raw)  # the list was cut, rightly or (the second case) not
    outline = parse_line(raw, RecordOutline)
    assert isinstance(outline, RecordOutline)
    assert outline.model_dump() == record.model_dump(exclude={"sample": {"needles"}})
    assert parse_line(raw).sample.needles == record.sample.needles  # type: ignore[union-attr]
