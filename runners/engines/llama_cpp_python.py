"""llama-cpp-python's server, recognised as a remote engine (docs/ENGINES.md): `/v1/models` owned_by
`me`, no version and no context length stated (a caller that knows them passes them to the probe),
`POST /extras/tokenize` and `/extras/tokenize/count` (always with BOS, no template), the OpenAI-style
`context_length_exceeded` body, and no metrics."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ctxprobe.runners.engines.base import Call, Calls, EngineAdapter, dig, register


@register
class LlamaCppPython(EngineAdapter):
    name = "llama-cpp-python"
    owned_by = "me"
    probe_rank = 30
    cached_tokens_advice = "llama-cpp-python never reports them"
    metrics_advice = "llama-cpp-python has no /metrics"
    reuse_causes = ("only the last prompt kept in its one context (a prompt cache, --cache true, keeps more)",)
    adds_bos_always = True
    count_field = "count"
    # "This model's maximum context length is N tokens. However, you requested T tokens (P in the messages,
    # C in the completion)..." (`P in your prompt` for completions), code `context_length_exceeded`
    too_long_marker = re.compile(r"context_length_exceeded|you requested \d+ tokens", re.IGNORECASE)
    too_long_limit = (re.compile(r"maximum context length (?:is|of) (\d+)", re.IGNORECASE),)
    too_long_prompt = (re.compile(r"\((\d+) in (?:the messages|your prompt)", re.IGNORECASE),)

    def identify(self, calls: Calls) -> Mapping[str, Any] | None:
        body = calls.post("/extras/tokenize/count", {"input": ""})
        return body if dig(body, "count") is not None else None

    def version(self, ident: Mapping[str, Any]) -> str | None:
        return None

    def tokenize_call(self, text: str, *, special: bool, model: str | None) -> Call:
        return Call("/extras/tokenize", {"input": text})

    def count_call(self, text: str, *, special: bool, model: str | None) -> Call:
        return Call("/extras/tokenize/count", {"input": text})
