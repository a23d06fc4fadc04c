"""What the served engine is and which of a suite's lengths it can serve, said once before any cost or sample:
the dry run prices only what can be served, and a run's start names the engine and model and the lengths it will
record `rejected_too_long` instead of sending.

The tokens one request may hold are the engine's stated context (`EngineInfo.context_length`: vLLM's and SGLang's
`max_model_len`, llama-server's per-slot `n_ctx` from `GET /props`), and for an engine ctxprobe started, at most
the model's trained context (llama-server caps each slot there whatever `--n-ctx` asked). A length is served when
its prompt and at least its answer room fit: llama-server rejects a prompt that fills the context exactly."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ctxprobe.runners.http_json import display_url
from ctxprobe.runners.response import EngineInfo


def served_context(engine: EngineInfo) -> tuple[int | None, str]:
    """(the tokens one request may hold, where that figure comes from); (None, why) when the engine does not say."""
    context, source = engine.context_length, engine.context_source or "the engine"
    trained = engine.context_trained
    if trained and (context is None or trained < context):
        return trained, "the model's trained context, which each slot is capped at"
    if context is None:
        return None, "the engine states no context length"
    return context, source


def same_limit(before: EngineInfo | None, now: EngineInfo | None) -> bool:
    """Whether two probes are one server for what fits in a request: the same engine, version and model, the
    same context a request may hold, and the same address (an engine ctxprobe started: the same context asked
    for, its port is new each time). A sample that server rejected as too long would be rejected again:
    `--resume` keeps the record instead of sending it again."""
    if before is None or now is None or served_context(before)[0] != served_context(now)[0]:
        return False
    launched = before.context_requested is not None or before.context_trained is not None
    key = (
        ("engine", "version", "model", "context_requested", "context_trained")
        if launched
        else ("engine", "version", "model", "base_url")
    )
    return all(getattr(before, k) == getattr(now, k) for k in key)


@dataclass(frozen=True)
class LengthCheck:
    """The suite's lengths against the served context: those it cannot serve, and the samples left."""

    context: int | None
    source: str
    unserved: tuple[int, ...]
    samples: int  # the suite's
    served_samples: int

    @property
    def served(self) -> bool:
        return not self.unserved

    def line(self) -> str:
        """One line: which lengths the engine cannot serve, and what that leaves of the suite."""
        assert self.context is not None
        left = self.samples - self.served_samples
        what = (
            "nothing of the suite"
            if not self.served_samples
            else f"{self.served_samples:,} of the suite's {self.samples:,} samples"
        )
        return (
            f"the engine serves at most {self.context:,} tokens a request ({self.source}): it cannot serve length"
            f"{'s' if len(self.unserved) > 1 else ''} {', '.join(f'{n:,}' for n in self.unserved)} "
            f"({left:,} sample{'' if left == 1 else 's'}, recorded as too long, never sent); that leaves {what}"
        )


def check_lengths(samples_by_length: Mapping[int, int], engine: EngineInfo, answer_room: int = 1) -> LengthCheck:
    """Which lengths of a suite (`samples_by_length`: its samples at each length) the engine cannot serve with
    `answer_room` tokens left for the answer."""
    context, source = served_context(engine)
    unserved = tuple(sorted(n for n in samples_by_length if context is not None and n + answer_room > context - 1))
    total = sum(samples_by_length.values())
    return LengthCheck(context, source, unserved, total, total - sum(samples_by_length[n] for n in unserved))


def engine_line(engine: EngineInfo, url: str) -> str:
    """The run's first line: the engine, its version, the model and the context a request may hold; for an
    engine ctxprobe started, the model's trained context and the context it was started with beside it. The URL
    is shown without the credentials or query it may carry."""
    url = display_url(url)
    context, source = served_context(engine)
    version = f" {engine.version}" if engine.version else ""
    model = engine.model or "an unnamed model"
    if engine.context_trained is not None or engine.context_requested is not None:  # started by ctxprobe
        parts = [
            f"started with {engine.context_requested:,} tokens a slot" if engine.context_requested else "",
            f"trained context {engine.context_trained:,}" if engine.context_trained else "",
            f"serves {context:,} tokens a request" if context else "",
        ]
        return (
            f"engine {engine.engine}{version} (embedded, {url}), model {model} (GGUF; "
            + "; ".join(p for p in parts if p)
            + ")"
        )
    served = f"{context:,} tokens a request ({source})" if context else source
    return f"engine {engine.engine}{version} at {url}, model {model}, context {served}"
