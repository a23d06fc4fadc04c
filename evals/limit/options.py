"""The options of `ctxprobe.limit`, declared once for the API, the command line and the manifest."""

from __future__ import annotations

from pydantic import Field

from ctxprobe.evals.limit.search import SearchSettings
from ctxprobe.evals.run.send.options import EndpointOptions, SuiteOptions
from ctxprobe.tasks.limits import MAX_CONTEXT_TOKENS
from ctxprobe.tasks.same_field import same_field

DEFAULT_TASKS = ("niah:variant=single", "niah:variant=multikey", "recall:kind=hex", "multihop:kind=keychain")


class LimitOptions(EndpointOptions, SearchSettings):
    """The endpoint to measure, the lengths and tasks to measure with, and the search's settings."""

    advertised: str | None = Field(None, description="the length the model card promises, e.g. 1m")
    config: str | None = Field(None, description="read the advertised length from a config.json")
    min_length: str = Field("4k", description="shortest length of the effective search")
    max_length: str | None = Field(
        None, description="longest length tried (default: accepted, else configured, else advertised)"
    )
    answer_room: int = Field(
        64,
        ge=1,
        le=MAX_CONTEXT_TOKENS,
        description="max_tokens every probe asks for (below "
        "--max-length and the served context: a prompt needs room too)",
    )
    skip_effective: bool = Field(False, description="find advertised, configured and accepted only")
    include: list[str] = same_field(SuiteOptions, "include")
    tasks: list[str] = Field(
        default_factory=lambda: list(DEFAULT_TASKS), description="tasks to measure with, FAMILY[:k=v,...]"
    )
    haystack: str = Field("prose", description="haystack for the effective search")
    label: str = Field("", max_length=200, description="a name for this run")
    results_dir: str = Field("results", description="where run folders are made")
