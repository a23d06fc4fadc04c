"""The answer probabilities beside the table (evals/report/answer_probs.py): per cell, the mean p_answer and
top-1 agreement of the samples measured, checked by hand; nothing for a run without them."""

from __future__ import annotations

import math

from ctxprobe.evals.records.record import AnswerLogprobs, SampleRecord
from ctxprobe.evals.report.answer_probs import answer_probabilities, render_answer_probabilities
from ctxprobe.runners.response import Response
from ctxprobe.tasks.build import build_sample
from ctxprobe.tasks.sample import Recipe


def record(
    depth: float, logprobs: list[float] | None, greedy: list[bool] | None = None, other: str | None = None
) -> SampleRecord:
    sample = build_sample(Recipe(family="niah", context_tokens=400, depth=depth))
    lp = (
        None
        if logprobs is None
        else AnswerLogprobs(
            gold=" 1", token_ids=list(range(len(logprobs))), logprobs=logprobs, greedy=greedy or [], method="generated"
        )
    )
    return SampleRecord(sample=sample, response=Response(endpoint="x", text="1"), logprobs=other or lp)


def test_means_per_cell_by_hand() -> None:
    records = [
        record(0, [-0.5, -0.25], [True, False]),
        record(0, [-2.0], [False]),
        record(100, [0.0], [True]),
        record(100, None),
        record(0, None, other="unavailable"),
    ]
    cells = answer_probabilities(records)
    (n0, p0, t0), (n100, p100, t100) = (cells[k] for k in sorted(cells, key=lambda k: k[-1]))
    assert (n0, n100) == (2, 1)
    assert math.isclose(p0, (math.exp(-0.75) + math.exp(-2.0)) / 2) and math.isclose(t0, (0.5 + 0.0) / 2)
    assert p100 == 1.0 and t100 == 1.0
    text = render_answer_probabilities(records)
    assert f"p_ans {p0:.3f}  top1 {t0:.2f}  (n=2)" in text and "depth 100%: p_ans 1.000  top1 1.00  (n=1)" in text
    named = [r.sample.sample_id for r in records[3:]]
    assert f"(2 answered samples without them: {named[0]} (not measured); {named[1]} (the engine gives none)" in text


def test_nothing_without_logprobs_and_a_line_when_unavailable() -> None:
    assert render_answer_probabilities([record(0, None)]) == ""
    assert "unavailable" in render_answer_probabilities([record(0, None, other="unavailable")])
