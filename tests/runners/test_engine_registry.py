"""The engine registry is open: an adapter declared in this one file (its identifying call, context length,
tokenize route, too-long shape and metric names) is probed, doctored, counted, recognised when it rejects a
prompt for length, and scraped, with no other file edited. The fake server answers the toy's routes."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import pytest
from fake_engine import FakeEngine

import ctxprobe
from ctxprobe.runners.endpoint import EndpointClient, EndpointConfig, EndpointError
from ctxprobe.runners.engines import Call, Calls, EngineAdapter, adapters, known_engines, register, unregister
from ctxprobe.runners.engines.base import dig, positive_int
from ctxprobe.runners.metrics import scrape_metrics
from ctxprobe.runners.probe import probe_engine
from ctxprobe.runners.response import ErrorKind
from ctxprobe.runners.server_tokenizer import server_token_counter
from ctxprobe.runners.too_long import parse_too_long


class ToyServe(EngineAdapter):
    name = "toyserve"
    owned_by = "toy-lab"
    probe_rank = 5  # tried first, before every built-in engine
    context_source = "GET /toy/info window"
    metrics: ClassVar[dict[str, str]] = {"prompt_tokens": "toy:prompt_tokens_total"}
    cached_tokens_advice = "start toyserve with --report-cache"
    too_long_marker = re.compile(r"toy_window_exceeded")
    too_long_limit = (re.compile(r"window (\d+)"),)
    too_long_prompt = (re.compile(r"got (\d+)"),)

    def identify(self, calls: Calls) -> Mapping[str, Any] | None:
        body = calls.get("/toy/info")
        return body if dig(body, "toy") is True else None

    def context_length(self, card: Mapping[str, Any], ident: Mapping[str, Any]) -> int | None:
        return positive_int(dig(ident, "window"))

    def tokenize_call(self, text: str, *, special: bool, model: str | None) -> Call:
        return Call("/toy/split", {"text": text, "bos": special})


def _info(engine: FakeEngine, body: Any) -> tuple[int, Any]:
    return 200, {"toy": True, "version": "0.1-toy", "window": engine.context_length}


def _split(engine: FakeEngine, body: Any) -> tuple[int, Any]:
    count = engine.words(body["text"]) + (1 if body["bos"] else 0)
    return 200, {"tokens": list(range(100, 100 + count))}


def _too_long(engine: FakeEngine, limit: int, prompt_tokens: int) -> Any:
    return {"error": {"message": f"toy_window_exceeded: window {limit}, got {prompt_tokens}"}}


@pytest.fixture
def toy() -> Iterator[FakeEngine]:
    register(ToyServe)
    try:
        with FakeEngine(
            "toyserve",
            context_length=300,
            answer="ready",
            routes={("GET", "/toy/info"): _info, ("POST", "/toy/split"): _split},
            too_long=_too_long,
        ) as engine:
            yield engine
    finally:
        unregister("toyserve")
    assert "toyserve" not in known_engines()


def test_the_toy_is_registered_and_tried_first(toy: FakeEngine) -> None:
    assert "toyserve" in known_engines() and adapters()[0].name == "toyserve"


def test_the_toy_is_probed(toy: FakeEngine) -> None:
    info = probe_engine(toy.url)
    assert (info.engine, info.version, info.context_length) == ("toyserve", "0.1-toy", 300)
    assert info.context_source == "GET /toy/info window" and info.model == "fake-model"


def test_the_toy_counts_through_its_tokenize_route(toy: FakeEngine) -> None:
    counter = server_token_counter(toy.url)
    assert counter.count("one two three four") == 4
    assert counter.bos_tokens == 1
    assert counter.token_ids("alpha beta") == [100, 101]
    assert next(r.body for r in toy.requests if r.path == "/toy/split") == {"text": "one two three four", "bos": False}


def test_the_toy_is_doctored(toy: FakeEngine) -> None:
    report = ctxprobe.doctor(toy.url)
    found = {c.name: c for c in report.checks}
    assert report.engine.engine == "toyserve" and found["engine"].status == "ok"
    assert found["context length"].found.startswith("300 tokens")
    assert found["tokenize"].status == "ok" and "toyserve" in found["tokenize"].found
    assert found["metrics"].status == "ok" and "prompt_tokens" in found["metrics"].found
    cached = found["completions + cached tokens"]
    assert cached.status == "missing" and cached.advice == "start toyserve with --report-cache"


def test_the_toys_too_long_rejection_is_an_error_with_its_limit(toy: FakeEngine) -> None:
    found = parse_too_long(_too_long(toy, 300, 412))
    assert found is not None and (found.limit, found.prompt_tokens) == (300, 412)

    async def send() -> EndpointError:
        async with EndpointClient(EndpointConfig(base_urls=(toy.url,), model="fake-model", retries=0)) as client:
            with pytest.raises(EndpointError) as caught:
                await client.send("word " * 400, max_tokens=4, planned_tokens=401, seed=0)
            return caught.value

    err = asyncio.run(send())
    assert err.kind is ErrorKind.rejected_too_long and err.limit == 300


def test_the_toys_metrics_are_scraped_under_ctxprobes_names(toy: FakeEngine) -> None:
    assert scrape_metrics(toy.url, "toyserve") == {"prompt_tokens": 0.0}
