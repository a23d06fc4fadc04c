"""The one retry policy of every call but the completions (EndpointCalls: probe, tokenize, metrics), and
the daemon threads that carry tokenize calls and builds."""

from __future__ import annotations

import random
import threading
import time

import pytest
from fake_engine import FakeEngine

from ctxprobe.runners.daemon_threads import daemon_map
from ctxprobe.runners.http_json import EndpointCalls
from ctxprobe.runners.retry import CallFailed, RetryPolicy
from ctxprobe.tasks.errors import UserError
from tests.in_flight import InFlight

QUICK = RetryPolicy(timeout_s=2.0, max_retries=3, backoff_base_s=0.01, backoff_max_s=0.05)


def test_backoff_doubles_within_its_cap_with_jitter_and_honours_retry_after() -> None:
    policy = RetryPolicy(backoff_base_s=1.0, backoff_max_s=6.0)
    for attempts, cap in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 6.0), (9, 6.0)]:
        waits = [policy.backoff_s(attempts, rng=random.Random(i)) for i in range(200)]
        assert cap * 0.5 <= min(waits) and max(waits) <= cap
    assert policy.backoff_s(1, retry_after_s=5.0) == 5.0 and policy.backoff_s(1, retry_after_s=60.0) == 6.0


def test_a_transient_5xx_is_retried_then_answered() -> None:
    with FakeEngine("vllm", tokenize_fail_every=2) as engine:  # the 2nd call answers 503, the 3rd 200
        calls = EndpointCalls(engine.url, policy=QUICK)
        assert calls.post("/tokenize", {"prompt": "a b", "add_special_tokens": False})["count"] == 2
        assert calls.post("/tokenize", {"prompt": "a b c", "add_special_tokens": False})["count"] == 3
        assert engine.tokenize_calls == 3


def test_a_lasting_5xx_fails_after_the_retries_as_a_call_failure() -> None:
    with FakeEngine("vllm", tokenize_fail_after=0) as engine:
        with pytest.raises(CallFailed) as failed:
            EndpointCalls(engine.url, policy=QUICK).post("/tokenize", {"prompt": "a"})
        assert engine.tokenize_calls == 4  # one try and three retries
    assert failed.value.status == 503 and failed.value.attempts == 4 and "HTTP 503" in str(failed.value)
    assert isinstance(failed.value, UserError)  # before anything is sent, it is bad input (exit 2)


def test_a_frozen_server_costs_one_timeout_and_is_not_retried() -> None:
    with FakeEngine("vllm") as engine:
        engine.freeze()
        started = time.monotonic()
        with pytest.raises(CallFailed, match="did not answer"):
            EndpointCalls(engine.url, policy=RetryPolicy(timeout_s=0.5, max_retries=4)).get("/v1/models")
        took = time.monotonic() - started
        engine.thaw()
    assert 0.5 <= took < 1.5, took


def test_a_refused_key_is_final() -> None:
    with FakeEngine("vllm", api_key="k") as engine:
        with pytest.raises(CallFailed, match="refused the API key") as failed:
            EndpointCalls(engine.url, policy=QUICK).get("/v1/models")
        assert len(engine.requests) == 1 and failed.value.key_refused


def test_daemon_map_keeps_order_and_bounds_the_calls_in_flight() -> None:
    flight = InFlight()

    def slow(x: int) -> int:
        with flight:
            time.sleep(0.01)
        return x * x

    assert daemon_map(slow, list(range(40)), 5) == [x * x for x in range(40)]
    assert flight.peak == 5


def test_daemon_map_stops_at_the_first_failure() -> None:
    started: list[int] = []

    def fail_at_3(x: int) -> int:
        started.append(x)
        if x == 3:
            raise CallFailed("boom")
        time.sleep(0.005)
        return x

    with pytest.raises(CallFailed, match="boom"):
        daemon_map(fail_at_3, list(range(1000)), 4)
    assert len(started) < 20  # the items after the failure are never started
    assert all(t.daemon for t in threading.enumerate() if t.name == "ctxprobe-call")
