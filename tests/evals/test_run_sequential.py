"""`ctxprobe run --stop decided` against the fake engine: cells sent in rounds of seeds stop as soon as
their anytime-valid interval decides them, the manifest records the rule and the fixed grid's tokens, and
a resumed run continues the same rounds without sending a finished sample again."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import ctxprobe
from ctxprobe.evals.cli.main import main
from ctxprobe.evals.compare.confseq import bernoulli_cs
from tests.runners.fake_engine import FakeEngine

NEEDLE = re.compile(r"special magic numbers for (\S+) is: (\d+)\.")
ASKED = re.compile(r"special magic number for (\S+) mentioned")


def _finds_the_needle(body: dict[str, Any]) -> str:
    text = str(body.get("prompt") or " ".join(str(m.get("content", "")) for m in body.get("messages", [])))
    asked = ASKED.search(text)
    values = dict(NEEDLE.findall(text))
    return f"{values[asked.group(1)]}." if asked and asked.group(1) in values else "I could not find it."


def _first_n_above(threshold: float) -> int:
    return next(n for n in range(1, 200) if bernoulli_cs(n, n)[0] > threshold)


def _args(url: str, results: Path, *extra: str) -> list[str]:
    return [
        "run",
        "--endpoint",
        url,
        "--family",
        "niah",
        "--lengths",
        "1k",
        "--depths",
        "0,100",
        "--samples",
        "3",
        "--quiet",
        "--no-report",
        "--results-dir",
        str(results),
        *extra,
    ]


def test_cells_stop_as_soon_as_decided_and_the_manifest_says_why(tmp_path: Path) -> None:
    with FakeEngine("vllm", context_length=8192, answer=_finds_the_needle) as engine:
        code = main(_args(engine.url, tmp_path, "--stop", "decided", "--threshold", "0.6", "--max-samples", "30"))
        sent = len(engine.completion_calls())
    assert code == 0
    needed = _first_n_above(0.6)
    assert sent == 2 * needed < 2 * 30  # two cells, each stopped the round it was decided
    manifest = json.loads((next(tmp_path.iterdir()) / "manifest.json").read_text())
    assert manifest["stop"]["stop"] == "decided" and manifest["stop"]["threshold"] == 0.6
    assert manifest["stopped_cells"] == {"above": 2}
    assert manifest["samples_planned"] == 60 and manifest["samples_done"] == sent
    # the suite's own grid: 3 samples x 2 depths x 1K tokens
    assert manifest["fixed_grid_prompt_tokens"] == 3 * 2 * 1024
    assert manifest["prompt_tokens_sent"] <= sent * 1024


def test_a_wrong_model_stops_below_and_the_fixed_rule_sends_the_grid(tmp_path: Path) -> None:
    with FakeEngine("vllm", context_length=8192, answer="I could not find it.") as engine:
        code = main(_args(engine.url, tmp_path / "d", "--stop", "decided", "--threshold", "0.6", "--max-samples", "30"))
        decided = len(engine.completion_calls())
        main(_args(engine.url, tmp_path / "f"))
        fixed = len(engine.completion_calls()) - decided
    manifest = json.loads((next((tmp_path / "d").iterdir()) / "manifest.json").read_text())
    assert manifest["stopped_cells"] == {"below": 2}
    assert decided == 2 * next(n for n in range(1, 200) if bernoulli_cs(0, n)[1] < 0.6)
    assert fixed == 6 and code == 0
    assert json.loads((next((tmp_path / "f").iterdir()) / "manifest.json").read_text())["stop"] is None


def test_a_resumed_sequential_run_continues_its_rounds_and_sends_nothing_twice(tmp_path: Path) -> None:
    with FakeEngine("vllm", context_length=8192, answer=_finds_the_needle) as engine:
        first = ctxprobe.run(
            endpoints=[engine.url],
            family="niah",
            lengths="1k",
            depths="0,100",
            samples=3,
            stop="decided",
            threshold=0.6,
            max_samples=30,
            results_dir=str(tmp_path),
            no_report=True,
            quiet=True,
        )
        whole = len(engine.completion_calls())
        # As if killed after five samples: keep five lines of samples.jsonl, the manifest says interrupted.
        samples = first.run_dir / "samples.jsonl"
        kept = samples.read_text().splitlines()[:5]
        samples.write_text("\n".join(kept) + "\n")
        manifest = json.loads((first.run_dir / "manifest.json").read_text())
        (first.run_dir / "manifest.json").write_text(json.dumps({**manifest, "status": "interrupted"}))
        second = ctxprobe.run(endpoints=[engine.url], resume=str(first.run_dir), quiet=True, no_report=True)
        resent = [r.body for r in engine.completion_calls()[whole:]]
    assert second.exit_code == 0 and second.manifest.stopped_cells == {"above": 2}
    kept_ids = {json.loads(line)["sample"]["sample_id"] for line in kept}
    assert len(resent) == whole - 5  # the same rounds: only the samples not kept
    assert len({r.sample.sample_id for r in second.records()}) == whole
    assert kept_ids <= {r.sample.sample_id for r in second.records()}


def test_a_stop_rule_without_a_goal_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeEngine("vllm", context_length=8192) as engine:
        code = main(_args(engine.url, tmp_path, "--stop", "decided"))
        assert not engine.completion_calls()
    assert code == 2 and "--threshold or --precision" in capsys.readouterr().err


def test_the_table_shows_n_why_and_the_confidence_sequence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeEngine("vllm", context_length=8192, answer=_finds_the_needle) as engine:
        assert main(_args(engine.url, tmp_path, "--stop", "decided", "--threshold", "0.6", "--max-samples", "30")) == 0
    out = capsys.readouterr().out
    n = _first_n_above(0.6)
    lo = round(100 * bernoulli_cs(n, n)[0])
    assert "--stop decided" in out and f"100% ({n}A)" in out and f"[{lo}-100]" in out
    csv = (next(tmp_path.iterdir()) / "summary.csv").read_text()
    assert "stop" in csv.splitlines()[0] and "above" in csv


def test_dry_run_estimates_the_cap_the_floor_and_the_fixed_grid() -> None:
    est = ctxprobe.estimate(
        family="niah",
        lengths="1k,2k",
        depths="0,100",
        samples=3,
        stop="decided",
        threshold=0.9,
        min_samples=2,
        max_samples=10,
        prefill_rate=1000.0,
    )
    assert est.prompt_tokens == 10 * 2 * (1024 + 2048) and est.samples == 40
    assert est.min_prompt_tokens == 2 * 2 * (1024 + 2048)
    assert est.fixed_grid_prompt_tokens == 3 * 2 * (1024 + 2048)
    from ctxprobe.evals.run.estimate import render_estimate

    assert "--stop decided: at most 61,440 prompt tokens" in render_estimate(est)


def test_report_html_shows_n_why_and_the_confidence_sequence(tmp_path: Path) -> None:
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
                    "1k",
                    "--depths",
                    "0,100",
                    "--samples",
                    "3",
                    "--quiet",
                    "--results-dir",
                    str(tmp_path),
                    "--stop",
                    "decided",
                    "--threshold",
                    "0.6",
                    "--max-samples",
                    "30",
                ]
            )
            == 0
        )
    page = (next(tmp_path.iterdir()) / "report.html").read_text(encoding="utf-8")
    n = _first_n_above(0.6)
    lo = bernoulli_cs(n, n)[0]
    assert page.count(f"n={n}A [{lo:.2f}, 1.00]") == 2  # both heatmap cells: n, stop tag, interval
    assert "decided above the threshold" in page and "95% confidence sequence" in page
    assert "--stop decided: n then why the cell stopped" in page  # the legend
    assert f"<td>{2 * n}A</td>" in page  # the depths-pooled table
