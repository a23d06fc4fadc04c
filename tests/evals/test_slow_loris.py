"""A server that keeps dripping bytes (headers, then a byte a second, forever) never holds a command: every
request has a deadline for the whole response, headers and body, and each command ends within it in one line
with exit 3 (the endpoint is not serving). Per-read timeouts never fire against such a server. Its byte comes
every DRIP_S, a quarter of the 1 s deadline, so the tests take seconds and a per-read timeout would still
never fire."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from ctxprobe.evals.cli.main import main
from ctxprobe.runners.retry import CallTimedOut
from ctxprobe.runners.server_tokenizer import ServerTokenizer
from tests.runners.fake_engine import FakeEngine

DRIP_S = 0.25
DEADLINE = ["--timeout", "1", "--timeout-per-1k", "0"]


def _error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("ctxprobe: error") or "stopped serving" in line]


def test_run_against_a_slow_loris_ends_within_its_deadline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeEngine("vllm") as engine:
        done = []

        def answer(body: dict[str, Any]) -> str:
            done.append(1)
            if len(done) == 3:
                engine.slow_loris(
                    every_s=DRIP_S
                )  # every later request: completions, tokenize, the check that it answers
            return "The number is 1234567."

        engine.answer = answer
        started = time.monotonic()
        code = main(
            [
                "run",
                "--family",
                "niah",
                "--lengths",
                "1k",
                "--samples",
                "10",
                "--quiet",
                "--no-report",
                "--results-dir",
                str(tmp_path),
                "--concurrency",
                "2",
                "--endpoint",
                engine.url,
                *DEADLINE,
            ]
        )
        took = time.monotonic() - started
    err = capsys.readouterr().err
    print(f"run against a slow loris ended in {took:.1f} s")
    assert code == 3, err
    assert took < 15, took  # a 1 s request deadline, then a 1 s check that the server answers at all
    [line] = [ln for ln in err.splitlines() if "stopped serving" in ln]
    assert "within 1 s" in line


def test_doctor_against_a_slow_loris_ends_within_its_deadline(capsys: pytest.CaptureFixture[str]) -> None:
    with FakeEngine("vllm") as engine:
        engine.slow_loris(every_s=DRIP_S)
        started = time.monotonic()
        code = main(["doctor", engine.url, "--timeout", "1"])
        took = time.monotonic() - started
    err = capsys.readouterr().err
    print(f"doctor against a slow loris ended in {took:.1f} s")
    assert code == 3, err
    assert took < 1 + 3, took
    [line] = _error_lines(err)
    assert "no complete answer within 1 s" in line and "--timeout" in line


def test_limit_against_a_slow_loris_ends_within_its_deadline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeEngine("vllm") as engine:
        engine.slow_loris(every_s=DRIP_S)
        started = time.monotonic()
        code = main(["limit", engine.url, "--results-dir", str(tmp_path), "--skip-effective", *DEADLINE])
        took = time.monotonic() - started
    err = capsys.readouterr().err
    print(f"limit against a slow loris ended in {took:.1f} s")
    assert code == 3, err
    assert took < 1 + 3, took
    [line] = _error_lines(err)
    assert "no complete answer within 1 s" in line


def test_the_server_token_counter_against_a_slow_loris_ends_within_its_deadline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ctxprobe.runners.retry import RetryPolicy

    with FakeEngine("vllm") as engine:
        engine.slow_loris("/tokenize", every_s=DRIP_S)
        counter = ServerTokenizer(engine.url, "vllm", policy=RetryPolicy(timeout_s=0.6))
        started = time.monotonic()
        with pytest.raises(CallTimedOut, match=r"no complete answer within 0\.6 s"):
            counter.count("a few words")
        took = time.monotonic() - started
        assert 0.6 <= took < 2.1, took
        started = time.monotonic()  # the run that counts through it: one line, exit 3
        code = main(
            [
                "run",
                "--family",
                "niah",
                "--lengths",
                "1k",
                "--samples",
                "2",
                "--quiet",
                "--no-report",
                "--results-dir",
                str(tmp_path),
                "--endpoint",
                engine.url,
                *DEADLINE,
            ]
        )
        took_run = time.monotonic() - started
    err = capsys.readouterr().err
    print(f"token counter against a slow loris ended in {took:.1f} s, the run counting through it in {took_run:.1f} s")
    assert code == 3, err
    assert took_run < 10, took_run
    [line] = _error_lines(err)
    assert "/tokenize" in line and "within 1 s" in line
