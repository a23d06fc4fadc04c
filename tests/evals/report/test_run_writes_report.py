"""`ctxprobe run` leaves `report.html` in its run folder (with the model's answer escaped), unless
`--no-report`."""

from __future__ import annotations

from pathlib import Path

from ctxprobe.evals.cli.main import main
from tests.evals.report.synthetic_runs import INJECTED
from tests.runners.fake_engine import FakeEngine


def _run(tmp_path: Path, url: str, *extra: str) -> Path:
    results = tmp_path / "results"
    before = set(results.iterdir()) if results.exists() else set()
    code = main(
        [
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
            "1",
            "--quiet",
            "--allow-errors",
            "--results-dir",
            str(results),
            *extra,
        ]
    )
    assert code == 0
    (run_dir,) = set(results.iterdir()) - before
    return run_dir


def test_run_writes_report_unless_told_not_to(tmp_path: Path) -> None:
    with FakeEngine("vllm", context_length=8192, answer=INJECTED) as engine:
        with_report = _run(tmp_path, engine.url, "--label", "a")
        without = _run(tmp_path, engine.url, "--label", "b", "--no-report")
    html = (with_report / "report.html").read_text(encoding="utf-8")
    assert "&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;" in html and "<script" not in html
    assert "which a report does not call" in html  # the server's tokenizer counted these prompts
    assert not (without / "report.html").exists()
