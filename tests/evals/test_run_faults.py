"""`ctxprobe run` when the endpoint misbehaves around the completions: transient 5xx on /tokenize, a
tokenizer that stops serving, a key revoked mid-run, a frozen server, credentials in the URL, prompts the
server counts at another length than planned, retried requests. A fake vLLM with the faults added (its
shapes from docs/ENGINES.md); the retry backoff is shortened so the tests take seconds."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from ctxprobe.evals.cli.main import main
from tests.runners.fake_engine import FakeEngine, Reply

pytestmark = pytest.mark.usefixtures("quick_backoff")


def _run(engine_url: str, results: Path, *extra: str) -> int:
    return main(
        [
            "run",
            "--endpoint",
            engine_url,
            "--family",
            "niah",
            "--lengths",
            "1k",
            "--depths",
            "0,50,100",
            "--samples",
            "3",
            "--quiet",
            "--no-report",
            "--results-dir",
            str(results),
            *extra,
        ]
    )


def _records(results: Path) -> list[dict[str, Any]]:
    run_dir = next(results.iterdir())
    return [json.loads(x) for x in (run_dir / "samples.jsonl").read_text().splitlines()]


def _manifest(results: Path) -> dict[str, Any]:
    return json.loads((next(results.iterdir()) / "manifest.json").read_text())


def test_transient_tokenize_faults_are_retried_and_the_run_finishes(tmp_path: Path) -> None:
    with FakeEngine("vllm", answer="The number is 1234567.", tokenize_fail_every=5) as engine:
        code = _run(engine.url, tmp_path)
        faults = engine.tokenize_calls // 5
    assert faults >= 5  # every fifth tokenize call answered 503
    assert code == 0  # every sample scored (wrong answers all: the fake's number is no needle's)
    records = _records(tmp_path)
    assert len(records) == 9 and all(r["error"] is None and r["score"] is not None for r in records)
    assert _manifest(tmp_path)["status"] == "finished"


def test_a_tokenizer_that_stops_serving_mid_run_is_a_lost_endpoint_not_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeEngine("vllm", completion_delay_s=0.05) as engine:
        engine.tokenize_fail_after = 10**9
        engine.answer = lambda body: setattr(engine, "tokenize_fail_after", 0) or "42"  # 503 from the first answer on
        code = _run(engine.url, tmp_path, "--concurrency", "1", "--order", "as-listed")
    assert code == 3
    manifest = _manifest(tmp_path)
    assert manifest["status"] == "endpoint_lost"
    assert 1 <= manifest["samples_done"] + manifest["samples_errored"] < 9
    err = capsys.readouterr().err
    assert "HTTP 503" in err and "--resume" in err and "error:" not in err


def test_a_key_revoked_mid_run_stops_the_run_resumably(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_KEY", "k-1")
    with FakeEngine("vllm", api_key="k-1") as engine:
        served = []

        def answer(body: dict[str, Any]) -> str:
            served.append(1)
            if len(served) == 3:
                engine.api_key = "k-2"  # revoked: every later request is refused with 401
            return "42"

        engine.answer = answer
        code = _run(engine.url, tmp_path, "--api-key-env", "FAKE_KEY", "--concurrency", "1")
    assert code == 3
    assert _manifest(tmp_path)["status"] == "endpoint_lost"
    assert len(_records(tmp_path)) == 3  # the refused sample is not recorded: resume sends it again
    err = capsys.readouterr().err
    assert "refused the API key" in err and "k-1" not in err


def test_a_frozen_server_costs_about_one_timeout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeEngine("vllm", completion_delay_s=0.05) as engine:
        done = []

        def answer(body: dict[str, Any]) -> str:
            done.append(1)
            if len(done) == 2:
                engine.freeze()  # as SIGSTOP: connections accepted, nothing answered, builds' tokenize calls too
            return "42"

        engine.answer = answer
        started = time.monotonic()
        code = _run(
            engine.url, tmp_path, "--timeout", "1", "--timeout-per-1k", "0", "--concurrency", "2", "--samples", "20"
        )
        took = time.monotonic() - started
        engine.thaw()
    assert code == 3 and _manifest(tmp_path)["status"] == "endpoint_lost"
    assert took < 11, took  # a 1 s request deadline, then a 1 s check that the server answers at all
    err = capsys.readouterr().err
    kept = len(_records(tmp_path))
    ending = next(line for line in err.splitlines() if line.startswith("ctxprobe: the endpoint stopped serving"))
    assert f"{kept} samples done, 0 errored" in ending and "within 1 s" in ending
    in_flight = int(ending.split(" in flight")[0].rsplit(" ", 1)[-1])
    not_sent = int(ending.split(" not sent")[0].rsplit(" ", 1)[-1])
    assert in_flight >= 1 and kept + in_flight + not_sent == 60  # every planned sample accounted for once


def test_retried_requests_are_counted_on_the_record(tmp_path: Path) -> None:
    with FakeEngine("vllm") as engine:
        engine.script.extend([Reply(status=500), Reply(status=503)])
        code = _run(engine.url, tmp_path, "--concurrency", "1", "--order", "as-listed", "--samples", "1")
    assert code == 0
    attempts = sorted(r["attempts"] for r in _records(tmp_path))
    assert attempts == [1, 1, 3]  # one sample took three requests (two 5xx, then the answer)


def test_credentials_in_the_url_are_never_shown_or_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeEngine("vllm") as engine:
        url = engine.url.replace("http://", "http://user:SECRET-7@")
        engine.script.extend([Reply(status=404, body={"error": {"message": "nope"}})])
        code = _run(url, tmp_path, "--samples", "1", "--concurrency", "1")
        auth = {r.headers.get("authorization") for r in engine.requests}
    assert code == 1  # the one 404 is an errored sample
    assert "Basic dXNlcjpTRUNSRVQtNw==" in auth  # user:SECRET-7, sent as basic auth on every kind of call
    out = capsys.readouterr()
    assert "SECRET-7" not in out.err + out.out
    for path in next(tmp_path.iterdir()).iterdir():
        assert "SECRET-7" not in path.read_text(errors="replace"), path.name
    assert main(["run", "--endpoint", "http://user:SECRET-7@[::1", "--quiet", "--results-dir", str(tmp_path)]) == 2
    assert "SECRET-7" not in capsys.readouterr().err


@pytest.mark.parametrize(("scale", "flagged"), [(3.0, 9), (0.1, 9), (1.0, 0)])
def test_prompts_served_at_another_length_are_flagged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], scale: float, flagged: int
) -> None:
    with FakeEngine("vllm", usage_scale=scale) as engine:
        _run(engine.url, tmp_path)
    records = _records(tmp_path)
    off = [r for r in records if r["prompt_tokens_off"] is not None]
    assert len(off) == flagged
    for r in off:  # the field is the server's count minus the plan
        assert r["prompt_tokens_off"] == r["response"]["prompt_tokens"] - r["sample"]["planned_tokens"]
        assert r["error"] is None and r["score"] is not None  # still scored: the model did answer it
    assert _manifest(tmp_path)["samples_count_off"] == flagged
    out = capsys.readouterr()
    assert ("prompt length off the plan: 9 samples" in out.out) == bool(flagged)
    assert ("9 samples served at another length than planned" in out.err) == bool(flagged)


def test_timed_out_samples_name_the_flag_to_raise_in_their_error_and_the_closing_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeEngine("vllm", answer="The number is 1234567.") as engine:
        engine.script.extend([Reply(delay_s=1.5), Reply(delay_s=1.5)])  # the first two samples' prefills
        code = _run(
            engine.url, tmp_path, "--timeout", "0.5", "--timeout-per-1k", "0", "--retries", "0", "--concurrency", "1"
        )
    assert code == 1
    timed_out = [r for r in _records(tmp_path) if r["error"] == "timeout"]
    assert len(timed_out) == 2 and all("raise --timeout to wait longer" in r["error_detail"] for r in timed_out)
    closing = capsys.readouterr().err.strip().splitlines()[-1]
    assert "2 timed out" in closing and "--resume" in closing and "--timeout 1 " in closing, closing
