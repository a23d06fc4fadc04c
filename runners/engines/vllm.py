"""vLLM (docs/ENGINES.md): `/v1/models` owned_by `vllm` with `max_model_len`, `GET /version`,
`POST /tokenize` (also applies the chat template to `messages`), the BadRequestError too-long body, and
Prometheus metrics always on."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ctxprobe.runners.engines.base import Call, Calls, EngineAdapter, dig, positive_int, register, with_model


@register
class VLLM(EngineAdapter):
    name = "vllm"
    owned_by = "vllm"
    probe_rank = 40
    cached_tokens_advice = "start vLLM with --enable-prompt-tokens-details"
    metrics_advice = "vLLM always serves /metrics"
    count_field = "count"
    context_source = "GET /v1/models max_model_len"
    metrics = {
        "prefix_cache_queries": "vllm:prefix_cache_queries_total",
        "prefix_cache_hits": "vllm:prefix_cache_hits_total",
        "cached_prompt_tokens": "vllm:prompt_tokens_cached_total",
        "ttft_seconds_sum": "vllm:time_to_first_token_seconds_sum",
        "ttft_seconds_count": "vllm:time_to_first_token_seconds_count",
        "spec_accepted_tokens": "vllm:spec_decode_num_accepted_tokens_total",
        "spec_draft_tokens": "vllm:spec_decode_num_draft_tokens_total",
        "kv_cache_usage": "vllm:kv_cache_usage_perc",
    }
    # "... maximum context length is N tokens. However, your prompt contains M input tokens. ..."
    too_long_marker = re.compile(r"maximum context length", re.IGNORECASE)
    too_long_limit = (re.compile(r"maximum context length (?:is|of) (\d+)", re.IGNORECASE),)
    too_long_prompt = (re.compile(r"your prompt contains (\d+) input tokens", re.IGNORECASE),)

    def identify(self, calls: Calls) -> Mapping[str, Any] | None:
        body = calls.get("/version")
        return body if dig(body, "version") is not None else None

    def context_length(self, card: Mapping[str, Any], ident: Mapping[str, Any]) -> int | None:
        return positive_int(card.get("max_model_len"))

    def tokenize_call(self, text: str, *, special: bool, model: str | None) -> Call:
        return Call("/tokenize", with_model({"prompt": text, "add_special_tokens": special}, model))

    def chat_call(self, messages: list[dict[str, str]], model: str | None) -> Call | None:
        return Call("/tokenize", with_model({"messages": messages, "add_generation_prompt": True}, model))
