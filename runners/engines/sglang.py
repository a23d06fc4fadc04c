"""SGLang (docs/ENGINES.md): `/v1/models` owned_by `sglang` with `max_model_len`, `GET /server_info`
(version), `POST /v1/tokenize` (also applies the chat template to `messages`), a flat error body for
too-long prompts in two wordings, and Prometheus metrics with `--enable-metrics`."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ctxprobe.runners.engines.base import Call, Calls, EngineAdapter, Stated, dig, positive_int, register, with_model


@register
class SGLang(EngineAdapter):
    name = "sglang"
    owned_by = "sglang"
    probe_rank = 20
    checks_model_name = True
    cached_tokens_advice = "start SGLang with --enable-cache-report"
    metrics_advice = "start SGLang with --enable-metrics"
    reuse_causes = (
        "the radix cache off (--disable-radix-cache)",
        "eviction under memory pressure (--mem-fraction-static, fewer lanes)",
    )
    count_field = "count"
    context_source = "GET /v1/models max_model_len"
    reasoning_budget_field = "thinking_budget"
    metrics: ClassVar[Mapping[str, str]] = {
        "cached_prompt_tokens": "sglang:cached_tokens_total",
        "prompt_tokens": "sglang:prompt_tokens_total",
        "cache_hit_rate": "sglang:cache_hit_rate",
        "spec_accept_rate": "sglang:spec_accept_rate",
    }
    # "The input (M tokens) is longer than the model's context length (N tokens)." or
    # "Requested token count exceeds the model's maximum context length of N tokens. ..."
    too_long_marker = re.compile(
        r"longer than the model's context length|exceeds the model's maximum context length", re.IGNORECASE
    )
    too_long_limit = (
        re.compile(r"longer than the model's context length \((\d+) tokens?\)", re.IGNORECASE),
        re.compile(r"maximum context length of (\d+)", re.IGNORECASE),
    )
    too_long_prompt = (re.compile(r"The input \((\d+) tokens?\)", re.IGNORECASE),)

    no_cold_path = (
        "SGLang has no per-request cold prefill; it offers POST /flush_cache, which empties the whole "
        "radix cache (for every request in flight), so ctxprobe does not use it mid-run"
    )

    def identify(self, calls: Calls) -> Mapping[str, Any] | None:
        body = calls.get("/server_info")
        return body if dig(body, "version") is not None else None

    def context_length(self, card: Mapping[str, Any], ident: Mapping[str, Any]) -> int | None:
        return positive_int(card.get("max_model_len"))  # /tokenize's max_model_len is the tokenizer's

    def deployment_facts(self, card: Mapping[str, Any], ident: Mapping[str, Any]) -> dict[str, Stated[Any]]:
        """Also from `/server_info` (its server arguments, flattened: sgl-project/sglang
        `python/sglang/srt/entrypoints/http_server.py` `server_info`): the model it loaded (`model_path`) and
        the model-config override it applies (`json_model_override_args`, a JSON text, where not `{}`)."""
        facts = super().deployment_facts(card, ident)
        path = dig(ident, "model_path")
        if isinstance(path, str) and path:
            facts["model_path"] = Stated(path, "GET /server_info model_path")
        override = dig(ident, "json_model_override_args")
        try:
            parsed = json.loads(override) if isinstance(override, str) else None
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and parsed:
            facts["config_overrides"] = Stated(parsed, "GET /server_info json_model_override_args")
        return facts

    def tokenize_call(self, text: str, *, special: bool, model: str | None) -> Call:
        return Call("/v1/tokenize", with_model({"prompt": text, "add_special_tokens": special}, model))

    def batch_count_call(self, texts: Sequence[str], *, model: str | None) -> Call:
        """`prompt` as a list of strings: SGLang answers `count` as the list of their counts."""
        return Call("/v1/tokenize", with_model({"prompt": list(texts), "add_special_tokens": False}, model))

    def read_batch_counts(self, body: Mapping[str, Any], n: int) -> list[int] | None:
        counts = body.get("count")
        if not isinstance(counts, list) or len(counts) != n:
            return None
        if not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in counts):
            return None
        return counts

    def chat_call(self, messages: list[dict[str, str]], model: str | None) -> Call | None:
        return Call("/v1/tokenize", with_model({"messages": messages, "add_generation_prompt": True}, model))
