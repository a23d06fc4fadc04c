"""What one request to an endpoint gives back: a typed `Response`, or an `ErrorKind` saying why there is none;
and what an endpoint says about itself (`EngineInfo`, from the probe).

These belong with the client that produces them (`runners.endpoint`); the run records in `evals` carry
them, so the dependency points one way: evals uses runners, never the other way round."""

from __future__ import annotations

import math
import time
from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr


class ErrorKind(str, Enum):
    """Why a sample has no score. Reported apart from accuracy, never counted as a wrong answer."""

    rejected_too_long = "rejected_too_long"
    timeout = "timeout"
    http_error = "http_error"
    connection_error = "connection_error"
    empty = "empty"
    no_answer_room = "no_answer_room"  # the engine stopped for length before max_tokens: context exhausted
    truncated = "truncated"  # stopped at the answer budget while the answer was still being written


def no_answer(text: str, reasoning: str | None, completion_tokens: int | None) -> bool:
    """Nothing came back to score: no text (or only whitespace with no generated tokens counted) and no
    reasoning. Whitespace the model did generate (a base model emitting blank lines until max_tokens) is
    its answer, and a wrong one; an empty text after generated tokens is a parser or server fault."""
    if reasoning or text.strip():
        return False
    return not text or not completion_tokens


# What the model thinks of the expected answer: the log-probability it gives the gold answer's tokens,
# teacher-forced after the prompt (and its answer prefix), with the top-k alternatives at each position.
# A record keeps `AnswerLogprobs`, or "unavailable" where the engine gives no log-probabilities.
LOGPROBS_UNAVAILABLE: Literal["unavailable"] = "unavailable"
LogprobMethod = Literal["generated", "forced", "prompt_logprobs"]


class TokenLogprob(BaseModel):
    """One candidate token at one answer position: its text as the engine shows it, its id where the
    engine gives one, and its log-probability."""

    model_config = ConfigDict(frozen=True)

    token: str
    logprob: float
    id: int | None = None


class GeneratedToken(TokenLogprob):
    """One token an engine generated, with its log-probability and the top-k alternatives at its position
    (the engine's raw distribution there, likeliest first)."""

    top: list[TokenLogprob] = Field(default_factory=list)


class AnswerLogprobs(BaseModel):
    """The gold answer's tokens teacher-forced after the prompt: one log-probability per token, the top-k
    alternatives at each position (the engine's distribution over its k likeliest tokens there), and what
    the measurement cost beyond the answer request."""

    model_config = ConfigDict(frozen=True)

    gold: str = Field(
        description="the text teacher-forced after the prompt (the expected answer as the model "
        "would write it, with its leading space where the answer prefix leaves one)"
    )
    token_ids: list[int] = Field(default_factory=list, description="the gold text's token ids after the prompt")
    logprobs: list[float] = Field(description="log P(gold token j | prompt, gold[:j]), one per gold token")
    top: list[list[TokenLogprob]] = Field(
        default_factory=list, description="the top-k alternatives at each gold position, likeliest first"
    )
    greedy: list[bool] = Field(
        default_factory=list, description="per gold position: the likeliest token there is the gold one"
    )
    first_divergence: int | None = Field(
        None,
        description="the first gold position where greedy decoding "
        "picks another token (None: greedy decoding writes the whole gold)",
    )
    method: LogprobMethod = Field(
        description="generated: read from the answer request's own logprobs (and "
        "extra one-token requests on the cached prefix past a divergence); forced: "
        "every position by extra requests; prompt_logprobs: one request scoring the "
        "gold as part of the prompt"
    )
    answer_from: int = Field(
        0,
        ge=0,
        description="the gold positions before this one are only the separator "
        "the answer prefix leaves (a space the tokenizer makes a token of its own): "
        "teacher-forced and kept in `top`, but not counted in `p_answer`",
    )
    extra_requests: int = Field(0, ge=0, description="requests sent beyond the answer request")
    extra_prompt_tokens: int = Field(
        0, ge=0, description="prompt tokens those requests sent (mostly served from the engine's prefix cache)"
    )

    @property
    def tokens(self) -> int:
        return len(self.logprobs)

    @property
    def sum_logprob(self) -> float:
        """log P(the answer's tokens | the prompt and the separator before them)."""
        return math.fsum(self.logprobs[self.answer_from :])

    @property
    def p_answer(self) -> float:
        """The chance the model would write exactly the answer when sampling at temperature 1, once it has
        written the separator the answer prefix leaves. Whether a model writes `: 123` or ` 123` after
        `The number is` is its format, not its recall: counting the separator would scale every p_answer by
        the model's taste for it (a fifth, for Gemma 3 270M after RULER's answer prefix) and hide a build's
        loss of the answer in that factor."""
        return math.exp(self.sum_logprob)

    @property
    def top1_agreement(self) -> float:
        """The share of gold positions where the likeliest token is the gold one (nan with no positions)."""
        return sum(self.greedy) / len(self.greedy) if self.greedy else math.nan


class ReplyTimings(BaseModel):
    """An engine's own count of one reply's prompt, apart from its usage (llama-server's `timings`): the tokens
    it served from its cache and those it computed. The two must add up to the usage's prompt tokens, and the
    cached ones equal its `prompt_tokens_details.cached_tokens` (evals/run/reuse.py holds them so)."""

    model_config = ConfigDict(frozen=True)

    cache_n: int = Field(description="prompt tokens served from the cache (timings.cache_n)")
    prompt_n: int = Field(description="prompt tokens computed (timings.prompt_n)")


class Response(BaseModel):
    """What the endpoint returned for one request."""

    model_config = ConfigDict(frozen=True)

    endpoint: str
    text: str
    reasoning: str | None = None
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = Field(
        None,
        description="tokens spent reasoning: the engine's "
        "usage.completion_tokens_details.reasoning_tokens, else counted",
    )
    cached_tokens: int | None = None
    timings: ReplyTimings | None = Field(
        None, description="the engine's own count of the prompt, where the reply carries one (llama-server's `timings`)"
    )
    latency_s: float | None = Field(None, description="None when not measured (runs imported from lm-eval logs)")
    ttft_s: float | None = None
    attempts: int = Field(1, description="HTTP requests this answer took, retries included")
    generated: list[GeneratedToken] | None = Field(
        None,
        exclude=True,
        repr=False,
        description="the generated tokens' log-probabilities, where they were "
        "asked for (read into the record's `logprobs`, not kept in the response)",
    )


class ReplicaEvent(BaseModel):
    """A replica taken out of rotation (its connection failed) or put back (it answered again)."""

    model_config = ConfigDict(frozen=True)

    replica: str = Field(description="the replica's URL, without credentials")
    event: Literal["dropped", "restored"]
    at: float = Field(default_factory=time.time, description="when (Unix time)")
    reason: str = ""
    retry_after_s: float | None = Field(None, description="dropped: how long until it is tried again")

    def line(self) -> str:
        if self.event == "dropped":
            return (
                f"replica {self.replica} taken out of rotation ({self.reason}); its requests go to the others, "
                f"and it is tried again in {self.retry_after_s:g} s"
            )
        return f"replica {self.replica} is back in rotation ({self.reason})"


DEFAULT_CONCURRENCY = 4  # requests in flight for an engine that does not say how many it serves at once


class EngineInfo(BaseModel):
    """What the endpoint says about itself. `context_source` names the call the length came from;
    `slots` is how many requests it serves at once, where it says (llama-server's `total_slots`)."""

    model_config = ConfigDict(frozen=True)
    # the model's card and the engine's identifying body the probe read (never written): what the run's
    # deployment lint reads its facts from, so no call is made twice
    _stated: tuple[Any, Any] | None = PrivateAttr(default=None)

    engine: str = Field(description='the engine adapter\'s name (runners/engines), or "unknown"')
    version: str | None = None
    context_length: int | None = None
    context_source: str | None = None
    model: str | None = None
    base_url: str | None = None
    slots: int | None = None
    context_requested: int | None = Field(
        None,
        description="a launched engine: the context per slot it was started with (`--n-ctx`, or sized to the suite)",
    )
    context_trained: int | None = Field(
        None,
        description="a launched engine: the model's trained context (the "
        "GGUF's <arch>.context_length); a request above it is capped to it",
    )
    threads: int | None = Field(
        None,
        description="a launched llama.cpp engine: the CPU threads it computed with, where ctxprobe or the user chose "
        "them (runners/cpu_share.py); None: llama.cpp's own choice. Its numerics depend on them (docs/ENGINES.md)",
    )
    reuse_block: int | None = Field(
        None,
        description="the tokens the engine reuses a cached prefix in whole "
        "multiples of, where it states them (vLLM's block); None: any number",
    )

    @property
    def default_concurrency(self) -> int:
        """Requests to keep in flight when the user does not say: `in_flight(None, self.slots)`."""
        return in_flight(None, self.slots)


class LintLine(BaseModel):
    """One finding of the deployment lint (runners/deployment_lint.py), as a run's manifest keeps it: the rule,
    the line as printed, and where each fact it rests on was read."""

    model_config = ConfigDict(frozen=True)

    rule: str = Field(description="the rule's name (runners/deployment_lint.py)")
    message: str = Field(description="the line as printed: each fact with where it was read")
    sources: list[str] = Field(default_factory=list, description="where each fact was read")


def in_flight(given: int | None, slots: int | None) -> int:
    """Requests to keep in flight, decided here for every run, dry run and launched engine: the user's
    `--concurrency`; else the server's slots where they are known (stated by the server, or the slots ctxprobe
    starts it with: more would only queue, and a queued request's latency and deadline would count its wait);
    else 4."""
    return given or slots or DEFAULT_CONCURRENCY
