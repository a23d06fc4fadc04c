"""The answers by depth (evals/report/attribution.py) in summary.csv, `show` and the report's page, on a nested
run whose fake server answers each question by a rule of its own: the gold value, another needle's value of
the same prompt, or a number the prompt does not hold. The counts are the fake's own decisions, tallied here,
never what the scorer wrote; and each rival's recorded depth is the depth of the needle the fake quoted."""

from __future__ import annotations

import hashlib
import re
import statistics
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from ctxprobe.evals.cli.main import main
from ctxprobe.evals.records.load import load_run
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.evals.report.html_report.run_section import run_section
from tests.runners.fake_engine import FakeEngine

_NEEDLE = re.compile(r"special magic numbers? for ([\w-]+) is: (\d+)")
_ASKED = re.compile(r"special magic number for ([\w-]+) mentioned")
STRANGER = "1000001"  # a 7-digit number no needle holds (checked below)


def _decision(key: str) -> str:
    return ("correct", "rival", "rival", "other")[hashlib.sha256(key.encode()).digest()[0] % 4]


class Fake:
    """Answers by `_decision` of the asked key, and keeps what it decided per (key, length)."""

    def __init__(self) -> None:
        self.decided: dict[str, tuple[str, str]] = {}  # the asked key: (decision, value answered)

    def __call__(self, body: dict[str, Any]) -> str:
        text = str(body["messages"][-1]["content"])
        needles = _NEEDLE.findall(text)
        asked = _ASKED.search(text)
        assert asked is not None and STRANGER not in dict(needles).values()
        key = asked.group(1)
        gold = dict(needles)[key]
        decision = _decision(key)
        value = {"correct": gold, "other": STRANGER}.get(decision) or next(v for k, v in needles if k != key)
        self.decided[key] = (decision, value)
        return f"The answer is {value}."


@pytest.fixture(scope="module")
def attributed_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Fake]:
    results = tmp_path_factory.mktemp("answers") / "results"
    fake = Fake()
    with FakeEngine("vllm", context_length=1 << 16, answer=fake) as engine:
        code = main(
            [
                "run",
                "--endpoint",
                engine.url,
                "--family",
                "niah",
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
                "--cache-check",
                "off",
                "--token-counter",
                "estimate",
                "--concurrency",
                "1",
                "--retries",
                "0",
                "--quiet",
                "--no-report",
                "--results-dir",
                str(results),
            ]
        )
    assert code == 0
    (run_dir,) = results.iterdir()
    return run_dir, fake


def _quoted_depth(record: SampleRecord, fake: Fake) -> float | None:
    """The depth of the needle the fake quoted for this record's question (None: it quoted none)."""
    value = fake.decided[_ASKED.search(record.sample.question).group(1)][1]  # type: ignore[union-attr]
    return next((n.depth_pct for n in record.sample.needles if n.answer == value and n.role == "distractor"), None)


def _expected(run_dir: Path, fake: Fake) -> tuple[Counter[tuple[float, str]], dict[float, str]]:
    """(depth, decision) counted from the fake's decisions, keyed by each record's asked key; and per depth the
    median depth of the needles it quoted (`-` where none), as the table writes it."""
    counts: Counter[tuple[float, str]] = Counter()
    quoted: dict[float, list[float]] = {}
    for record in load_run(run_dir).records:
        key = _ASKED.search(record.sample.question)
        assert key is not None
        counts[(record.sample.recipe.depth, fake.decided[key.group(1)][0])] += 1
        at = _quoted_depth(record, fake)
        quoted.setdefault(record.sample.recipe.depth, [])
        if at is not None:
            quoted[record.sample.recipe.depth].append(at)
    return counts, {d: f"{statistics.median(v):.0f}%" if v else "-" for d, v in quoted.items()}


def test_rivals_carry_the_quoted_needles_depth(attributed_run: tuple[Path, Fake]) -> None:
    run_dir, fake = attributed_run
    kinds = Counter()
    for record in load_run(run_dir).records:
        assert record.score is not None
        decision = fake.decided[_ASKED.search(record.sample.question).group(1)][0]  # type: ignore[union-attr]
        kinds[decision] += 1
        expected = {"correct": (None, None), "other": ("other", None)}.get(decision) or (
            "rival",
            _quoted_depth(record, fake),
        )
        assert (decision == "rival") == (_quoted_depth(record, fake) is not None)
        assert (record.score.attribution, record.score.rival_depth) == expected
    assert set(kinds) == {"correct", "rival", "other"}  # the run shows every case


def test_summary_csv_and_show_count_them_per_depth(
    attributed_run: tuple[Path, Fake], capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir, fake = attributed_run
    expected, rival_at = _expected(run_dir, fake)
    assert main(["show", str(run_dir)]) == 0
    shown = capsys.readouterr().out
    block = shown[shown.index("answers by depth") :].splitlines()[1:]
    cells = pd.read_csv(run_dir / "summary.csv")
    for depth in (0.0, 50.0, 100.0):
        at = cells[cells["depth"] == depth]
        for kind in ("correct", "rival", "other"):
            assert int(at[kind].sum()) == expected[(depth, kind)], (depth, kind)
        assert int(at["hallucinated"].sum()) == 0
        n = sum(expected[(depth, k)] for k in ("correct", "rival", "other"))
        line = next(x for x in block if x.split()[:1] == [f"{depth:g}%"])
        assert line.split()[1:] == [
            str(n),
            *(
                part
                for k in ("correct", "rival", "other", "hallucinated")
                for part in (str(expected[(depth, k)]), f"({100 * expected[(depth, k)] / n:.0f}%)")
            ),
            rival_at[depth],
        ]
    assert "## Answers by depth" in (run_dir / "summary.md").read_text(encoding="utf-8")


def test_the_page_shows_them(attributed_run: tuple[Path, Fake]) -> None:
    run_dir, fake = attributed_run
    expected, rival_at = _expected(run_dir, fake)
    rows = run_section(load_run(run_dir, needles=False))["answers"]
    assert [r["depth"] for r in rows] == ["0%", "50%", "100%"]
    for row in rows:
        depth = float(row["depth"].rstrip("%"))
        assert [int(row[k].split()[0]) for k in ("correct", "rival", "other", "hallucinated")] == [
            expected[(depth, k)] for k in ("correct", "rival", "other", "hallucinated")
        ]
        assert row["rival_at"] == rival_at[depth]


def test_a_run_without_attribution_shows_no_such_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Records written before attribution (every wrong answer None) read as before: no answers table."""
    from ctxprobe.evals.report.attribution import answers_by_depth, render_attribution
    from tests.evals.factories import make_record

    records = [make_record(correct=c, depth=d) for c, d in ((True, 0.0), (False, 0.0), (False, 50.0))]
    assert answers_by_depth(records) is None and render_attribution(records) == ""
    attributed = [
        r.model_copy(update={"score": r.score.model_copy(update={"attribution": "other"})})  # type: ignore[union-attr]
        if not r.score.correct
        else r
        for r in records
    ]  # type: ignore[union-attr]
    table = answers_by_depth(attributed)
    assert table is not None and table[["depth", "n", "correct", "other"]].values.tolist() == [
        [0.0, 2, 1, 1],
        [50.0, 1, 0, 1],
    ]
    quoted = [
        r.model_copy(
            update={
                "score": r.score.model_copy(
                    update={  # type: ignore[union-attr]
                        "attribution": kind,
                        "rival_depth": at,
                    }
                )
            }
        )
        for r, (kind, at) in zip(records[1:], (("rival", 30.0), ("hallucinated", 40.0)))
    ]
    table = answers_by_depth([records[0], *quoted])
    assert table is not None  # a hallucinated value that quoted a needle is no rival: `rival at` is the rivals' only
    assert table[["depth", "rival", "hallucinated"]].values.tolist() == [[0.0, 1, 0], [50.0, 0, 1]]
    assert table["rival_depth"].tolist()[0] == 30.0 and pd.isna(table["rival_depth"].tolist()[1])


def test_an_absent_questions_rows_show_no_rival_other_or_rival_at(tmp_path: Path) -> None:
    """An absent question's wrong answers are hallucinated (here each quoting a needle at 40 %) or unattributed:
    its rows read `-` where its verdict names nothing, in `show`, summary.md and the page alike, beside a present
    question's rows that keep their counts and rival depth."""
    from ctxprobe.evals.report.attribution import attribution_markdown, render_attribution
    from ctxprobe.evals.report.html_report.run_section import answer_rows
    from tests.evals.factories import make_record

    def named(record: SampleRecord, kind: str | None, at: float | None) -> SampleRecord:
        return record.model_copy(
            update={
                "score": record.score.model_copy(  # type: ignore[union-attr]
                    update={"attribution": kind, "rival_depth": at}
                )
            }
        )

    absent = {"variant": "single", "absent": True}
    records = [
        named(make_record(False, depth=50.0, seed=0), "rival", 30.0),
        make_record(True, depth=50.0, seed=1),
        *(
            named(make_record(False, kind="absent", depth=50.0, seed=s, params=absent), "hallucinated", 40.0)
            for s in range(3)
        ),
        make_record(False, kind="absent", depth=50.0, seed=3, params=absent),
    ]
    shown = render_attribution(records).splitlines()
    lines = {title: shown[shown.index(title) + 2].split() for title in shown if title.startswith("niah")}
    assert lines["niah  variant=single  [prose]"] == [
        "50%",
        "2",
        "1",
        "(50%)",
        "1",
        "(50%)",
        "0",
        "(0%)",
        "0",
        "(0%)",
        "30%",
    ]
    assert lines["niah  variant=single, absent=True  [prose]"] == ["50%", "4", "0", "(0%)", "-", "-", "3", "(75%)", "-"]
    markdown = attribution_markdown(records)
    assert "| 50% | 4 | 0 (0%) | - | - | 3 (75%) | - |" in markdown and "| 50% | 2 | 1 (50%) | 1 (50%) |" in markdown
    page = {row["variant"]: row for row in answer_rows(records)}
    assert [page["variant=single, absent=True"][k] for k in ("rival", "other", "hallucinated", "rival_at")] == [
        "-",
        "-",
        "3 (75%)",
        "-",
    ]
    assert [page["variant=single"][k] for k in ("rival", "rival_at")] == ["1 (50%)", "30%"]
