"""The cache-path control against a vLLM-shaped server whose prefix cache corrupts answers
(tests/runners/fake_prefix_cache.py): a nested niah run (1K, 2K x 0:100:50 x 2 seeds) names the cache path
as the engine's fault, counts the differing checks in its manifest and cache_checks.jsonl, and exits 7; the
same server with a healthy cache agrees and exits 0; an engine without a per-request cold path is said
unsupported in one line; a resumed run sends the checks it had chosen and not sent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxprobe.evals.cli.main import main
from ctxprobe.evals.records.cache_check import CACHE_CHECKS_FILE, cold_id
from ctxprobe.evals.run.result import ExitCode
from tests.runners.fake_engine import FakeEngine
from tests.runners.fake_prefix_cache import CorruptingPrefixCache, niah_answer

NESTED = ["--family", "niah", "--lengths", "1k,2k", "--depths", "0:100:50", "--samples", "2", "--layout", "nested"]


def _run(url: str, results: Path, *extra: str) -> int:
    return main(["run", "--endpoint", url, *NESTED, "--quiet", "--no-report", "--results-dir", str(results), *extra])


def _folder(results: Path) -> Path:
    return next(results.iterdir())


def _manifest(results: Path) -> dict[str, Any]:
    return json.loads((_folder(results) / "manifest.json").read_text())


def _checks(results: Path) -> list[dict[str, Any]]:
    path = _folder(results) / CACHE_CHECKS_FILE
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_a_corrupting_prefix_cache_is_named_an_engine_fault_and_exits_7(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with CorruptingPrefixCache() as fake:
        code = _run(fake.url, tmp_path, "--cache-check", "1")
    assert code == ExitCode.ENGINE_FAULT == 7
    samples = [json.loads(x) for x in (_folder(tmp_path) / "samples.jsonl").read_text().splitlines()]
    assert len(samples) == 12 and sum(s["score"]["correct"] for s in samples) == 2  # each chain's cold first only
    control = _manifest(tmp_path)["cache_check"]
    assert control["verdict"] == "fault" and control["version"] == 1
    assert control["checked"] == control["chosen"] == 10  # every request after its chain's first
    assert control["differed"] == 10 and control["cold_right_cached_wrong"] == 10
    assert control["cached_right_cold_wrong"] == 0 and control["p_value"] < 0.05
    assert {row["context_tokens"]: row["differed"] for row in control["per_length"]} == {1024: 4, 2048: 6}
    checks = _checks(tmp_path)
    assert sorted(control["cold_ids"]) == sorted(cold_id(c["sample_id"]) for c in checks)
    assert all(c["how"].startswith("cache_salt") and c["cold_correct"] and not c["cached_correct"] for c in checks)
    assert fake.cold_requests == 10  # each check with a salt of its own
    err = capsys.readouterr().err
    assert "ENGINE FAULT: the prefix-cache path changes answers" in err and "suspect" in err


def test_a_healthy_cache_agrees_and_the_run_exits_0(tmp_path: Path) -> None:
    with CorruptingPrefixCache(corrupt=False) as fake:
        code = _run(fake.url, tmp_path, "--cache-check", "1")
    assert code == 0
    control = _manifest(tmp_path)["cache_check"]
    assert control["verdict"] == "agrees" and control["checked"] == 10 and control["differed"] == 0


def test_the_default_of_a_nested_run_checks_every_length(tmp_path: Path) -> None:
    """auto: the control's floor, one check at every length, on a run too small for more within 3 %."""
    with CorruptingPrefixCache() as fake:
        code = _run(fake.url, tmp_path)
    control = _manifest(tmp_path)["cache_check"]
    assert control["asked"] == "auto" and control["checked"] >= 2
    assert {row["context_tokens"] for row in control["per_length"]} == {1024, 2048}
    # every check differs, and too few to decide: said and counted, no engine fault
    assert control["differed"] == control["checked"] and control["verdict"] == "differs" and code == 0


def test_an_engine_without_a_cold_path_is_said_unsupported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeEngine("sglang", answer=lambda body: niah_answer(body["messages"][-1]["content"])) as engine:
        code = _run(engine.url, tmp_path, "--cache-check", "1")
    assert code == 0
    control = _manifest(tmp_path)["cache_check"]
    assert control["verdict"] == "unsupported" and "/flush_cache" in control["how"] and control["checked"] == 0
    lines = [x for x in capsys.readouterr().err.splitlines() if "cache path not checked" in x]
    assert len(lines) == 1 and "/flush_cache" in lines[0]
    assert not (_folder(tmp_path) / CACHE_CHECKS_FILE).exists()


def test_an_independent_run_checks_nothing_unless_asked(tmp_path: Path) -> None:
    with CorruptingPrefixCache() as fake:
        code = main(
            [
                "run",
                "--endpoint",
                fake.url,
                "--family",
                "niah",
                "--lengths",
                "1k",
                "--depths",
                "0,100",
                "--samples",
                "1",
                "--quiet",
                "--no-report",
                "--results-dir",
                str(tmp_path),
            ]
        )
    assert code == 0 and _manifest(tmp_path)["cache_check"]["verdict"] == "off"


def test_a_resumed_run_sends_the_checks_it_had_not_sent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ctxprobe.evals.run.api as api

    async def stopped(*args: Any, **kwargs: Any) -> int:
        raise KeyboardInterrupt  # interrupted after the samples, before any check

    with CorruptingPrefixCache() as fake:
        with monkeypatch.context() as patched:
            patched.setattr(api, "send_checks", stopped)
            assert _run(fake.url, tmp_path, "--cache-check", "1") == ExitCode.INTERRUPTED
        control = _manifest(tmp_path)["cache_check"]
        assert control["chosen"] == 10 and control["checked"] == 0 and control["unchecked"] == 10
        assert control["verdict"] == "unchecked"
        code = main(["run", "--resume", str(_folder(tmp_path)), "--quiet", "--no-report"])
    assert code == ExitCode.ENGINE_FAULT
    control = _manifest(tmp_path)["cache_check"]
    assert control["checked"] == 10 and control["unchecked"] == 0 and control["verdict"] == "fault"


def test_the_fault_is_named_in_the_summary_report_compare_history_and_junit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results"
    with CorruptingPrefixCache(corrupt=False) as healthy:
        assert (
            main(
                [
                    "run",
                    "--endpoint",
                    healthy.url,
                    *NESTED,
                    "--quiet",
                    "--results-dir",
                    str(results),
                    "--label",
                    "healthy",
                    "--cache-check",
                    "1",
                ]
            )
            == 0
        )
    with CorruptingPrefixCache() as faulty:
        assert (
            main(
                [
                    "run",
                    "--endpoint",
                    faulty.url,
                    *NESTED,
                    "--quiet",
                    "--results-dir",
                    str(results),
                    "--label",
                    "faulty",
                    "--cache-check",
                    "1",
                ]
            )
            == ExitCode.ENGINE_FAULT
        )
    out = capsys.readouterr().out
    agrees, suspect = out.index("cache path agrees"), out.index("\nSUSPECT:")  # the second run's table is headed so
    assert agrees < suspect and "ENGINE FAULT" in out[suspect:]
    good, bad = sorted(results.iterdir(), key=lambda p: p.name.endswith("faulty"))
    summary = (bad / "summary.md").read_text()
    assert "SUSPECT" in summary and "## Cache path" in summary and "ENGINE FAULT" in summary
    assert "SUSPECT" not in (good / "summary.md").read_text()
    page = (bad / "report.html").read_text()
    assert "Cache path" in page and "SUSPECT" in page
    junit = tmp_path / "gate.xml"
    main(
        [
            "compare",
            str(good),
            str(bad),
            "--junit",
            str(junit),
            "--fail-if-drop",
            "0.05",
            "--results-dir",
            str(tmp_path / "cmp"),
            "--no-report",
        ]
    )
    err = capsys.readouterr().err
    assert "ENGINE FAULT in faulty" in err
    xml = junit.read_text()
    assert 'type="engine_fault"' in xml and "prefix-cache path changes answers" in xml
    assert main(["history", str(results)]) in (0, 1)
    assert "ENGINE FAULT in" in capsys.readouterr().out


def test_the_engines_counters_over_the_run_leave_the_cold_re_sends_out(tmp_path: Path) -> None:
    """The manifest's /metrics deltas are the run's own requests' (the fake's counters grow 40 a completion
    for its cache metrics): the checks come after them and are counted in cache_checks.jsonl instead."""
    with CorruptingPrefixCache(corrupt=False) as fake:
        assert _run(fake.url, tmp_path, "--cache-check", "1") == 0
        sent = len(fake.engine.completion_calls())
    metrics = _manifest(tmp_path)["engine_metrics"]
    assert sent == 12 + 10 and metrics["prefix_cache_queries"] == 40 * 12
