"""The per-sample record of a run: the generator's Sample plus what the endpoint did and the score.
One line of `samples.jsonl` is one SampleRecord."""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict, Field

from ctxprobe.evals.run.schema import SCHEMA_VERSION
from ctxprobe.tasks.sample import Sample


class ErrorKind(str, Enum):
    """Why a sample has no score. Reported apart from accuracy, never counted as a wrong answer."""

    rejected_too_long = "rejected_too_long"
    timeout = "timeout"
    http_error = "http_error"
    connection_error = "connection_error"
    empty = "empty"
    no_answer_room = "no_answer_room"  # the engine stopped for length before max_tokens: context exhausted


class Response(BaseModel):
    """What the endpoint returned for one request."""

    model_config = ConfigDict(frozen=True)

    endpoint: str
    text: str
    reasoning: str | None = None
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    latency_s: float | None = Field(None, description="None when not measured (runs imported from lm-eval logs)")
    ttft_s: float | None = None


class Score(BaseModel):
    """The scorer's verdict: `correct` is exact on the extracted answer; `partial` is the partial credit
    (edit similarity for recall, fraction of the chain for multi-hop, fraction of values for multi-value)."""

    model_config = ConfigDict(frozen=True)

    extracted: list[str]
    correct: bool
    partial: float


class SampleRecord(BaseModel):
    """One finished (scored or errored) sample: one line of samples.jsonl."""

    schema_version: int = SCHEMA_VERSION
    sample: Sample
    response: Response | None = None
    score: Score | None = None
    error: ErrorKind | None = None
    error_detail: str | None = None
    attempts: int = 1
    reference_scores: dict[str, float] = Field(
        default_factory=dict, description="other harnesses' scores of the same output, e.g. RULER's substring match")
    finished_at: float = Field(default=0.0, description="unix time the record was written")

