"""The default deadline follows the measured prefill rate: the prompt at a quarter of the rate plus the base,
never below `--timeout` + `--timeout-per-1k` per 1K tokens; a timed-out sample names the flag to raise; the
progress line shows the request out longest."""

from __future__ import annotations

import asyncio

import pytest
from fake_engine import FakeEngine, Reply

from ctxprobe.evals.run.send.loop import TICK_S, Progress
from ctxprobe.runners.endpoint import EndpointClient, EndpointError
from ctxprobe.runners.endpoint_config import MIN_MEASURED_TOKENS, PREFILL_SHARE, EndpointConfig, PrefillRate
from ctxprobe.runners.response import ErrorKind


def test_a_measured_rate_only_lengthens_the_formula() -> None:
    config = EndpointConfig(base_urls=("http://127.0.0.1:1",), timeout=100, timeout_per_1k=2)
    tokens = 32_000
    formula = 100 + 2 * 32
    assert config.request_timeout_s(tokens) == formula
    assert config.request_timeout_s(tokens, prefill_rate=10_000.0) == formula  # a fast server: the formula
    slow = 50.0  # tokens/s: a busy CPU
    assert config.request_timeout_s(tokens, prefill_rate=slow) == 100 + tokens / (PREFILL_SHARE * slow)
    given = EndpointConfig(base_urls=("http://127.0.0.1:1",), timeout=100, timeout_per_1k=2, prefill_rate=slow)
    assert given.request_timeout_s(tokens) == 100 + tokens / (PREFILL_SHARE * slow)  # --prefill-rate before any


def test_the_rate_is_uncached_tokens_over_the_time_to_the_first_token() -> None:
    rate = PrefillRate()
    assert rate.per_s is None
    rate.observe(100, 0, 0.01)  # too short to measure a rate
    assert rate.per_s is None
    rate.observe(4000, 1000, 2.0)
    rate.observe(2000, 0, 2.0)
    assert rate.per_s == (3000 + 2000) / 4.0
    assert PrefillRate(given=123.0).per_s == 123.0
    assert MIN_MEASURED_TOKENS > 100


def test_a_timeout_names_the_flag_and_the_client_shows_the_request_out_longest() -> None:
    async def go() -> tuple[str, str, tuple[float, float | None] | None]:
        with FakeEngine("vllm") as engine:
            engine.script.extend([Reply(delay_s=1.5), Reply(delay_s=1.5)])
            config = EndpointConfig(
                base_urls=(engine.url,),
                timeout=0.2,  # deadlines of 0.21 s and 0.6 s, both under the replies' 1.5 s
                timeout_per_1k=0.1,
                retries=0,
                mode="completions",
                model="fake-model",
            )
            async with EndpointClient(config) as client:
                client.prefill.observe(100_000, 0, 1.0)  # 100K tok/s measured: the formula decides
                seen: list[tuple[float, float | None] | None] = []

                async def watch() -> None:
                    await asyncio.sleep(0.3)
                    seen.append(client.longest_in_flight())

                details = []
                for planned in (100, 4000):  # base share larger; per-1K share larger
                    watcher = asyncio.ensure_future(watch())
                    try:
                        await client.send("x " * 10, max_tokens=4, planned_tokens=planned, seed=0)
                    except EndpointError as err:
                        assert err.kind is ErrorKind.timeout
                        details.append(err.detail)
                    await watcher
                return details[0], details[1], seen[1]

    short, long, longest = asyncio.run(go())
    assert "raise --timeout to wait longer" in short
    assert "raise --timeout-per-1k to wait longer" in long
    assert longest is not None and 0.2 < longest[0] < 1.5 and longest[1] == 4000 / 100_000


def test_the_progress_line_shows_a_prefill_in_flight() -> None:
    progress = Progress(total=3)
    progress.longest = lambda: (TICK_S + 402.0, 900.0)
    assert progress.line().endswith("prefill 412s of ~900s")
    progress.longest = lambda: (TICK_S + 2.0, None)  # no rate measured yet
    assert progress.line().endswith("prefill 12s")
    progress.longest = lambda: (1.0, 900.0)  # a request just sent: nothing to say
    assert "prefill" not in progress.line()


def test_the_eta_counts_the_prompt_tokens_left_at_the_rate_measured() -> None:
    """Two 1K samples done in 10 s, a 32K one left: the prompt tokens say 160 s, not the 5 s a count of samples
    left would (the quick suite's first ETA said 359 s of a 674 s run)."""
    from ctxprobe.evals.run.send.loop import planned_tokens
    from ctxprobe.tasks.sample import Recipe

    recipes = [Recipe(family="niah", context_tokens=n, depth=50.0) for n in (1024, 1024, 32768)]
    progress = Progress(total=3, total_tokens=planned_tokens(recipes))
    progress.done, progress.done_tokens = 2, 2048
    assert progress.eta(10.0) == pytest.approx(32768 / (2048 / 10.0))
    assert Progress(total=3, done=2).eta(10.0) == pytest.approx(5.0)  # lengths unknown: samples left
