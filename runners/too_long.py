"""Recognising an engine's "prompt too long" rejection (an HTTP 400) and the limit it states.

Matched by pattern, never by whole string (engine versions reword them). The shapes, from ENGINES.md:
- vLLM: `... maximum context length is N tokens ... your prompt contains M input tokens ...`
- SGLang: `The input (M tokens) is longer than the model's context length (N tokens).` or
  `Requested token count exceeds the model's maximum context length of N tokens. ...`
- llama-server: type `exceed_context_size_error`, `request (M tokens) exceeds the available context size
  (N tokens), ...`, fields `n_prompt_tokens`, `n_ctx`
- llama-cpp-python: code `context_length_exceeded`, `This model's maximum context length is N tokens. However,
  you requested T tokens (P in the messages, C in the completion)...` (`P in your prompt` for completions)
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

_MARKERS = re.compile(
    r"maximum context length"
    r"|longer than the model's context length"
    r"|exceed_context_size_error"
    r"|exceeds the available context size"
    r"|context_length_exceeded",
    re.IGNORECASE,
)
_LIMIT = [
    re.compile(r"maximum context length (?:is|of) (\d+)", re.IGNORECASE),
    re.compile(r"longer than the model's context length \((\d+) tokens?\)", re.IGNORECASE),
    re.compile(r"available context size \((\d+) tokens?\)", re.IGNORECASE),
]
_PROMPT = [
    re.compile(r"your prompt contains (\d+) input tokens", re.IGNORECASE),
    re.compile(r"The input \((\d+) tokens?\)", re.IGNORECASE),
    re.compile(r"request \((\d+) tokens?\) exceeds", re.IGNORECASE),
    re.compile(r"\((\d+) in (?:the messages|your prompt)", re.IGNORECASE),
]


@dataclass(frozen=True)
class TooLong:
    """A rejection for length: the endpoint's stated limit and prompt size, where it said them."""

    limit: int | None
    prompt_tokens: int | None
    message: str

    def detail(self) -> str:
        said = f"limit {self.limit} tokens" if self.limit is not None else "limit not stated"
        if self.prompt_tokens is not None:
            said += f", prompt {self.prompt_tokens} tokens"
        return f"prompt too long for the endpoint ({said}): {self.message}"


def _text_of(body: object) -> tuple[str, str]:
    """(the error's message, the whole body as text) for a dict, nested `{"error": {...}}` or string body."""
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping):
            message = inner.get("message")
            return (message if isinstance(message, str) else ""), json.dumps(body, default=str)
        return "", json.dumps(body, default=str)
    text = "" if body is None else str(body)
    return text, text


def _int_field(body: object, name: str) -> int | None:
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping) and isinstance(inner.get(name), int):
            return int(inner[name])
    return None


def _first(patterns: list[re.Pattern[str]], text: str) -> int | None:
    for pattern in patterns:
        match = pattern.search(text)
        if match:
            return int(match.group(1))
    return None


def parse_too_long(body: object, message: str = "") -> TooLong | None:
    """A `TooLong` when the error body (or message) is a context-length rejection, else None."""
    body_message, whole = _text_of(body)
    text = f"{message}\n{whole}"
    if not _MARKERS.search(text):
        return None
    limit = _first(_LIMIT, text)
    if limit is None:
        limit = _int_field(body, "n_ctx")
    prompt = _first(_PROMPT, text)
    if prompt is None:
        prompt = _int_field(body, "n_prompt_tokens")
    shown = (body_message or message or whole).strip()
    return TooLong(limit=limit, prompt_tokens=prompt, message=shown[:500])
