"""`ctxprobe doctor` on the engines' shapes (fake servers from docs/ENGINES.md): what each exposes, and the
flag it names for what is missing. The real engine is checked in tests/e2e/test_doctor_e2e.py."""

from __future__ import annotations

import pytest

import ctxprobe
from ctxprobe.evals.cli import main
from tests.runners.fake_engine import FakeEngine


def statuses(report: ctxprobe.DoctorReport) -> dict[str, str]:
    return {c.name: c.status for c in report.checks}


@pytest.mark.parametrize(("flavor", "cached", "metrics", "flag"), [
    ("vllm", "missing", "ok", "--enable-prompt-tokens-details"),
    ("sglang", "missing", "ok", "--enable-cache-report"),
    ("llama-server", "ok", "ok", None),
    ("llama-cpp-python", "missing", "missing", "never reports them"),
])
def test_each_engine_reports_what_it_exposes(flavor: str, cached: str, metrics: str, flag: str | None) -> None:
    with FakeEngine(flavor, context_length=8192, answer="ready") as engine:
        report = ctxprobe.doctor(engine.url)
    found = statuses(report)
    assert report.engine.engine == flavor
    assert found["completions + cached tokens"] == cached and found["metrics"] == metrics
    assert found["tokenize"] == "ok" and found["chat"] == "ok" and report.recommended_mode == "chat"
    assert found["context length"] == ("missing" if flavor == "llama-cpp-python" else "ok")
    advice = " ".join(c.advice for c in report.checks if c.status != "ok")
    if flag:
        assert flag in advice


def test_a_base_model_that_rambles_in_chat_is_sent_to_completions() -> None:
    with FakeEngine("vllm", context_length=8192, answer="Reply with the single word: the weather today is",
                    follows_chat=False) as engine:
        report = ctxprobe.doctor(engine.url)
    assert statuses(report)["chat"] == "missing" and report.recommended_mode == "completions"


def test_doctor_uses_the_configured_key_and_fails_in_one_line(monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "http://127.0.0.1:9"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unreachable" in err[0]
