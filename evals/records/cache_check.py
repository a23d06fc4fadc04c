"""The cache-path control's records: one `CacheCheckRecord` a check in `cache_checks.jsonl` (a request the run
served, or could serve, from the prefix cache, sent again with a cold prefill, and the two answers side by
side), and the manifest's `CacheCheck` summary (what was checked and what differed, per length, and the
verdict `evals.compare.cache_path` reached). Kept beside the samples, never inside them: a sample's score is
the cached request's, and a cold answer never replaces it. Lines are only appended; the latest line of a
check wins when read back, and a damaged line is skipped like one of samples.jsonl."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ctxprobe.evals.records.sample_lines import append_line, read_latest
from ctxprobe.evals.records.schema import SCHEMA_VERSION, SchemaVersion

CACHE_CHECKS_FILE = "cache_checks.jsonl"
CACHE_CHECK_VERSION = 1  # the manifest's `cache_check` record

Verdict = Literal["agrees", "differs", "fault", "unsupported", "off", "unchecked"]


def cold_id(sample_id: str) -> str:
    """The cold request's own id: never a sample's (a check is no sample), found from its sample's."""
    return f"{sample_id}-cold"


class CacheCheckRecord(BaseModel):
    """One check: the sample as the run served it (`cached_*`, from its record) and the same prompt sent
    again with a cold prefill (`cold_*`); `error` where the cold answer could not be scored."""

    model_config = ConfigDict(frozen=True)

    schema_version: SchemaVersion = SCHEMA_VERSION
    sample_id: str = Field(description="the sample whose served answer is checked")
    cold_id: str = Field(description="the cold request's own id")
    chain: str = Field(description="the sample's prefix-sharing group (its chain)")
    context_tokens: int = Field(gt=0)
    depth: float
    how: str = Field(description="the engine's per-request cold path (e.g. cache_salt, cache_prompt=false)")
    cached_text: str
    cached_correct: bool
    cached_tokens: int | None = Field(
        None, description="prompt tokens the engine said it served from cache for the sample's own request"
    )
    cold_text: str | None = None
    cold_correct: bool | None = None
    cold_cached_tokens: int | None = Field(
        None,
        description="prompt tokens the engine said it served from "
        "cache for the cold request (0 on a working cold path)",
    )
    kl: float | None = Field(
        None,
        ge=0,
        description="KL(cached || cold) in nats over the gold answer's "
        "positions, where both sides have answer log-probabilities",
    )
    error: str | None = Field(None, description="why the cold request gave no scored answer")
    checked_at: float = Field(default_factory=time.time)

    @property
    def compared(self) -> bool:
        return self.error is None and self.cold_correct is not None

    @property
    def differed(self) -> bool:
        """The cold answer's text or score is not the cached one's."""
        return self.compared and (self.cold_text != self.cached_text or self.cold_correct != self.cached_correct)


class LengthChecks(BaseModel):
    context_tokens: int
    checked: int = 0
    differed: int = 0


class CacheCheck(BaseModel):
    """The manifest's record of the cache-path control (version `CACHE_CHECK_VERSION`)."""

    model_config = ConfigDict(extra="ignore")

    version: int = CACHE_CHECK_VERSION
    verdict: Verdict = Field(
        description="agrees (no difference, or differences a healthy engine's numerics "
        "explain); differs (checks differ, too few or too balanced to decide); fault (the "
        "cache path changes answers: an engine fault); unsupported (no per-request cold "
        "path); off; unchecked (chosen, none compared yet)"
    )
    engine: str = ""
    how: str = Field("", description="the cold path used, or where there is none, what the engine offers")
    asked: str = Field("auto", description="--cache-check as given: auto, off or a share of the servable requests")
    stated: str = Field(
        "",
        description="where that was stated, in words (the flag, or the suite's cache_check); "
        "empty: the layout's default",
    )
    chosen: int = 0
    checked: int = Field(0, description="checks with a cold answer compared to the cached one")
    differed: int = Field(0, description="checks whose cold answer's text or score differs (each counted)")
    cold_right_cached_wrong: int = 0
    cached_right_cold_wrong: int = 0
    unchecked: int = Field(
        0, description="checks chosen and not compared (not sent yet, the sample or the cold request in error)"
    )
    per_length: list[LengthChecks] = Field(default_factory=list)
    cold_ids: list[str] = Field(default_factory=list, description="the cold requests' own ids")
    p_value: float | None = Field(
        None, description="one-sided paired sign test: cold right where cached is wrong more often than the reverse"
    )
    kl_median: float | None = None
    kl_max: float | None = None
    kl_mean: float | None = None
    kl_noise_floor: float | None = None
    prefill_tokens: int = Field(0, description="prompt tokens the cold requests prefilled")

    @property
    def fault(self) -> bool:
        return self.verdict == "fault"

    def line(self) -> str:
        """One line for a person: what was checked and what it says."""
        if self.verdict == "off":
            if self.stated and not self.stated.startswith("--"):  # the suite's: the flag turns it on
                return f"cache path: not checked ({self.stated}; --cache-check auto checks it)"
            return f"cache path: not checked ({self.stated or '--cache-check off'})"
        if self.verdict == "unsupported":
            return f"cache path: not checked: {self.how}"
        counts = (
            f"{self.differed} of {self.checked} cold re-sends differed ({self.cold_right_cached_wrong} right "
            f"only cold, {self.cached_right_cold_wrong} right only cached)"
        )
        kl = "" if self.kl_max is None else f", KL median {self.kl_median:.3g} max {self.kl_max:.3g} nats"
        left = f"; {self.unchecked} chosen not checked" if self.unchecked else ""
        p = "" if self.p_value is None else f", sign test p={self.p_value:.3g}"
        if self.verdict == "fault":
            return (
                f"ENGINE FAULT: the prefix-cache path changes answers: {counts}{p}{kl}{left}; the model's "
                "scores in this run are suspect"
            )
        if self.verdict == "differs":
            return f"cache path: {counts}{p}{kl}: not enough to call an engine fault{left}"
        if self.verdict == "unchecked":
            return f"cache path: {self.chosen} checks chosen, none compared yet{left}"
        return f"cache path agrees: {counts}{p}{kl}{left}"


def read_checks(run_dir: Path) -> dict[str, CacheCheckRecord]:
    """The latest check of each sample ({} when the run made none)."""
    return read_latest(Path(run_dir) / CACHE_CHECKS_FILE, CacheCheckRecord)


def append_check(run_dir: Path, check: CacheCheckRecord) -> None:
    """Add one check to the run's file (a line written whole, then flushed)."""
    append_line(Path(run_dir) / CACHE_CHECKS_FILE, check)
