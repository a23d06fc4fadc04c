"""EndpointClient against fake engines: shapes, retries and backoff, too-long, timeouts, reasoning, replicas."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Coroutine
from typing import Any, TypeVar

import pytest
from fake_engine import CHAT_TEMPLATE_TOKENS, FLAVORS, FakeEngine, Reply

from ctxprobe.evals.records.record import ErrorKind, Response
from ctxprobe.runners.endpoint import EndpointClient, EndpointConfig, EndpointError
from ctxprobe.tasks.errors import UserError

T = TypeVar("T")
FAST: dict[str, Any] = {"backoff_base_s": 0.01, "backoff_max_s": 0.05}


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


async def send_one(config: EndpointConfig, prompt: str = "find the number", **kw: Any) -> Response:
    async with EndpointClient(config) as client:
        return await client.send(
            prompt,
            max_tokens=kw.get("max_tokens", 8),
            planned_tokens=kw.get("planned_tokens", 10),
            seed=kw.get("seed", 7),
        )


async def fail_one(config: EndpointConfig, prompt: str = "find the number", **kw: Any) -> EndpointError:
    with pytest.raises(EndpointError) as caught:
        await send_one(config, prompt, **kw)
    return caught.value


@pytest.mark.parametrize("flavor", FLAVORS)
@pytest.mark.parametrize("mode", ["completions", "chat"])
@pytest.mark.parametrize("stream", [True, False])
def test_each_engine_shape_gives_text_usage_and_timing(flavor: str, mode: str, stream: bool) -> None:
    with FakeEngine(flavor) as engine:  # type: ignore[arg-type]
        config = EndpointConfig(base_urls=(engine.url,), model="fake-model", mode=mode, stream=stream)  # type: ignore[arg-type]
        response = run(send_one(config, "one two three"))
        body = engine.completion_calls()[0].body
    assert response.text == "The answer is 42."
    assert response.endpoint == engine.url
    assert response.prompt_tokens == (3 + CHAT_TEMPLATE_TOKENS if mode == "chat" else 4)
    assert response.completion_tokens == 4
    assert response.latency_s > 0
    assert (response.ttft_s is not None) == stream
    assert response.cached_tokens == (0 if flavor == "llama-server" else None)
    assert body["temperature"] == 0 and body["seed"] == 7 and body["max_tokens"] == 8
    if mode == "chat":
        assert body["messages"] == [{"role": "user", "content": "one two three"}]
    else:
        assert body["prompt"] == "one two three"
    assert body.get("stream", False) == stream
    if stream:
        assert body["stream_options"] == {"include_usage": True}


def test_model_is_discovered_from_the_first_listed_model() -> None:
    with FakeEngine("vllm", model="org/served-name") as engine:
        run(send_one(EndpointConfig(base_urls=(engine.url + "/v1/",))))
        assert engine.completion_calls()[0].body["model"] == "org/served-name"
        assert engine.requests[0].path == "/v1/models"


@pytest.mark.parametrize("flavor", FLAVORS)
@pytest.mark.parametrize("mode", ["completions", "chat"])
def test_too_long_is_typed_with_the_limit_and_never_retried(flavor: str, mode: str) -> None:
    with FakeEngine(flavor, context_length=50) as engine:  # type: ignore[arg-type]
        config = EndpointConfig(base_urls=(engine.url,), model="m", mode=mode, **FAST)  # type: ignore[arg-type]
        err = run(fail_one(config, "word " * 80))
        assert len(engine.completion_calls()) == 1
    assert err.kind is ErrorKind.rejected_too_long
    assert "limit 50 tokens" in err.detail
    assert err.attempts == 1


@pytest.mark.parametrize("status", [429, 500, 502, 503])
def test_retryable_status_is_retried_then_succeeds(status: int) -> None:
    with FakeEngine("vllm") as engine:
        engine.script.extend([Reply(status=status), Reply(status=status)])
        response = run(send_one(EndpointConfig(base_urls=(engine.url,), model="m", **FAST)))
        assert len(engine.completion_calls()) == 3
    assert response.text == "The answer is 42."


def test_retries_run_out_into_http_error() -> None:
    with FakeEngine("sglang") as engine:
        engine.script.extend([Reply(status=500)] * 10)
        err = run(fail_one(EndpointConfig(base_urls=(engine.url,), model="m", retries=2, **FAST)))
        assert len(engine.completion_calls()) == 3
    assert err.kind is ErrorKind.http_error
    assert err.attempts == 3
    assert "HTTP 500" in err.detail


def test_backoff_grows_and_honours_retry_after() -> None:
    with FakeEngine("vllm") as engine:
        engine.script.extend([Reply(status=429, headers={"Retry-After": "0.3"})])
        config = EndpointConfig(base_urls=(engine.url,), model="m", backoff_base_s=0.01, backoff_max_s=1.0)

        async def timed() -> float:
            loop = asyncio.get_running_loop()
            start = loop.time()
            await send_one(config)
            return loop.time() - start

        assert run(timed()) >= 0.3
    client = EndpointClient(EndpointConfig(base_urls=("http://127.0.0.1:9",), backoff_base_s=1, backoff_max_s=8))
    delays = [client._backoff_s(n, None) for n in (1, 2, 3, 4, 5, 6)]
    assert 0.5 <= delays[0] <= 1 and 1 <= delays[1] <= 2 and 2 <= delays[2] <= 4
    assert all(4 <= d <= 8 for d in delays[3:])


def test_other_client_errors_are_not_retried() -> None:
    with FakeEngine("vllm") as engine:
        engine.script.append(Reply(status=404, body={"error": {"message": "model not found"}}))
        err = run(fail_one(EndpointConfig(base_urls=(engine.url,), model="m", **FAST)))
        assert len(engine.completion_calls()) == 1
    assert err.kind is ErrorKind.http_error and "404" in err.detail


def test_dropped_connections_are_retried_then_reported() -> None:
    with FakeEngine("llama-server") as engine:
        engine.script.extend([Reply(drop=True)] * 3)
        err = run(fail_one(EndpointConfig(base_urls=(engine.url,), model="m", retries=2, **FAST)))
    assert err.kind is ErrorKind.connection_error and err.attempts == 3


def test_one_dropped_connection_then_success() -> None:
    with FakeEngine("llama-server") as engine:
        engine.script.append(Reply(drop=True))
        assert run(send_one(EndpointConfig(base_urls=(engine.url,), model="m", **FAST))).text


def test_unreachable_endpoint_is_a_connection_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nothing listens there
    err = run(fail_one(EndpointConfig(base_urls=(f"http://127.0.0.1:{port}",), model="m", retries=1, **FAST)))
    assert err.kind is ErrorKind.connection_error


def test_unreachable_endpoint_during_model_discovery_is_a_user_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(UserError, match="is unreachable"):
        run(send_one(EndpointConfig(base_urls=(f"http://127.0.0.1:{port}",))))


@pytest.mark.parametrize("stream", [True, False])
def test_slow_prefill_times_out_once_without_retry(stream: bool) -> None:
    with FakeEngine("vllm") as engine:
        engine.script.append(Reply(delay_s=3.0))
        config = EndpointConfig(
            base_urls=(engine.url,), model="m", timeout=0.3, timeout_per_1k=0.0, stream=stream, **FAST
        )
        err = run(fail_one(config))
        # the fake records a call when its thread reads the request, which under load can come after the 0.3 s
        # timeout: wait for it, then long enough that a retry would have been read too
        deadline = time.monotonic() + 3.0
        while not engine.completion_calls() and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.3)
        assert len(engine.completion_calls()) == 1
    assert err.kind is ErrorKind.timeout and err.attempts == 1


def test_deadline_grows_with_planned_tokens() -> None:
    with FakeEngine("vllm") as engine:
        engine.script.append(Reply(delay_s=0.5))
        config = EndpointConfig(base_urls=(engine.url,), model="m", timeout=0.2, timeout_per_1k=1.0)
        assert config.request_timeout_s(1_000_000) == pytest.approx(1000.2)
        assert run(send_one(config, planned_tokens=1000)).text  # 1.2 s allowed for a 0.5 s prefill


@pytest.mark.parametrize(
    ("flavor", "field"), [("vllm", "reasoning"), ("sglang", "reasoning_content"), ("llama-server", "reasoning_content")]
)
@pytest.mark.parametrize("stream", [True, False])
def test_reasoning_fields_are_read(flavor: str, field: str, stream: bool) -> None:
    with FakeEngine(flavor, reasoning="first find the key", answer="42") as engine:  # type: ignore[arg-type]
        config = EndpointConfig(base_urls=(engine.url,), model="m", mode="chat", stream=stream)
        response = run(send_one(config))
    assert response.text == "42"
    assert response.reasoning == "first find the key"


@pytest.mark.parametrize("mode", ["completions", "chat"])
def test_inline_think_is_moved_to_reasoning(mode: str) -> None:
    with FakeEngine("llama-cpp-python", answer="<think>the needle says 7</think> 7") as engine:
        response = run(send_one(EndpointConfig(base_urls=(engine.url,), model="m", mode=mode)))  # type: ignore[arg-type]
    assert response.text == "7"
    assert response.reasoning == "the needle says 7"


def test_no_text_and_no_reasoning_is_empty() -> None:
    with FakeEngine("vllm", answer="") as engine:
        err = run(fail_one(EndpointConfig(base_urls=(engine.url,), model="m")))
    assert err.kind is ErrorKind.empty


def test_generated_whitespace_is_a_response() -> None:
    with FakeEngine("vllm", answer="\n \n \n") as engine:
        response = run(send_one(EndpointConfig(base_urls=(engine.url,), model="m")))
    assert response.text == "\n \n \n" and response.completion_tokens


def test_reasoning_without_text_is_a_response() -> None:
    with FakeEngine("sglang", answer="", reasoning="ran out of tokens while thinking") as engine:
        response = run(send_one(EndpointConfig(base_urls=(engine.url,), model="m", mode="chat")))
    assert response.text == "" and response.reasoning


def test_refused_stream_options_falls_back_to_plain_streaming() -> None:
    with FakeEngine("vllm") as engine:
        engine.script.append(
            Reply(
                status=400,
                body={"error": {"message": "Unrecognized request argument supplied: stream_options", "code": 400}},
            )
        )

        async def twice() -> list[Response]:
            async with EndpointClient(EndpointConfig(base_urls=(engine.url,), model="m", **FAST)) as client:
                return [await client.send("a", max_tokens=4, planned_tokens=2, seed=0) for _ in range(2)]

        first, second = run(twice())
        calls = engine.completion_calls()
    assert first.text == second.text == "The answer is 42."
    assert first.prompt_tokens is None  # no usage without stream_options
    assert "stream_options" in calls[0].body
    assert all("stream_options" not in c.body for c in calls[1:])


def test_api_key_comes_from_the_named_variable_and_never_shows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXPROBE_TEST_KEY", "sk-secret-123")
    with FakeEngine("vllm") as engine:
        config = EndpointConfig(base_urls=(engine.url,), model="m", api_key_env="CTXPROBE_TEST_KEY")
        run(send_one(config))
        assert engine.completion_calls()[0].headers["authorization"] == "Bearer sk-secret-123"
    assert "sk-secret" not in repr(config)
    assert "sk-secret" not in str(config.__dict__)


def test_unset_key_variable_sends_a_dummy_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeEngine("vllm") as engine:
        run(send_one(EndpointConfig(base_urls=(engine.url,), model="m")))
        assert engine.completion_calls()[0].headers["authorization"] == "Bearer EMPTY"


def test_replicas_share_the_load() -> None:
    with FakeEngine("vllm") as a, FakeEngine("vllm") as b:
        for engine in (a, b):
            engine.script.extend([Reply(delay_s=0.2)] * 4)

        async def many() -> tuple[list[Response], int]:
            async with EndpointClient(EndpointConfig(base_urls=(a.url, b.url), model="m", concurrency=4)) as client:
                tasks = [
                    asyncio.create_task(client.send("x", max_tokens=2, planned_tokens=1, seed=i)) for i in range(8)
                ]
                await asyncio.sleep(0.1)
                peak = max(client.in_flight.values())
                return list(await asyncio.gather(*tasks)), peak

        responses, peak = run(many())
        assert len(a.completion_calls()) == len(b.completion_calls()) == 4
    assert peak == 2  # 4 in flight, split 2 + 2
    assert {r.endpoint for r in responses} == {a.url, b.url}


def test_a_slow_replica_gets_fewer_requests() -> None:
    with FakeEngine("vllm") as slow, FakeEngine("vllm") as fast:
        slow.script.extend([Reply(delay_s=0.6)] * 10)

        async def many() -> None:
            async with EndpointClient(EndpointConfig(base_urls=(slow.url, fast.url), model="m", concurrency=2)) as c:
                await asyncio.gather(*(c.send("x", max_tokens=2, planned_tokens=1, seed=i) for i in range(10)))

        run(many())
        assert len(slow.completion_calls()) == 1
        assert len(fast.completion_calls()) == 9


def test_concurrency_is_bounded() -> None:
    with FakeEngine("vllm") as engine:
        engine.script.extend([Reply(delay_s=0.15)] * 6)

        async def many() -> float:
            loop = asyncio.get_running_loop()
            start = loop.time()
            async with EndpointClient(EndpointConfig(base_urls=(engine.url,), model="m", concurrency=2)) as client:
                await asyncio.gather(*(client.send("x", max_tokens=2, planned_tokens=1, seed=i) for i in range(6)))
            return loop.time() - start

        assert run(many()) >= 0.45  # 6 requests, 2 at a time, 0.15 s each


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"base_urls": ()}, "no endpoint"),
        ({"base_urls": ("ftp://x",)}, "invalid endpoint"),
        ({"base_urls": ("http://h:1",), "concurrency": 0}, "concurrency"),
        ({"base_urls": ("http://h:1",), "mode": "edit"}, "unknown mode"),
    ],
)
def test_bad_configs_are_user_errors(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(UserError, match=message):
        EndpointConfig(**kwargs)


def test_urls_are_normalised_to_the_server_root() -> None:
    config = EndpointConfig(base_urls=("http://h:8000/v1/", "http://h:8001", "http://h:8000"))
    assert config.base_urls == ("http://h:8000", "http://h:8001")
