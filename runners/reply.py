"""Reading one completion (streamed chunks or a whole body) into answer text, reasoning and usage.

Engines put reasoning in different places: vLLM `reasoning`, SGLang and llama-server `reasoning_content`
(both read), and models without a reasoning parser leave `<think>...</think>` inline in the text, which is
moved out of the answer into the reasoning. The SDK keeps these non-OpenAI fields as extra attributes."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxprobe.runners.logprob_shapes import generated_tokens
from ctxprobe.runners.response import GeneratedToken, ReplyTimings

_REASONING_FIELDS = ("reasoning_content", "reasoning")
_THINK_BLOCK = re.compile(r"<think>(.*?)</think>", re.DOTALL)


def _get(obj: object, name: str) -> Any:
    """A field of an SDK object or of a plain dict (extra fields may come back as either)."""
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    value = getattr(obj, name, None)
    if value is None:
        extra = getattr(obj, "model_extra", None)
        if isinstance(extra, Mapping):
            value = extra.get(name)
    return value


def _int(value: object) -> int | None:
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else None


def split_think(text: str) -> tuple[str, str]:
    """(answer, reasoning) for text that may hold `<think>` blocks.
    A lone `</think>` (the opening tag was in the chat template) ends reasoning that starts the text;
    a lone `<think>` (cut off by max_tokens) starts reasoning that runs to the end."""
    if "<think>" not in text and "</think>" not in text:
        return text, ""
    thoughts = [m.strip() for m in _THINK_BLOCK.findall(text)]
    answer = _THINK_BLOCK.sub("", text)
    if "</think>" in answer:
        before, _, answer = answer.rpartition("</think>")
        thoughts.insert(0, before.replace("<think>", "").strip())
    if "<think>" in answer:
        answer, _, after = answer.partition("<think>")
        thoughts.append(after.strip())
    return answer.strip(), "\n".join(t for t in thoughts if t)


@dataclass
class ReplyParts:
    """Accumulates one reply; `add_chunk` per streamed chunk, or `add_whole` once for a whole body."""

    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None
    cached_tokens: int | None = None
    timings: ReplyTimings | None = None  # the engine's own count of the prompt (llama-server)
    generated: list[GeneratedToken] = field(default_factory=list)  # where logprobs were asked for

    def add_chunk(self, chunk: object) -> bool:
        """Take one streamed chunk; True when it carried generated text or reasoning (a token)."""
        got = False
        for choice in _get(chunk, "choices") or ():
            delta = _get(choice, "delta")
            got |= self._take(_get(choice, "text"), delta if delta is not None else choice)
            if delta is not None:
                got |= self._take(_get(delta, "content"), None)
            self.generated += generated_tokens(_get(choice, "logprobs"))
            self.finish_reason = _get(choice, "finish_reason") or self.finish_reason
        self._usage(chunk)
        return got

    def add_whole(self, body: object) -> None:
        """Take a non-streamed completion or chat completion."""
        choices = _get(body, "choices") or ()
        for choice in choices[:1]:
            message = _get(choice, "message")
            self._take(_get(choice, "text"), message if message is not None else choice)
            if message is not None:
                self._take(_get(message, "content"), None)
            self.generated += generated_tokens(_get(choice, "logprobs"))
            self.finish_reason = _get(choice, "finish_reason")
        self._usage(body)

    def _take(self, text: object, holder: object) -> bool:
        got = False
        if isinstance(text, str) and text:
            self.text.append(text)
            got = True
        for name in _REASONING_FIELDS:
            piece = _get(holder, name) if holder is not None else None
            if isinstance(piece, str) and piece:
                self.reasoning.append(piece)
                got = True
                break  # an engine that sends both names sends the same text twice
        return got

    def _usage(self, obj: object) -> None:
        usage = _get(obj, "usage")
        if usage is not None:
            prompt = _int(_get(usage, "prompt_tokens"))
            completion = _int(_get(usage, "completion_tokens"))
            self.prompt_tokens = self.prompt_tokens if prompt is None else prompt
            self.completion_tokens = self.completion_tokens if completion is None else completion
            reasoning = _int(_get(_get(usage, "completion_tokens_details"), "reasoning_tokens"))
            self.reasoning_tokens = self.reasoning_tokens if reasoning is None else reasoning
            cached = _int(_get(_get(usage, "prompt_tokens_details"), "cached_tokens"))
            if cached is not None:
                self.cached_tokens = cached
        timings = _get(obj, "timings")  # llama-server
        cache_n, prompt_n = _int(_get(timings, "cache_n")), _int(_get(timings, "prompt_n"))
        if cache_n is not None and self.cached_tokens is None:
            self.cached_tokens = cache_n
        if cache_n is not None and prompt_n is not None:
            self.timings = ReplyTimings(cache_n=cache_n, prompt_n=prompt_n)

    def answer_and_reasoning(self) -> tuple[str, str | None]:
        answer, inline = split_think("".join(self.text))
        reasoning = "\n".join(p for p in ("".join(self.reasoning).strip(), inline) if p)
        return answer, reasoning or None
