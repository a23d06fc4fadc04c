"""Answer text, reasoning and usage read from chunks and whole bodies of each engine's shape."""

from __future__ import annotations

import pytest

from ctxprobe.runners.reply import ReplyParts, split_think


@pytest.mark.parametrize(
    ("text", "answer", "reasoning"),
    [
        ("42", "42", ""),
        ("<think>count the hops</think>The answer is 42.", "The answer is 42.", "count the hops"),
        ("<think>a</think> x <think>b</think> y", "x  y", "a\nb"),
        ("the template opened it</think>\n\n42", "42", "the template opened it"),
        ("42 <think>cut off by max_tok", "42", "cut off by max_tok"),
        ("  plain with spaces ", "  plain with spaces ", ""),
    ],
)
def test_split_think(text: str, answer: str, reasoning: str) -> None:
    assert split_think(text) == (answer, reasoning)


@pytest.mark.parametrize("name", ["reasoning", "reasoning_content"])
def test_chat_chunks_with_either_reasoning_field(name: str) -> None:
    parts = ReplyParts()
    assert parts.add_chunk({"choices": [{"delta": {"role": "assistant", "content": ""}}]}) is False
    assert parts.add_chunk({"choices": [{"delta": {name: "think "}}]}) is True
    assert parts.add_chunk({"choices": [{"delta": {"content": "42"}, "finish_reason": "stop"}]}) is True
    parts.add_chunk(
        {
            "choices": [],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": 8}},
        }
    )
    assert parts.answer_and_reasoning() == ("42", "think")
    assert (parts.prompt_tokens, parts.completion_tokens, parts.cached_tokens) == (10, 2, 8)
    assert parts.finish_reason == "stop"


def test_llama_server_timings_give_cached_tokens_when_usage_has_none() -> None:
    parts = ReplyParts()
    parts.add_whole(
        {
            "choices": [{"text": "7", "finish_reason": "length"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 1},
            "timings": {"cache_n": 3},
        }
    )
    assert parts.cached_tokens == 3
    assert parts.answer_and_reasoning() == ("7", None)


def test_whole_chat_body_with_reasoning_and_inline_think() -> None:
    parts = ReplyParts()
    parts.add_whole(
        {"choices": [{"message": {"content": "<think>b</think>42", "reasoning_content": "a"}, "finish_reason": "stop"}]}
    )
    assert parts.answer_and_reasoning() == ("42", "a\nb")
