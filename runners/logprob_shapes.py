"""Reading the log-probabilities of generated tokens out of a completion, in each engine's shape
(docs/ENGINES.md, "Log-probabilities"; captured bodies in tests/runners/fixtures/):

- `content` entries, one per token: `{token, logprob, top_logprobs: [{token, logprob}]}`. Chat completions
  on every engine; llama-server answers `/v1/completions` in this shape too, and adds each token's `id`.
- the legacy completions shape: `{tokens, token_logprobs, top_logprobs: [{token: logprob}], text_offset}`
  (vLLM, SGLang), the top-k a mapping from token text to logprob, likeliest first.

A token's id is its `id` where given; vLLM with `return_tokens_as_token_ids` writes each token as
`token_id:N`, which gives it. A token without an id is still read (its text and logprob), and the caller
decides what it can do without ids."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from ctxprobe.runners.response import GeneratedToken, TokenLogprob

_AS_ID = re.compile(r"^token_id:(-?\d+)$")


def _plain(obj: object) -> Any:
    """An SDK object as plain data (its extra fields included), or the object itself."""
    dump = getattr(obj, "model_dump", None)
    return dump() if callable(dump) else obj


def _finite(value: object) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
        return number if not math.isnan(number) else None
    return None


def _candidate(token: object, logprob: object, token_id: object = None) -> TokenLogprob | None:
    lp = _finite(logprob)
    if not isinstance(token, str) or lp is None:
        return None
    match = _AS_ID.match(token)
    if isinstance(token_id, int) and not isinstance(token_id, bool):
        return TokenLogprob(token=token, logprob=lp, id=token_id)
    return TokenLogprob(token=token, logprob=lp, id=int(match.group(1)) if match else None)


def _by_likelihood(items: list[TokenLogprob]) -> list[TokenLogprob]:
    return sorted(items, key=lambda t: -t.logprob)


def _from_content(entries: list[Any]) -> list[GeneratedToken]:
    out: list[GeneratedToken] = []
    for entry in entries:
        entry = _plain(entry)
        if not isinstance(entry, Mapping):
            continue
        own = _candidate(entry.get("token"), entry.get("logprob"), entry.get("id"))
        if own is None:
            continue
        top = [
            c
            for c in (
                _candidate(t.get("token"), t.get("logprob"), t.get("id"))
                for t in (_plain(t) for t in entry.get("top_logprobs") or ())
                if isinstance(t, Mapping)
            )
            if c is not None
        ]
        out.append(GeneratedToken(**own.model_dump(), top=_by_likelihood(top)))
    return out


def _from_legacy(body: Mapping[str, Any]) -> list[GeneratedToken]:
    tokens, logprobs = body.get("tokens") or [], body.get("token_logprobs") or []
    tops = body.get("top_logprobs") or []
    out: list[GeneratedToken] = []
    for i, (token, lp) in enumerate(zip(tokens, logprobs)):
        own = _candidate(token, lp)
        if own is None:
            continue
        alternatives = tops[i] if i < len(tops) and isinstance(tops[i], Mapping) else {}
        top = [c for c in (_candidate(t, v) for t, v in alternatives.items()) if c is not None]
        out.append(GeneratedToken(**own.model_dump(), top=_by_likelihood(top)))
    return out


def generated_tokens(logprobs: object) -> list[GeneratedToken]:
    """The tokens of one choice's `logprobs` object (either shape), in order; [] when it holds none."""
    body = _plain(logprobs)
    if not isinstance(body, Mapping):
        return []
    content = body.get("content")
    if isinstance(content, list):
        return _from_content(content)
    return _from_legacy(body)
