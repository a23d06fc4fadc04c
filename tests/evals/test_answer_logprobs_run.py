"""A run's answer probabilities around the binary result (evals/run/send/logprobs.py): the gold text of each
answer kind, an extra request that fails (the sample's score is kept, its logprobs None with why), an engine
that gives none (said once, `unavailable` on every sample, the binary results as without), `--no-logprobs`,
and the manifest's counts."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from typing import Any, ClassVar

import pytest

from ctxprobe.evals.cli.main import main
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.evals.records.store import RunStore
from ctxprobe.evals.run.bookkeeping import logprob_totals
from ctxprobe.evals.run.send.logprobs import LogprobCapture, gold_text, separator_tokens
from ctxprobe.evals.run.send.loop import run_recipes
from ctxprobe.runners.endpoint import EndpointClient, EndpointError
from ctxprobe.runners.endpoint_config import EndpointConfig
from ctxprobe.runners.response import AnswerLogprobs, ErrorKind, GeneratedToken, Response, TokenLogprob
from ctxprobe.tasks.build import build_sample
from ctxprobe.tasks.sample import Recipe, Sample
from tests.runners.fake_engine import FakeEngine


def niah(mode: str = "completions", **params: Any) -> Sample:
    return build_sample(Recipe(family="niah", params=params, context_tokens=400, depth=50, mode=mode))  # type: ignore[arg-type]


def test_gold_text_is_the_one_answer_as_written_after_the_prefix() -> None:
    sample = niah()
    value = sample.expected.answers[0]
    assert sample.prompt.endswith(sample.answer_prefix) and not sample.prompt[-1].isspace()
    assert gold_text(sample) == " " + value  # after `... is`: a space, then the value
    assert gold_text(niah("chat")) == niah("chat").expected.answers[0]  # the whole reply, no space
    several = niah(variant="multivalue")
    assert several.expected.kind == "values" and gold_text(several) is None
    spaced = sample.model_copy(update={"prompt": sample.prompt + "\n"})
    assert gold_text(spaced) == value


class _Adapter:
    """Stands in for the engine's tokenize calls: the prompt is tokens 1..9, the gold adds 10 and 11."""

    logprob_body: ClassVar[dict[str, Any]] = {}
    max_top_logprobs = 20

    def answer_tokens(self, calls: Any, **kw: Any) -> tuple[list[int], list[int]]:
        return list(range(1, 10)), list(range(1, 12))

    def text_tokens(self, calls: Any, text: str, model: str | None) -> list[int]:
        assert text.endswith(" ") and not text.endswith("  ")  # the prompt and the separator alone
        return list(range(1, 11))  # the space is token 10, the gold's first


class _Sender:
    """The answer request: text scored correct, its first token off the gold path (id 99)."""

    def __init__(self, text: str) -> None:
        self.text = text

    async def send(self, prompt: str, **kw: Any) -> Response:
        assert kw["logprobs"] == 3
        top = [TokenLogprob(token="x", id=99, logprob=-0.1), TokenLogprob(token="y", id=98, logprob=-3.0)]
        return Response(
            endpoint="http://127.0.0.1:9",
            text=self.text,
            prompt_tokens=9,
            completion_tokens=2,
            finish_reason="stop",
            generated=[GeneratedToken(token="x", id=99, logprob=-0.1, top=top)],
        )


class _FailingClient(EndpointClient):
    async def next_token(self, *args: Any, **kw: Any) -> Response:
        raise EndpointError(ErrorKind.http_error, "HTTP 500 from http://127.0.0.1:9: boom", status=500)


def test_a_failed_extra_request_keeps_the_binary_result(tmp_path: Path) -> None:
    sample = niah()
    recipe = sample.recipe
    text = f" {sample.expected.answers[0]}."
    client = _FailingClient(EndpointConfig(base_urls=("http://127.0.0.1:9",), model="m"))
    capture = LogprobCapture(client, "llama-server", 3)
    capture.adapter = _Adapter()  # type: ignore[assignment]
    store = RunStore(tmp_path)
    from ctxprobe.evals.run.send import loop

    real = loop.build_sample
    loop.build_sample = lambda r, c: sample  # type: ignore[assignment]
    try:
        asyncio.run(run_recipes([recipe], _Sender(text), store, concurrency=1, logprobs=capture))
    finally:
        loop.build_sample = real  # type: ignore[assignment]
        asyncio.run(client.aclose())
    store.close()
    (record,) = store.latest_records().values()
    assert record.score is not None and record.score.correct and record.error is None
    assert record.logprobs is None and "an extra logprob request failed" in (record.logprobs_detail or "")
    assert record.response is not None and record.response.text == text


class _ForcingClient(EndpointClient):
    """Forces the gold's first token (logprob -2) and continues greedily on it (the second, logprob -0.5)."""

    async def next_token(self, prompt_ids: list[int], *, force: int | None = None, **kw: Any) -> Response:
        token = (
            GeneratedToken(token=" ", id=force, logprob=-2.0)
            if force is not None
            else GeneratedToken(token="7", id=11, logprob=-0.5, top=[TokenLogprob(token="7", id=11, logprob=-0.5)])
        )
        return Response(
            endpoint="http://127.0.0.1:9",
            text=token.token,
            prompt_tokens=len(prompt_ids),
            completion_tokens=1,
            generated=[token],
        )


def test_the_separator_is_forced_but_not_counted_in_p_answer(tmp_path: Path) -> None:
    sample = niah()
    client = _ForcingClient(EndpointConfig(base_urls=("http://127.0.0.1:9",), model="m"))
    capture = LogprobCapture(client, "llama-server", 3)
    capture.adapter = _Adapter()  # type: ignore[assignment]
    response = asyncio.run(_Sender(" x").send(sample.prompt, logprobs=3))
    try:
        found, why = asyncio.run(capture.measure(sample, response, seed=0))
    finally:
        asyncio.run(client.aclose())
    assert why is None and isinstance(found, AnswerLogprobs)
    assert found.logprobs == [-2.0, -0.5] and found.answer_from == 1
    assert found.p_answer == pytest.approx(math.exp(-0.5))  # the space's -2 is format, not the answer
    assert found.model_copy(update={"answer_from": 0}).p_answer == pytest.approx(math.exp(-2.5))


@pytest.mark.parametrize(
    ("with_sep", "gold", "expected"),
    [
        ([1, 2, 3, 10], [10, 11, 12], 1),  # the space a token of its own
        ([1, 2, 3, 10], [20, 12], 0),  # the tokenizer joins it to the answer's first digit: ` 9`
        ([1, 2, 4, 10], [10, 11], 0),  # the prompt itself tokenizes otherwise with the space after it
        ([1, 2, 3, 10, 11], [10, 11], 0),  # nothing but separator: nothing would be left to count
        ([1, 2, 3], [10, 11], 0),  # the space added no token
    ],
)
def test_separator_tokens(with_sep: list[int], gold: list[int], expected: int) -> None:
    assert separator_tokens(with_sep, [1, 2, 3], gold) == expected


def _run(engine: FakeEngine, out: Path, *flags: str) -> list[dict[str, Any]]:
    code = main(
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
            "--quiet",
            "--no-report",
            "--results-dir",
            str(out),
            *flags,
        ]
    )
    assert code == 0
    run_dir = next(out.iterdir())
    return [json.loads(x) for x in (run_dir / "samples.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("flavor", ["sglang", "vllm"])
def test_an_engine_without_logprobs_records_unavailable_and_the_same_answers(
    flavor: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeEngine(flavor, context_length=8192, answer="The number is 1234567.") as engine:
        off = _run(engine, tmp_path / "off", "--no-logprobs")
        capsys.readouterr()
        on = _run(engine, tmp_path / "on")
        said = capsys.readouterr().err
        bodies = [c.body for c in engine.completion_calls()]
    assert all(r["logprobs"] is None for r in off)
    assert [r["logprobs"] for r in on] == ["unavailable"] * 2
    assert [(r["response"]["text"], r["score"]) for r in on] == [(r["response"]["text"], r["score"]) for r in off]
    assert len(bodies) == 4  # no extra request: the engine gives none
    if flavor == "sglang":
        assert said.count("gives no teacher-forced log-probabilities") == 1
        assert all("logprobs" not in b for b in bodies)
    else:  # vLLM would give them: asked for, none came back (this fake answers logprobs: null)
        assert all(b.get("logprobs") is True and b.get("top_logprobs") == 5 for b in bodies[2:])
        assert "logprobs" not in bodies[0]
    manifest = json.loads(next((tmp_path / "on").iterdir()).joinpath("manifest.json").read_text())
    assert manifest["logprobs"]["samples_unavailable"] == 2 and manifest["logprobs"]["extra_requests"] == 0


def _record(lp: AnswerLogprobs | str | None, detail: str | None = None) -> SampleRecord:
    return SampleRecord(sample=niah(), logprobs=lp, logprobs_detail=detail)  # type: ignore[arg-type]


def test_the_manifest_counts_the_measurement_and_its_cost() -> None:
    generated = AnswerLogprobs(
        gold=" 1",
        token_ids=[1, 2],
        logprobs=[-0.1, -0.2],
        greedy=[True, False],
        method="generated",
        extra_requests=1,
        extra_prompt_tokens=1001,
    )
    forced = generated.model_copy(update={"method": "forced", "extra_requests": 2, "extra_prompt_tokens": 2003})
    latest = {
        str(i): r
        for i, r in enumerate(
            [
                _record(generated),
                _record(forced),
                _record("unavailable"),
                _record(None, "no single rendering"),
                _record(None),
            ]
        )
    }
    totals = logprob_totals(latest, 5)
    assert totals is not None
    assert (totals.samples_measured, totals.samples_unavailable, totals.samples_unmeasured) == (2, 1, 1)
    assert totals.methods == {"generated": 1, "forced": 1}
    assert (totals.extra_requests, totals.extra_prompt_tokens) == (3, 3004)
    assert logprob_totals({"a": _record(None)}, 5) is None  # not asked for: nothing to say


def test_the_extra_requests_carry_the_samples_chain_in_the_session_header() -> None:
    """Through the real client and the openai SDK: the forced and greedy requests past a divergence name the
    sample's chain, as its answer request does (the fake answers without logprobs, so the measure itself ends
    unmeasurable: what is checked is what was sent)."""
    from ctxprobe.tasks.identity import chain_key

    sample = niah()
    response = asyncio.run(_Sender(" x").send(sample.prompt, logprobs=3))

    async def measured(url: str) -> tuple[Any, str | None]:
        async with EndpointClient(EndpointConfig(base_urls=(url,), model="m")) as client:
            capture = LogprobCapture(client, "llama-server", 3)
            capture.adapter = _Adapter()  # type: ignore[assignment]
            return await capture.measure(sample, response, seed=0)

    with FakeEngine("llama-server", context_length=8192) as engine:
        found, why = asyncio.run(measured(engine.url))
        calls = engine.completion_calls()
    assert found is None and why is not None  # unmeasurable on this fake, after its request
    assert calls and all(c.body["prompt"][:9] == list(range(1, 10)) for c in calls)  # the token-id requests
    assert {c.headers.get("x-session-id") for c in calls} == {chain_key(sample.recipe)}
