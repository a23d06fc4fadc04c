"""A run keeps RULER's `string_match_all` beside ctxprobe's exact score for every sample in RULER's layout:
on the aggregation task, naming every word of the list is full marks for RULER and a miss for ctxprobe's
exact set only when a word is missing; a number inside a longer one counts for RULER alone."""

from __future__ import annotations

from ctxprobe.evals.run.send.loop import record_of
from ctxprobe.evals.scoring.ruler_score import SUBSTRING
from ctxprobe.runners.response import Response
from ctxprobe.tasks.build import builder_for, token_counter


def sample(family: str, params: dict[str, object], haystack: str = "noise:ruler"):  # type: ignore[no-untyped-def]
    builder = builder_for(token_counter("estimate"))
    return builder.build(builder.recipe(family=family, params=params, haystack=haystack, context_tokens=2048, seed=1))


def reply(text: str) -> Response:
    return Response(endpoint="http://127.0.0.1:1", text=text, finish_reason="stop", completion_tokens=8)


def test_a_ruler_layout_sample_keeps_rulers_substring_score_beside_the_exact_one() -> None:
    s = sample("niah", {"template": "ruler"})
    answer = s.expected.answers[0]
    trap = record_of(s, reply(f" 1{answer}."), None, None, 1)
    assert trap.reference_scores == {SUBSTRING: 1.0} and trap.score is not None and not trap.score.correct
    right = record_of(s, reply(f" {answer}."), None, None, 1)
    assert right.reference_scores == {SUBSTRING: 1.0} and right.score is not None and right.score.correct


def test_the_aggregation_task_scores_rulers_recall_and_ctxprobes_exact_set() -> None:
    s = sample("aggregate", {"kind": "common_words", "template": "ruler"})
    words = s.expected.answers
    seven = record_of(s, reply(" " + " ".join(f"{i + 1}. {w}" for i, w in enumerate(words[:7]))), None, None, 1)
    assert seven.reference_scores[SUBSTRING] == 7 / 10  # RULER's fraction, by hand
    assert seven.score is not None and not seven.score.correct and seven.score.partial == 7 / 10


def test_a_ctxprobe_layout_sample_has_no_ruler_score() -> None:
    s = sample("niah", {"template": "ctxprobe"})
    assert record_of(s, reply(" " + s.expected.answers[0]), None, None, 1).reference_scores == {}
