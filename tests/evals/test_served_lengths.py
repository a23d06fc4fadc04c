"""What a run says first: the engine and model it reached, and the suite's lengths that engine cannot serve
(`evals/run/served_lengths.py`), the same line the dry run prints before its cost."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxprobe.evals.cli.main import main
from tests.runners.fake_engine import FakeEngine


def test_served_lengths_by_hand() -> None:
    from ctxprobe.evals.run.served_lengths import check_lengths, engine_line
    from ctxprobe.runners.response import EngineInfo

    embedded = EngineInfo(
        engine="llama-server",
        version="b7000",
        context_length=1_000_512,
        context_source="GET /props",
        model="gemma-3-270m",
        context_requested=1_000_512,
        context_trained=32768,
    )
    check = check_lengths({16384: 10, 32768: 10, 65536: 5}, embedded)
    assert check.context == 32768 and check.unserved == (32768, 65536) and check.served_samples == 10
    assert "the model's trained context" in check.line() and "10 of the suite's 25 samples" in check.line()
    assert check_lengths({32766: 1}, embedded).served and not check_lengths({32766: 1}, embedded, 2).served
    line = engine_line(embedded, "http://127.0.0.1:1")
    assert "model gemma-3-270m (GGUF; started with 1,000,512 tokens a slot; trained context 32,768" in line
    silent = EngineInfo(engine="unknown")
    assert check_lengths({1_000_000: 1}, silent).served  # an engine that states nothing: nothing refused


def test_a_runs_first_line_names_the_engine_and_model_then_the_lengths_it_cannot_serve(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeEngine("vllm", context_length=4096) as engine:
        code = main(
            [
                "run",
                "--endpoint",
                engine.url,
                "--family",
                "niah",
                "--lengths",
                "1k,8k",
                "--depths",
                "50",
                "--quiet",
                "--no-report",
                "--allow-errors",
                "--results-dir",
                str(tmp_path),
            ]
        )
        sent = [engine.prompt_tokens(c.body) for c in engine.completion_calls()]
    err = capsys.readouterr().err.splitlines()
    assert code == 0 and sent and max(sent) <= 1024
    assert err[0].startswith("ctxprobe: engine vllm 0.33.0 at http://127.0.0.1:") and "model fake-model" in err[0]
    assert "context 4,096 tokens a request (GET /v1/models max_model_len)" in err[0]
    assert err[1] == (
        "ctxprobe: the engine serves at most 4,096 tokens a request (GET /v1/models max_model_len): it "
        "cannot serve length 8,192 (1 sample, recorded as too long, never sent); that leaves 1 of the "
        "suite's 2 samples"
    )
