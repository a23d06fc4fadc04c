"""What `ctxprobe limit` writes (`limit.json`) and the report reads back: per endpoint, the advertised,
configured, accepted and effective context lengths with how each was found. Measured in `evals.limit`;
typed and versioned here."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ctxprobe.evals.records.manifest import engine_facts
from ctxprobe.evals.records.outputs import read_output
from ctxprobe.evals.records.schema import SCHEMA_VERSION, SchemaVersion
from ctxprobe.runners.response import EngineInfo

LIMIT_JSON = "limit.json"


class TaskSpec(BaseModel):
    family: str
    params: dict[str, Any] = {}


class Advertised(BaseModel):
    tokens: int | None
    source: str


class AcceptedResult(BaseModel):
    accepted_tokens: int | None  # longest prompt that leaves `max_tokens` of answer room
    basis: str  # how accepted_tokens follows from the probes
    largest_taken: int | None  # longest prompt the endpoint took (planned tokens, like every length here)
    rejected_tokens: int | None  # shortest prompt rejected as too long (planned tokens)
    largest_taken_served: int | None = None  # the server's count of that prompt, where it gave one
    rejected_served: int | None = None  # the prompt size the rejection stated, where it did
    # where the rejection stated only a lower bound of that size ("at least N input tokens"): N, never a count
    rejected_served_at_least: int | None = None
    max_tokens: int  # the answer room every probe asked for
    stated_limit: int | None
    stopped_by_error: str | None
    requests: int
    probes: list[dict[str, object]]


class LengthResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    length: int
    successes: int
    n: int = Field(description="scored samples")
    requests: int = Field(description="samples requested, scored or not")
    accuracy: float | None
    lo: float
    hi: float
    verdict: Literal["pass", "fail", "no_data"]
    settled: bool = Field(description="the interval cleared the threshold (False: decided at the cap)")


class LimitResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    effective: int | None = Field(description="longest passing length; None when the shortest fails")
    bracket: tuple[int, int] | None = Field(description="(longest passing, shortest failing); None if it never drops")
    first_failing: int | None
    threshold: float
    criterion: Literal["absolute", "relative"]
    confidence: float
    lengths: list[LengthResult] = Field(description="in the order measured")
    requests: int
    full_grid_lengths: int
    full_grid_requests: int
    verdict: str


class TargetLimits(BaseModel):
    endpoint: str
    engine: EngineInfo | None
    advertised: Advertised
    configured: int | None
    configured_source: str | None
    accepted: AcceptedResult
    effective: LimitResult | None
    tasks: list[TaskSpec]

    @field_validator("engine", mode="before")
    @classmethod
    def _engine_facts(cls, value: Any) -> Any:
        return engine_facts(value)


class LimitOutput(BaseModel):
    """`limit.json`: one entry per endpoint measured."""

    schema_version: SchemaVersion = SCHEMA_VERSION
    targets: list[TargetLimits]


def read_limit(folder: Path) -> LimitOutput:
    """A limit folder's `limit.json` (any version)."""
    return read_output(Path(folder) / LIMIT_JSON, LimitOutput)
