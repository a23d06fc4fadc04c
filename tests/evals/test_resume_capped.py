"""A run capped by the server's context: the samples over it end as errors (`rejected_too_long`, whether the
run knew the limit and sent nothing, or the server answered 400), the closing line says what `--resume` does
with them (keeps them, against the same server; a longer context serves them), and `--resume` against the
same server (engine, model and context, as the manifest records them) never sends them again, while a
server with a longer context is sent exactly them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ctxprobe.evals.cli.main import main
from ctxprobe.evals.records.load import load_run
from ctxprobe.evals.records.record import ErrorKind
from tests.runners.fake_engine import FakeEngine

ANSWER = "The special magic number is 1234567."
BASE = ["--family", "niah", "--lengths", "1k,4k", "--depths", "0,100", "--token-counter", "estimate", "--quiet"]


def _run(argv: list[str], capsys: Any) -> tuple[int, str]:
    capsys.readouterr()
    code = main(argv)
    return code, capsys.readouterr().err.strip().splitlines()[-1]


def _folder(results: Path) -> Path:
    [run] = [p for p in results.iterdir() if p.is_dir()]
    return run


def _sent_lengths(engine: FakeEngine) -> list[int]:
    return sorted(engine.prompt_tokens(c.body) for c in engine.completion_calls())


@pytest.mark.parametrize("how", ["stated", "answered 400"])
def test_resume_against_the_same_server_never_sends_a_sample_it_rejected_as_too_long(
    how: str, tmp_path: Path, capsys: Any
) -> None:
    server = {"context_length": 3000} if how == "stated" else {"context_length": 65536, "accepts_up_to": 2000}
    with FakeEngine("vllm", answer=ANSWER, **server) as engine:  # type: ignore[arg-type]
        code, line = _run(["run", "--endpoint", engine.url, *BASE, "--results-dir", str(tmp_path)], capsys)
        first = _sent_lengths(engine)
        run = _folder(tmp_path)
        assert code == 1
        assert "2 did not fit in the server's context" in line and "never sends them again" in line, line
        assert "sends them again" not in line.replace("never sends them again", "")
        rejected = {r.sample.sample_id for r in load_run(run).records if r.error is ErrorKind.rejected_too_long}
        assert len(rejected) == 2
        code, again = _run(["run", "--resume", str(run), "--quiet"], capsys)
        assert _sent_lengths(engine) == first  # nothing sent again
        assert code == 1 and "never sends them again" in again, again
        assert {r.sample.sample_id for r in load_run(run).records if r.error is ErrorKind.rejected_too_long} == rejected
    with FakeEngine("vllm", answer=ANSWER, context_length=65536) as longer:  # a server that holds them
        code, line = _run(["run", "--resume", str(run), "--endpoint", longer.url, "--quiet"], capsys)
        assert code == 0, line
        assert len(longer.completion_calls()) == 2 and min(_sent_lengths(longer)) > 2000  # exactly the 4k two
    assert {r.sample.sample_id for r in load_run(run).records if r.error is None} >= rejected


def test_other_errors_are_still_sent_again_beside_the_capped_ones(tmp_path: Path, capsys: Any) -> None:
    """A run with a capped sample and a failed one: the line says both, and a resume sends the failed one."""
    from tests.runners.fake_engine import Reply

    with FakeEngine("vllm", answer=ANSWER, context_length=3000) as engine:
        engine.script.append(Reply(status=400))
        code, line = _run(
            [
                "run",
                "--endpoint",
                engine.url,
                *BASE,
                "--retries",
                "0",
                "--concurrency",
                "1",
                "--order",
                "as-listed",
                "--results-dir",
                str(tmp_path),
            ],
            capsys,
        )
        assert code == 1 and "sends the others again" in line and "2 did not fit" in line, line
        sent = len(engine.completion_calls())
        code, _ = _run(["run", "--resume", str(_folder(tmp_path)), "--quiet"], capsys)
        assert len(engine.completion_calls()) == sent + 1  # the failed one, not the two over the context


def test_an_engine_ctxprobe_started_is_the_same_server_at_a_new_port() -> None:
    from ctxprobe.evals.run.served_lengths import same_limit
    from ctxprobe.runners.response import EngineInfo

    launched = EngineInfo(
        engine="llama-server",
        version="b1",
        model="gemma",
        context_length=4096,
        base_url="http://127.0.0.1:40001",
        context_requested=4096,
        context_trained=32768,
    )
    assert same_limit(launched, launched.model_copy(update={"base_url": "http://127.0.0.1:40002"}))
    assert not same_limit(launched, launched.model_copy(update={"context_requested": 8192, "context_length": 8192}))
    remote = EngineInfo(engine="vllm", version="0.33.0", model="m", context_length=4096, base_url="http://a:8000")
    assert same_limit(remote, remote) and not same_limit(
        remote, remote.model_copy(update={"base_url": "http://b:8000"})
    )
    assert not same_limit(remote, remote.model_copy(update={"model": "other"})) and not same_limit(None, remote)
