"""Tricks on the kinds scored by a dataset's published rule on a fixed format: GraphWalks' `nodes` (the last line
holds `Final Answer: [a, b]`; in completions mode the prompt ends with `Final Answer: [`) and MRCR's `mrcr` (the
response reproduces the asked message, its hash first)."""

from __future__ import annotations

from ctxprobe.tasks.sample import Sample
from tests.evals.adversary.tricks import Trick


def _nodes(s: Sample, nodes: list[str], after: str = "") -> str:
    """A GraphWalks answer listing `nodes`: in completions mode the rest of the prompt's `Final Answer: [`."""
    inside = ", ".join(nodes)
    return f"{inside}]{after}" if s.recipe.mode == "completions" else f"Final Answer: [{inside}]{after}"


def _other_node(s: Sample) -> str:
    return "".join("0123456789abcdef"[(int(c, 16) + 1) % 16] for c in s.expected.answers[0])


def _other_message(s: Sample) -> str:
    return next(n.answer for n in s.needles if n.answer not in s.expected.answers[0])


NODES = [
    Trick("the exact list", "honest", lambda s: _nodes(s, s.expected.answers), True),
    Trick(
        "the list, reasoning before it",
        "honest",
        lambda s: ("" if s.recipe.mode == "completions" else "I walked the graph.\n") + _nodes(s, s.expected.answers),
        True,
    ),
    Trick("the list plus one node", "listing", lambda s: _nodes(s, [*s.expected.answers, _other_node(s)]), False),
    Trick(
        "the list, then one node after the bracket",
        "listing",
        lambda s: _nodes(s, s.expected.answers, f", {_other_node(s)}"),
        False,
    ),
    Trick("the list (just kidding)", "polarity", lambda s: _nodes(s, s.expected.answers, " (just kidding)"), False),
    Trick("the list is wrong", "polarity", lambda s: _nodes(s, s.expected.answers, " is wrong."), False),
    Trick(
        "the list, then 'Or maybe' another in a second paragraph",
        "layout",
        lambda s: (
            ""
            if s.recipe.mode == "completions"
            else _nodes(s, s.expected.answers) + f"\n\nOr maybe {_nodes(s, [*s.expected.answers, _other_node(s)])}"
        ),
        False,
    ),
]

MRCR = [
    Trick("the exact message", "honest", lambda s: " " + s.expected.answers[0], True),
    Trick(
        "reasoning, then the message",
        "honest",
        lambda s: "" if s.recipe.mode == "completions" else f"<think>The second one.</think>{s.expected.answers[0]}",
        True,
    ),
    Trick(
        "the message, then a reasoning block",
        "layout",
        lambda s: f" {s.expected.answers[0]}<think>{_other_message(s)}</think>",
        False,
    ),
    Trick("the message (just kidding)", "polarity", lambda s: f" {s.expected.answers[0]} (just kidding)", False),
    Trick(
        "the message, then 'Or maybe' another in a second paragraph",
        "layout",
        lambda s: (
            ""
            if s.recipe.mode == "completions"
            else f"{s.expected.answers[0]}\n\nOr maybe {s.expected.answers[1]}{_other_message(s)}"
        ),
        False,
    ),
]
