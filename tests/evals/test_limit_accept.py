"""The accepted-length search against scripted endpoints (no HTTP): how many requests, which bound."""

from __future__ import annotations

import asyncio

from ctxprobe.evals.limit.accept import AcceptedResult, Probe, find_accepted


def scripted(limit: int, *, states_limit: bool, counts_answer: bool, land: int = 3):
    """An endpoint that rejects prompts over `limit` (or prompt + answer over it when `counts_answer`);
    prompts land `land` tokens below the asked length, as the builder's do."""
    sent: list[int] = []

    async def try_length(n: int, max_tokens: int = 64) -> Probe:
        planned = n - land
        sent.append(planned)
        over = planned + (max_tokens if counts_answer else 0) > limit
        if over:
            return Probe(planned, "too_long", stated_limit=limit if states_limit else None, detail="too long")
        return Probe(planned, "accepted", prompt_tokens=planned)

    return try_length, sent


def run(try_length, **kw) -> AcceptedResult:  # type: ignore[no-untyped-def]
    return asyncio.run(find_accepted(try_length, max_tokens=64, **kw))


def test_known_configured_length_takes_two_requests() -> None:
    try_length, sent = scripted(4096, states_limit=True, counts_answer=True)
    result = run(try_length, start=1024, max_length=5120, configured=4096)
    assert result.requests == 2 and len(sent) == 2
    assert 4096 - 64 - 32 <= result.accepted_tokens <= 4096 - 64
    assert result.rejected_tokens == 5117 and result.stated_limit == 4096


def test_unknown_length_grows_then_jumps_to_the_stated_limit() -> None:
    try_length, sent = scripted(8192, states_limit=True, counts_answer=False)
    result = run(try_length, start=1024, max_length=1 << 21)
    assert result.accepted_tokens == 8192 - 64  # the engine took longer prompts; room is arithmetic
    assert result.requests <= 6, sent


def test_silent_limit_is_bisected_within_one_percent() -> None:
    try_length, _sent = scripted(100_000, states_limit=False, counts_answer=True)
    result = run(try_length, start=4096, max_length=1 << 21)
    assert result.rejected_tokens is not None and result.largest_taken is not None
    assert result.rejected_tokens - result.largest_taken <= max(500, result.rejected_tokens // 100)
    assert 99_000 - 64 <= result.accepted_tokens <= 100_000 - 64
    assert result.requests <= 20


def test_other_errors_stop_the_search_and_are_reported() -> None:
    async def failing(n: int) -> Probe:
        return Probe(n, "error", detail="timeout: prefill took too long") if n > 4096 else Probe(n, "accepted", n)

    result = run(failing, start=4096, max_length=1 << 20)
    assert result.stopped_by_error == "timeout: prefill took too long"
    assert result.accepted_tokens == 4096 and result.rejected_tokens is None


def test_never_rejected_stops_at_the_ceiling() -> None:
    try_length, sent = scripted(1 << 30, states_limit=False, counts_answer=False)
    result = run(try_length, start=1000, max_length=16_000)
    assert max(sent) == 16_000 - 3 and result.rejected_tokens is None
    assert "nothing longer" in result.basis


def test_a_padded_limit_with_server_errors_below_it_narrows_the_search() -> None:
    """llama-cpp-python pads n_ctx 3000 to a stated 3072, then answers 500 between 3000 and 3072: the 5xx
    is an upper bound, the search goes on below it, and the stated/configured mismatch is said."""

    async def try_length(n: int) -> Probe:
        planned = n - 5
        if planned > 3072:
            return Probe(planned, "too_long", stated_limit=3072, detail="too long")
        if planned + 64 > 3000:
            return Probe(planned, "failed", detail="HTTP 500 from http://x: llama_decode returned -3")
        return Probe(planned, "accepted", prompt_tokens=planned)

    result = asyncio.run(find_accepted(try_length, start=1024, max_length=8192, max_tokens=64, configured=3000))
    assert result.stopped_by_error is None
    assert result.accepted_tokens is not None and 3000 - 64 - 32 <= result.accepted_tokens <= 3000 - 64
    assert result.stated_limit == 3072
    assert "states 3,072 tokens but was configured with 3,000" in result.basis
    assert any(p["outcome"] == "failed" for p in result.probes)


def test_taken_and_rejected_are_stated_in_one_count() -> None:
    """A counter that is not the served model's: the server counts 3 % more than planned. The largest
    prompt taken and the shortest rejected are both ctxprobe's planned counts (taken < rejected always),
    each with the server's own count beside it."""
    from ctxprobe.evals.limit.report import _served

    async def try_length(n: int) -> Probe:
        planned, served = n - 3, (n - 3) * 103 // 100
        if served > 8192:
            return Probe(planned, "too_long", prompt_tokens=served, detail="too long")
        return Probe(planned, "accepted", prompt_tokens=served)

    result = run(try_length, start=1024, max_length=1 << 16)
    assert result.largest_taken is not None and result.rejected_tokens is not None
    assert result.largest_taken < result.rejected_tokens
    assert result.largest_taken_served == result.largest_taken * 103 // 100 > 8192 * 0.99
    assert result.rejected_served == result.rejected_tokens * 103 // 100 > 8192
    assert result.accepted_tokens == result.largest_taken
    assert _served(100, 103) == " (the server counted 103)" and _served(100, 100) == ""


def test_a_stated_lower_bound_is_kept_apart_from_the_servers_count() -> None:
    """vLLM 0.32 says "at least limit + 1 input tokens": a bound of the rejected prompt's size, not its size."""

    async def vllm_032(n: int) -> Probe:
        if n > 2048:
            return Probe(n, "too_long", prompt_at_least=2049, stated_limit=2048, detail="at least 2049")
        return Probe(n, "accepted", prompt_tokens=n)

    result = run(vllm_032, start=1024, max_length=2560, configured=2048)
    assert result.accepted_tokens == 2048 - 64 and result.rejected_tokens == 2560
    assert result.rejected_served is None and result.rejected_served_at_least == 2049
