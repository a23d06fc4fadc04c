"""The options of `ctxprobe export`, declared once for the command line (the API takes the same names as
keywords); the suite overrides are `ctxprobe run`'s own (`SuiteOptions`, evals/run/send/options.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ctxprobe.evals.run.send.endpoint_urls import check_endpoint_url


class ExportOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: str = Field(description="built-in suite, suite YAML, or a run folder")
    out_dir: str = Field(description="new or empty folder to write")
    format: Literal["lm-eval", "hf"] = Field(
        "lm-eval", description="an lm-eval task directory or a Hugging Face dataset"
    )
    token_counter: str | None = Field(
        None,
        description="estimate[:CHARS] | local:PATH_OR_ID | server:URL (default: "
        "local:gemma3-270m for suites, the run's own for runs)",
    )
    base_url: str = Field("http://127.0.0.1:8080", description="endpoint to put in the printed lm_eval command")

    @field_validator("base_url")
    @classmethod
    def _http(cls, url: str) -> str:
        """An http(s) endpoint, checked before the folder is written: the printed command would not run."""
        return check_endpoint_url(url)
