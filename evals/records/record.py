"""The per-sample record of a run: the generator's Sample plus what the endpoint did and the score.
One line of `samples.jsonl` is one SampleRecord."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from ctxprobe.evals.records.schema import SCHEMA_VERSION, SchemaVersion
from ctxprobe.runners.response import LOGPROBS_UNAVAILABLE, AnswerLogprobs, ErrorKind, Response
from ctxprobe.tasks.answers.verdict import SCORER_VERSION, Score
from ctxprobe.tasks.sample import Sample

__all__ = [
    "LOGPROBS_UNAVAILABLE",
    "SCORER_VERSION",
    "AnswerLogprobs",
    "ErrorKind",
    "Response",
    "SampleRecord",
    "Score",
]  # the response types live with the client, the score with its scorers (tasks/answers)


class SampleRecord(BaseModel):
    """One finished (scored or errored) sample: one line of samples.jsonl."""

    schema_version: SchemaVersion = SCHEMA_VERSION
    sample: Sample
    response: Response | None = None
    score: Score | None = None
    error: ErrorKind | None = None
    error_detail: str | None = None
    attempts: int = Field(1, description="HTTP requests this record's answer (or error) took, retries included")
    answer_tokens: int | None = Field(
        None,
        description="the answer budget sent (None: the sample's max_tokens, "
        "as in records written before budgets per mode)",
    )
    reasoning_tokens_budget: int = Field(0, description="reasoning tokens allowed on top of the answer budget")
    prompt_tokens_off: int | None = Field(
        None,
        description="the server's usage.prompt_tokens minus planned_tokens, where beyond the tolerance "
        "(evals/run/send/count_check.py): the sample was served at another length than its recipe says",
    )
    reference_scores: dict[str, float] = Field(
        default_factory=dict, description="other harnesses' scores of the same output, e.g. RULER's substring match"
    )
    logprobs: AnswerLogprobs | Literal["unavailable"] | None = Field(
        None,
        description="the gold answer's teacher-forced log-probabilities (`runners.response.AnswerLogprobs`); "
        "'unavailable' where the engine gives none; None where not asked for",
    )
    logprobs_detail: str | None = Field(
        None,
        description="why `logprobs` is None although they were asked for "
        "(no single rendering of the answer, a merge at the prompt's end, a "
        "failed extra request)",
    )
    finished_at: float = Field(default=0.0, description="unix time the record was written")

    @classmethod
    def skim(cls, raw: bytes) -> bytes:
        """A line of samples.jsonl cut to what this model reads, before it is parsed (a whole record: all of it)."""
        return raw

    @model_validator(mode="before")
    @classmethod
    def _older_scores(cls, data: Any) -> Any:
        """A score read back without a scorer version was given by the first rule (version 1)."""
        if isinstance(data, dict) and isinstance(data.get("score"), dict) and "scorer_version" not in data["score"]:
            data = {**data, "score": {**data["score"], "scorer_version": 1}}
        return data
