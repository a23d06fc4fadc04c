"""Scoring a `nodes` answer (the graphwalk family) by GraphWalks' published rule.

GraphWalks reads the very last line of the response; it must hold `Final Answer: [a, b, ...]`, else the
answer is a format error and scores 0. The items inside the brackets, split at commas and stripped, are the
answered set; partial credit is its F1 against the true set, and correct is the exact set (nothing missing,
nothing offered beside it). Two deliberate differences from the README's code: the items are the ones inside
the brackets (the README's `strip("[]")` on the whole match leaves `Final Answer: [` on the first item, which
no id can equal), and an empty answer to an empty set is F1 1 (the README's formula gives 0 to a correct
empty answer). Trailing blank lines are not the last line. In completions mode the answer prefix (`Final
Answer: [`) is in the prompt: the model's first line continues it."""

from __future__ import annotations

import re

from ctxprobe.evals.scoring.extract import strip_reasoning
from ctxprobe.evals.records.record import Score
from ctxprobe.tasks.sample import Sample

_FINAL = re.compile(r"Final Answer: ?\[(.*)\]")


def final_answer(text: str) -> list[str] | None:
    """The node list on the response's last line, or None when that line holds no `Final Answer: [...]`."""
    lines = text.rstrip().split("\n")
    match = _FINAL.search(lines[-1]) if "Final Answer:" in lines[-1] else None
    if match is None:
        return None
    return [item.strip() for item in match.group(1).split(",") if item.strip()]


def set_f1(answered: set[str], truth: set[str]) -> float:
    """F1 of an answered set against the true one (1.0 when both are empty)."""
    if not answered and not truth:
        return 1.0
    overlap = len(answered & truth)
    if overlap == 0:
        return 0.0
    precision, recall = overlap / len(answered), overlap / len(truth)
    return 2 * precision * recall / (precision + recall)


def score_nodes(sample: Sample, text: str) -> Score:
    """The published rule on a model's raw output (see the module's docstring)."""
    body = strip_reasoning(text)
    if sample.recipe.mode == "completions" and sample.answer_prefix:
        body = sample.answer_prefix + body.lstrip(" ").split("\n", 1)[0]
    nodes = final_answer(body)
    if nodes is None:  # a format error scores 0; what it listed is extracted (a long wrong list is wrong, not cut off)
        listed = body.rstrip().split("\n")[-1].partition("Final Answer:")[2].strip(" [")
        return Score(extracted=[n.strip() for n in listed.split(",") if n.strip()], correct=False, partial=0.0)
    answered, truth = set(nodes), set(sample.expected.answers)
    return Score(extracted=list(dict.fromkeys(nodes)), correct=answered == truth, partial=set_f1(answered, truth))
