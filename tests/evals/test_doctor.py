"""`ctxprobe doctor` on the engines' shapes (fake servers from docs/ENGINES.md): what each exposes, and the
flag it names for what is missing. The real engine is checked in tests/e2e/test_doctor_e2e.py."""

from __future__ import annotations

import pytest

import ctxprobe
from ctxprobe.evals.cli.main import main
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


def test_counts_that_add_up_and_a_context_that_holds_are_ok() -> None:
    with FakeEngine("vllm", context_length=16384, answer="ready") as engine:
        report = ctxprobe.doctor(engine.url)
        longest = max(engine.prompt_tokens(r.body) for r in engine.completion_calls())
    found = {c.name: c for c in report.checks}
    assert found["token counts"].status == "ok" and "exact prompt lengths" in found["token counts"].found
    assert found["context accepted"].status == "ok"
    assert 16384 - 16 - 20 <= longest <= 16384 - 16  # one prompt within a filler sentence of the stated context


def test_a_tokenizer_that_answers_at_random_is_not_called_exact() -> None:
    with FakeEngine("vllm", context_length=8192, answer="ready", tokenize_noise=3) as engine:
        report = ctxprobe.doctor(engine.url, context_check=False)
    found = {c.name: c for c in report.checks}
    assert found["token counts"].status == "failed" and "do not add up" in found["token counts"].found
    assert "exact" not in " ".join(c.found for c in report.checks)
    assert "context accepted" not in found


def test_a_usage_that_disagrees_with_the_tokenizer_fails_the_count_check() -> None:
    with FakeEngine("vllm", context_length=8192, answer="ready", usage_scale=1.02) as engine:
        report = ctxprobe.doctor(engine.url, context_check=False)
    check = next(c for c in report.checks if c.name == "token counts")
    assert check.status == "failed" and "was served as" in check.found


def test_a_stated_context_the_server_rejects_is_said(capsys: pytest.CaptureFixture[str]) -> None:
    with FakeEngine("vllm", context_length=65536, accepts_up_to=8192, answer="ready") as engine:
        assert main(["doctor", engine.url]) == 1  # a failed check: exit 1
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if "context accepted" in x)
    assert "failed" in line and "65,536" in line and "rejected as too long" in line and "8,192" in line
    assert "context length" in out and "ok" in out


@pytest.mark.parametrize("flavor", ["vllm", "sglang"])
def test_a_model_the_endpoint_does_not_serve_is_named_and_fails(flavor: str, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeEngine(flavor, model="served-model") as engine:
        assert main(["doctor", "--model", "nosuch", engine.url]) == 1
        sent = [r.path for r in engine.requests]
    out = capsys.readouterr().out
    assert "'nosuch' is not served" in out and "served-model" in out and "--model served-model" in out
    assert "--mode " not in out and "mode:" not in out  # never blamed on the mode
    assert not [p for p in sent if "completions" in p]  # nothing else is asked under a name it refuses


def test_the_model_asked_for_is_the_one_checked(capsys: pytest.CaptureFixture[str]) -> None:
    with FakeEngine("vllm", model="served-model", answer="ready") as engine:
        assert main(["doctor", "--model", "served-model", "--no-context-check", engine.url]) == 0
        asked = {r.body.get("model") for r in engine.requests if r.path.startswith("/v1/") and r.body}
    assert asked == {"served-model"}
    assert "model served-model" in capsys.readouterr().out


def test_when_neither_mode_answers_the_advice_names_neither(capsys: pytest.CaptureFixture[str]) -> None:
    refuse = lambda engine, body: (500, {"error": {"message": "engine is down", "code": 500}})  # noqa: E731
    routes = {("POST", "/v1/completions"): refuse, ("POST", "/v1/chat/completions"): refuse}
    with FakeEngine("vllm", routes=routes) as engine:
        assert main(["doctor", "--no-context-check", "--timeout", "5", engine.url]) == 1
    out = capsys.readouterr().out
    assert "use --mode" not in out and "neither completions nor chat answered" in out
