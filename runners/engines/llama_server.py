"""llama-server, llama.cpp's own C++ server (also the embedded engine, from the xllamacpp wheel), per
docs/ENGINES.md and the bodies captured in tests/runners/fixtures/: `/v1/models` owned_by `llamacpp`;
`GET /props` with the per-slot context `default_generation_settings.n_ctx`, `total_slots` and
`build_info`; `POST /tokenize` (no template) and `POST /v1/chat/completions/input_tokens` (template
applied); the `exceed_context_size_error` 400 (also when streaming); `llamacpp:` metrics with `--metrics`."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ctxprobe.runners.answer_logprobs import Unmeasurable
from ctxprobe.runners.engines.base import (
    Call,
    Calls,
    EngineAdapter,
    Stated,
    TooLong,
    dig,
    positive_int,
    register,
    with_model,
)

BATCH_SEPARATOR = -1  # a token id no text tokenizes to, put after each text of a batched count


@register
class LlamaServer(EngineAdapter):
    name = "llama-server"
    owned_by = "llamacpp"
    probe_rank = 10
    cached_tokens_advice = "llama-server always reports them (usage.prompt_tokens_details, timings.cache_n)"
    metrics_advice = "start llama-server with --metrics"
    reuse_causes = (
        "sliding-window layers keeping only their window (the default SWA cache), so a prefix is reused only up "
        "to a checkpoint: start it with --swa-full (ctxprobe's --swa-cache full), or with more and closer "
        "checkpoints (--ctx-checkpoints N, --checkpoint-min-step N; defaults 32 and 8192)",
        "prompt caching off (--no-cache-prompt, or cache_prompt false in a request)",
        "several slots, a request landing on one that does not hold its prefix (--parallel 1 per lane, "
        "--slot-prompt-similarity; --cache-ram keeps idle slots' prompts)",
    )
    computed_metric = "prompt_tokens"  # llamacpp:prompt_tokens_total counts the tokens it computed
    context_source = "GET /props default_generation_settings.n_ctx (per slot)"
    reasoning_budget_field = "thinking_budget_tokens"
    metrics: ClassVar[Mapping[str, str]] = {
        "prompt_tokens": "llamacpp:prompt_tokens_total",
        "cached_prompt_tokens": "llamacpp:prompt_tokens_cached_total",
        "prompt_seconds": "llamacpp:prompt_seconds_total",
        "predicted_tokens": "llamacpp:tokens_predicted_total",
        "requests_processing": "llamacpp:requests_processing",
        "requests_deferred": "llamacpp:requests_deferred",
    }
    # {"error": {"message": "request (M tokens) exceeds the available context size (N tokens), ...",
    #            "type": "exceed_context_size_error", "n_prompt_tokens": M, "n_ctx": N}}
    forced_logprobs = True  # ids in `logprobs.content`, token-id prompts, logit_bias with raw logprobs
    too_long_marker = re.compile(r"exceed_context_size_error|exceeds the available context size", re.IGNORECASE)
    too_long_limit = (re.compile(r"available context size \((\d+) tokens?\)", re.IGNORECASE),)
    too_long_prompt = (re.compile(r"request \((\d+) tokens?\) exceeds", re.IGNORECASE),)

    cold_path = "cache_prompt: false"  # the slot's cached prompt is not reused: the whole prompt is prefilled

    def cold_prefill(self) -> dict[str, Any] | None:
        return {"cache_prompt": False}

    def identify(self, calls: Calls) -> Mapping[str, Any] | None:
        body = calls.get("/props")
        return body if dig(body, "default_generation_settings") is not None else None

    def context_length(self, card: Mapping[str, Any], ident: Mapping[str, Any]) -> int | None:
        return positive_int(dig(ident, "default_generation_settings", "n_ctx"))

    def version(self, ident: Mapping[str, Any]) -> str | None:
        value = dig(ident, "build_info")
        return str(value) if value is not None else None

    def slots(self, ident: Mapping[str, Any]) -> int | None:
        return positive_int(dig(ident, "total_slots"))

    def deployment_facts(self, card: Mapping[str, Any], ident: Mapping[str, Any]) -> dict[str, Stated[Any]]:
        """Also the trained context its GGUF states (`/v1/models` `meta.n_ctx_train`) and the model file
        (`/props` `model_path`). Context shift is not stated: neither `/props` nor `/slots` says it
        (xllamacpp 2026.10.11549)."""
        facts = super().deployment_facts(card, ident)
        if "slots" in facts:
            facts["slots"] = Stated(facts["slots"].value, "GET /props total_slots")
        trained = positive_int(dig(card, "meta", "n_ctx_train"))
        if trained is not None:
            facts["trained_context"] = Stated(trained, "GET /v1/models meta.n_ctx_train")
        path = dig(ident, "model_path")
        if isinstance(path, str) and path:
            facts["model_path"] = Stated(path, "GET /props model_path")
        return facts

    def tokenize_call(self, text: str, *, special: bool, model: str | None) -> Call:
        return Call("/tokenize", {"content": text, "add_special": special})

    def batch_count_call(self, texts: Sequence[str], *, model: str | None) -> Call:
        """`content` as a list: llama-server tokenizes each string apart and passes numbers through as token
        ids, so each text is followed by the id -1, which no text tokenizes to, and the answer splits there."""
        content: list[str | int] = []
        for text in texts:
            content += [text, BATCH_SEPARATOR]
        return Call("/tokenize", {"content": content, "add_special": False})

    def read_batch_counts(self, body: Mapping[str, Any], n: int) -> list[int] | None:
        tokens = self.read_tokens(body)
        if tokens is None or tokens.count(BATCH_SEPARATOR) != n or (tokens and tokens[-1] != BATCH_SEPARATOR):
            return None
        counts, last = [], -1
        for at, token in enumerate(tokens):
            if token == BATCH_SEPARATOR:
                counts.append(at - last - 1)
                last = at
        return counts

    def answer_tokens(
        self, calls: Calls, *, prompt: str, gold: str, messages: list[dict[str, str]] | None, model: str | None
    ) -> tuple[list[int], list[int]]:
        """Chat: `POST /apply-template` gives the conversation as the server renders it (generation prompt
        included), tokenized as the server tokenizes a chat prompt (with its special tokens)."""
        if messages is None:
            return super().answer_tokens(calls, prompt=prompt, gold=gold, messages=None, model=model)
        body = calls.post("/apply-template", with_model({"messages": messages}, model))
        rendered = dig(body, "prompt")
        if not isinstance(rendered, str):
            raise Unmeasurable("llama-server: /apply-template gave no prompt")
        return self.text_tokens(calls, rendered, model), self.text_tokens(calls, rendered + gold, model)

    def chat_call(self, messages: list[dict[str, str]], model: str | None) -> Call | None:
        return Call("/v1/chat/completions/input_tokens", with_model({"messages": messages}, model))

    def read_chat_count(self, body: Mapping[str, Any]) -> int | None:
        return positive_int(body.get("input_tokens"))

    def parse_too_long(self, body: object, text: str, message: str) -> TooLong | None:
        found = super().parse_too_long(body, text, message)
        if found is None:
            return None
        inner = dig(body, "error") if isinstance(dig(body, "error"), Mapping) else body
        limit = found.limit if found.limit is not None else positive_int(dig(inner, "n_ctx"))
        prompt = found.prompt_tokens if found.prompt_tokens is not None else positive_int(dig(inner, "n_prompt_tokens"))
        return TooLong(limit=limit, prompt_tokens=prompt, message=message)
