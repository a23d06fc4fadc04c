"""Hand-built samples and records for the evals tests (no generator involved)."""

from __future__ import annotations

from typing import Any

from ctxprobe.evals.records.record import ErrorKind, Response, SampleRecord, Score
from ctxprobe.tasks.sample import Expected, Mode, Recipe, Sample, sha256_text

NIAH_QUESTION = "What is the special magic number for tidy-lobster mentioned in the provided text?"
NIAH_PREFIX = "The special magic number for tidy-lobster mentioned in the provided text is"


def make_sample(
    answers: list[str],
    kind: str = "value",
    chain: list[str] | None = None,
    *,
    family: str = "niah",
    params: dict[str, Any] | None = None,
    mode: Mode = "completions",
    question: str = NIAH_QUESTION,
    answer_prefix: str | None = None,
    context_tokens: int = 4096,
    depth: float = 50.0,
    haystack: str = "prose",
    seed: int = 0,
) -> Sample:
    """A sample with the given expected answer; the prompt is a stand-in (scorers never read it)."""
    recipe = Recipe(
        family=family,
        params=params or {},
        haystack=haystack,
        context_tokens=context_tokens,
        depth=depth,
        seed=seed,
        mode=mode,
    )
    if answer_prefix is None:
        answer_prefix = NIAH_PREFIX if mode == "completions" else ""
    prompt = f"haystack ... {question}\n\n{answer_prefix}"
    return Sample(
        sample_id=recipe.sample_id(),
        recipe=recipe,
        prompt=prompt,
        prompt_sha256=sha256_text(prompt),
        planned_tokens=context_tokens,
        approximate=False,
        question=question,
        answer_prefix=answer_prefix,
        max_tokens=32,
        expected=Expected(kind=kind, answers=answers, chain=chain or []),  # type: ignore[arg-type]
        needles=[],
    )


def make_record(
    correct: bool | None = True,
    partial: float | None = None,
    *,
    error: ErrorKind | None = None,
    **sample_fields: Any,
) -> SampleRecord:
    """A finished record at a grid point: scored (`correct`) or failed with `error` (no score)."""
    sample = make_sample(["1234567"], **sample_fields)
    if error is not None:
        return SampleRecord(sample=sample, error=error, error_detail="test")
    score = Score(
        extracted=["1234567" if correct else "7654321"],
        correct=bool(correct),
        partial=float(correct) if partial is None else partial,
    )
    response = Response(endpoint="completions", text=" 1234567.", latency_s=0.1)
    return SampleRecord(sample=sample, response=response, score=score)
