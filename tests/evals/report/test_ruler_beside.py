"""RULER's own metric beside ctxprobe's strict score on RULER-layout samples: an answer that lists a rival
counts for RULER (recall only) and not for ctxprobe."""

from __future__ import annotations

from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.evals.report.ruler_beside import render_ruler_beside
from ctxprobe.evals.scoring.ruler_score import ruler_references
from ctxprobe.evals.scoring.score import score_sample
from ctxprobe.tasks.build import build_sample
from ctxprobe.tasks.sample import Recipe


def _record(seed: int, template: str, answer: str) -> SampleRecord:
    sample = build_sample(
        Recipe(
            family="niah",
            params={"variant": "single", "template": template},
            haystack="noise:ruler",
            context_tokens=600,
            seed=seed,
        )
    )
    text = answer.format(value=sample.expected.answers[0])
    return SampleRecord(
        sample=sample, score=score_sample(sample, text), reference_scores=ruler_references(sample, text)
    )


def test_ruler_and_strict_side_by_side():
    records = [
        _record(0, "ruler", " {value}."),
        _record(1, "ruler", " {value} or 1234567."),
        _record(2, "ruler", " 1{value}."),
        _record(3, "ctxprobe", " {value} or 1234567."),
    ]
    text = render_ruler_beside(records)
    lines = text.splitlines()
    assert len(lines) == 2 and lines[0].startswith("RULER's own metric")
    # RULER: all three found as substrings (100 points, 3/3); strict: only the first (1/3)
    assert (
        lines[1].strip()
        == "niah  variant=single, template=ruler  [noise:ruler]  600: RULER 100.0 (3/3 all found)  ctxprobe strict 33% (1/3)"
    )


def test_no_ruler_layout_no_section():
    assert render_ruler_beside([_record(0, "ctxprobe", " {value}.")]) == ""
