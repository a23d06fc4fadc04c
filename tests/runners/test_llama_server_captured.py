"""The runners read llama-server's real bodies right: each captured from the embedded engine
(tests/runners/fixtures/llama_server/, by capture_llama_server.py) and replayed by a server that answers
each call with its captured body."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from replay_server import Replay, replaying
from replay_server import captured as replayed

from ctxprobe.evals.run.send.loop import answer_error
from ctxprobe.runners.probe import probe_engine
from ctxprobe.runners.reply import ReplyParts
from ctxprobe.runners.response import ErrorKind, Response
from ctxprobe.runners.server_tokenizer import ServerTokenizer, server_token_counter
from ctxprobe.runners.too_long import parse_too_long

CAPTURED = Path(__file__).parent / "fixtures" / "llama_server"


def captured(name: str) -> dict[str, Any]:
    return replayed(CAPTURED, name)


@pytest.fixture(scope="module")
def replay() -> Iterator[Replay]:
    with replaying(CAPTURED) as server:
        yield server


def test_probe_reads_engine_slot_context_and_slots(replay: Replay) -> None:
    info = probe_engine(replay.url)
    props = captured("props")["body"]
    assert (info.engine, info.model) == ("llama-server", "gemma-3-270m")
    assert info.context_length == props["default_generation_settings"]["n_ctx"] == 2048  # per slot
    assert info.slots == props["total_slots"] == 2 and info.default_concurrency == 2
    assert info.version == "b0-unknown"  # why the launcher passes xllamacpp's version instead


def test_tokenizer_counts_text_and_one_bos(replay: Replay) -> None:
    tok = server_token_counter(replay.url)
    assert isinstance(tok, ServerTokenizer) and tok.engine == "llama-server"
    assert tok.bos_tokens == 1
    assert tok.token_ids("The capital of France is") == captured("tokenize")["body"]["tokens"]
    assert tok.chat_overhead("Hello.") == captured("chat_input_tokens")["body"]["input_tokens"] - tok.count("Hello.")


def test_a_batched_count_splits_at_the_separator_as_single_calls_count(replay: Replay) -> None:
    tok = server_token_counter(replay.url)
    assert tok.counts_batches  # its check: the batch of BATCH_PROBE against each text's own call
    singles = [len(captured(name)["body"]["tokens"]) for name in ("tokenize", "tokenize_hello", "tokenize_empty")]
    assert tok.count_many(["The capital of France is", "Hello.", ""]) == singles == [5, 2, 0]
    assert tok.adapter.read_batch_counts(captured("tokenize_batch")["body"], 4) is None  # not its 3 texts


def test_too_long_body_states_limit_and_prompt() -> None:
    found = parse_too_long(captured("too_long")["body"])
    assert found is not None and (found.limit, found.prompt_tokens) == (2048, 4003)


def test_last_stream_chunk_carries_usage_and_cached_tokens() -> None:
    parts = ReplyParts()
    assert parts.add_chunk(captured("stream_last_chunk")["body"]) is False  # no text: it is the closing chunk
    usage = captured("stream_last_chunk")["body"]["usage"]
    assert (parts.prompt_tokens, parts.completion_tokens) == (usage["prompt_tokens"], usage["completion_tokens"])
    assert parts.cached_tokens == usage["prompt_tokens_details"]["cached_tokens"]
    assert parts.finish_reason == "length"


def test_a_clamped_answer_is_no_answer_room() -> None:
    body = captured("clamped")["body"]
    parts = ReplyParts()
    parts.add_whole(body)
    text, _ = parts.answer_and_reasoning()
    response = Response(
        endpoint="x",
        text=text,
        finish_reason=parts.finish_reason,
        prompt_tokens=parts.prompt_tokens,
        completion_tokens=parts.completion_tokens,
        latency_s=1.0,
    )
    kind, detail = answer_error(response, max_tokens=captured("clamped")["request"]["body"]["max_tokens"])
    assert kind is ErrorKind.no_answer_room and "after 16 of 64" in (detail or "")


@pytest.mark.parametrize(
    ("name", "streamed"), [("stream_last_chunk", True), ("clamped", False), ("logprobs/chat", False)]
)
def test_a_reply_carries_the_engines_own_count_of_its_prompt(name: str, streamed: bool) -> None:
    """llama-server's `timings` beside its usage: cache_n served from the cache, prompt_n computed; on the real
    engine they add up to the usage's prompt tokens and cache_n is its cached tokens (evals/run/reuse.py)."""
    from ctxprobe.evals.run.reuse import timings_disagreement

    body = captured(name)["body"]
    parts = ReplyParts()
    parts.add_chunk(body) if streamed else parts.add_whole(body)
    assert parts.timings is not None
    assert (parts.timings.cache_n, parts.timings.prompt_n) == (body["timings"]["cache_n"], body["timings"]["prompt_n"])
    assert parts.timings.cache_n + parts.timings.prompt_n == body["usage"]["prompt_tokens"] == parts.prompt_tokens
    response = Response(
        endpoint="x",
        text="",
        prompt_tokens=parts.prompt_tokens,
        cached_tokens=parts.cached_tokens,
        timings=parts.timings,
    )
    assert timings_disagreement(response) is None
