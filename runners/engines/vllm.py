"""vLLM (docs/ENGINES.md): `/v1/models` owned_by `vllm` with `max_model_len`, `GET /version`,
`POST /tokenize` (also applies the chat template to `messages`), the BadRequestError too-long bodies, and
Prometheus metrics always on.

Two 400s mean "too long" (both read off a real vLLM 0.32 server, tests/runners/fixtures/vllm/): a prompt over
`max_model_len` ("maximum context length is N tokens. However, your prompt contains at least N+1 input
tokens": only a lower bound of its size; older and newer releases state the count without "at least"), and a
prompt of exactly `max_model_len` tokens, which leaves no answer room ("max_tokens must be at least 1, got
0", no limit stated)."""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from typing import Any, ClassVar

from ctxprobe.runners.engines.base import (
    Call,
    Calls,
    EngineAdapter,
    Stated,
    TooLong,
    dig,
    metric_labels,
    positive_int,
    register,
    with_model,
)


@register
class VLLM(EngineAdapter):
    name = "vllm"
    owned_by = "vllm"
    probe_rank = 40
    checks_model_name = True  # 404 "The model `x` does not exist. Valid aliases: ..."
    cached_tokens_advice = "start vLLM with --enable-prompt-tokens-details"
    metrics_advice = "vLLM always serves /metrics"
    reuse_causes = (
        "prefix caching off (--no-enable-prefix-caching)",
        "a hybrid model (Mamba, linear-attention layers) resuming a hit only at a block boundary (hundreds of "
        "tokens): start it with --enable-mamba-shared-prefix-checkpoint and a --prefix-match-unit, and keep "
        "snapshots dense (VLLM_PREFIX_CACHE_RETENTION_INTERVAL)",
        "whole blocks only (--block-size): a shared prefix is reused rounded down to a block",
        "eviction under memory pressure (kv_cache_usage near 1 in /metrics: --gpu-memory-utilization, fewer lanes)",
    )
    count_field = "count"
    context_source = "GET /v1/models max_model_len"
    reasoning_budget_field = "thinking_token_budget"
    metrics: ClassVar[Mapping[str, str]] = {
        "prefix_cache_queries": "vllm:prefix_cache_queries_total",
        "prefix_cache_hits": "vllm:prefix_cache_hits_total",
        "cached_prompt_tokens": "vllm:prompt_tokens_cached_total",
        "ttft_seconds_sum": "vllm:time_to_first_token_seconds_sum",
        "ttft_seconds_count": "vllm:time_to_first_token_seconds_count",
        "spec_accepted_tokens": "vllm:spec_decode_num_accepted_tokens_total",
        "spec_draft_tokens": "vllm:spec_decode_num_draft_tokens_total",
        "kv_cache_usage": "vllm:kv_cache_usage_perc",
    }
    forced_logprobs = True  # token-id prompts, logit_bias; raw logprobs in its default --logprobs-mode
    logprob_body: ClassVar[Mapping[str, Any]] = {"return_tokens_as_token_ids": True}  # tokens as `token_id:N`
    # "... maximum context length is N tokens. However, your prompt contains [at least] M input tokens. ..."
    too_long_marker = re.compile(r"maximum context length", re.IGNORECASE)
    too_long_limit = (re.compile(r"maximum context length (?:is|of) (\d+)", re.IGNORECASE),)
    too_long_prompt = (re.compile(r"your prompt contains (\d+) input tokens", re.IGNORECASE),)
    too_long_prompt_at_least = (re.compile(r"your prompt contains at least (\d+) input tokens", re.IGNORECASE),)
    # the prompt fills max_model_len: the answer room left, max_tokens, clamped to 0
    no_answer_room = re.compile(r"max_tokens must be at least 1, got 0\b", re.IGNORECASE)

    def parse_too_long(self, body: object, text: str, message: str) -> TooLong | None:
        found = super().parse_too_long(body, text, message)
        if found is None and self.no_answer_room.search(text):
            return TooLong(
                limit=None, prompt_tokens=None, message=f"the prompt leaves no room for an answer: {message}"
            )
        return found

    # a request's `cache_salt` is mixed into the hash of its first block: a salt no earlier request had finds
    # nothing cached (vLLM >= 0.9, completions and chat); one fresh salt per cold request
    cold_path = "cache_salt (a fresh salt per request)"

    def cold_prefill(self) -> dict[str, Any] | None:
        return {"cache_salt": secrets.token_hex(16)}

    states_reuse_block = True

    def reuse_block(self, metrics_text: str) -> int | None:
        """`vllm:cache_config_info`'s `cache_hit_alignment_tokens` where set (a hybrid model's hits align to
        it), else its `block_size`: the prefix cache holds whole blocks."""
        labels = metric_labels(metrics_text, "vllm:cache_config_info")
        for name in ("cache_hit_alignment_tokens", "block_size"):
            value = labels.get(name, "")
            if value.isdigit() and int(value) > 1:
                return int(value)
        return None

    def identify(self, calls: Calls) -> Mapping[str, Any] | None:
        body = calls.get("/version")
        return body if dig(body, "version") is not None else None

    def context_length(self, card: Mapping[str, Any], ident: Mapping[str, Any]) -> int | None:
        return positive_int(card.get("max_model_len"))

    def deployment_facts(self, card: Mapping[str, Any], ident: Mapping[str, Any]) -> dict[str, Stated[Any]]:
        """Also the model folder or name it serves (`/v1/models` `root`)."""
        facts = super().deployment_facts(card, ident)
        root = card.get("root")
        if isinstance(root, str) and root:
            facts["model_path"] = Stated(root, "GET /v1/models root")
        return facts

    def tokenize_call(self, text: str, *, special: bool, model: str | None) -> Call:
        return Call("/tokenize", with_model({"prompt": text, "add_special_tokens": special}, model))

    def answer_tokens(
        self, calls: Calls, *, prompt: str, gold: str, messages: list[dict[str, str]] | None, model: str | None
    ) -> tuple[list[int], list[int]]:
        """Chat: `/tokenize` applies the template, with the generation prompt, and with the gold as the
        assistant's unfinished message (`continue_final_message`)."""
        if messages is None:
            return super().answer_tokens(calls, prompt=prompt, gold=gold, messages=None, model=model)
        answered = [*messages, {"role": "assistant", "content": gold}]
        return (
            self._ids(
                calls, Call("/tokenize", with_model({"messages": messages, "add_generation_prompt": True}, model))
            ),
            self._ids(
                calls,
                Call(
                    "/tokenize",
                    with_model(
                        {"messages": answered, "add_generation_prompt": False, "continue_final_message": True}, model
                    ),
                ),
            ),
        )

    def chat_call(self, messages: list[dict[str, str]], model: str | None) -> Call | None:
        return Call("/tokenize", with_model({"messages": messages, "add_generation_prompt": True}, model))
