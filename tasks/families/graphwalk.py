"""`graphwalk`: GraphWalks-style graph traversal over an edge list that fills the whole context.

A random directed graph over 10-hex-digit node ids (GraphWalks' id shape) is written as its edge list, one
`u -> v` a line in a shuffled order, and the operation asks for a set of nodes:

- `query: bfs`: the nodes whose shortest distance from a start node is exactly `depth` (the start left out);
- `query: parents`: the nodes with an edge into a given node.

The number of edges is the largest that fits the length (`tasks/sized.py`); the recipe's seed fixes the
graph. Out-degrees average 2, and the start of a BFS has a chain of `depth` edges into nodes that nothing
else points at, so its answer is never empty. The answer is scored as a node set (`nodes`): GraphWalks'
F1 as partial credit, the exact set as correct (`score_nodes`, at the end of this module).

`dataset: hf:PATH` reads OpenAI's published GraphWalks parquet instead (columns `prompt`, `answer_nodes`,
`problem_type`, ...): a sample is a published row of the `query` type, its prompt as published (a user
message; completions mode adds the answer prefix), the longest that fits the length, a seed moving a few
rows shorter. Published rows come in fixed lengths, so their prompts are not of the exact length."""

from __future__ import annotations

import random
import re
from collections import deque
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ctxprobe.tasks.answers.kinds import answer_kind
from ctxprobe.tasks.answers.region import AnswerRegion, strip_reasoning
from ctxprobe.tasks.answers.verdict import Score
from ctxprobe.tasks.families.dataset_digest import digest_field
from ctxprobe.tasks.families.framing import frame
from ctxprobe.tasks.families.published_rows import load_rows, row_at, some_rows
from ctxprobe.tasks.families.vocab import make_value
from ctxprobe.tasks.registry import Draft, task_family
from ctxprobe.tasks.sample import Expected, Mode, Sample
from ctxprobe.tasks.sized import Sized

INSTRUCTIONS = (
    "You will be given a graph as a list of directed edges. All nodes are at least degree 1. You will also get a "
    "description of an operation to perform on the graph.\nYour job is to execute the operation on the graph and "
    "return the set of nodes that the operation results in. If asked for a breadth-first search (BFS), only return "
    "the nodes whose shortest distance from the starting node is exactly the given depth, do not return the "
    "starting node. If asked for the parents of a node, only return the nodes that have an edge leading to the "
    "given node, do not return the given node itself.\nReturn your final answer as a list of nodes in the very "
    'last line of your output, like "Final Answer: [node1, node2, node3]"; for the empty set, "Final Answer: []".'
)
EXAMPLE = (
    "\n\nExample:\nThe graph has the following edges:\nuvwx -> alke\nabcd -> uvwx\nabcd -> efgh\nefgh -> uvwx\n"
    "Operation:\nPerform a BFS from node abcd with depth 1.\nFinal Answer: [uvwx, efgh]"
)
EDGES_HEAD = "\n\nHere is the graph to operate on:\nThe graph has the following edges:\n"
PREFIX = "Final Answer: ["
ID_KIND = "hex10"
OUT_DEGREE = 2  # edges per node on average
TOKENS_PER_NODE = 8  # a node id and its separator in the answer, with room to spare
DATASET_COLUMNS = ("prompt", "answer_nodes", "problem_type")


class GraphwalkParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    query: Literal["bfs", "parents"] = Field(
        "bfs",
        description="bfs (the nodes at exactly `depth` from a start) or parents (the nodes with an edge into a node)",
    )
    depth: int = Field(2, ge=1, le=8, description="bfs: the distance from the start node")
    dataset: str | None = Field(
        None, description="hf:PATH: OpenAI's GraphWalks parquet, kept locally, instead of generated graphs"
    )
    dataset_sha256: str | None = digest_field()

    @model_validator(mode="after")
    def _published_asks_last(self) -> GraphwalkParams:
        if self.dataset and getattr(self, "question_position", "end") != "end":  # added at registration
            raise ValueError("a published GraphWalks prompt asks at its end: question_position is end")
        return self


def bfs_at_depth(edges: list[tuple[str, str]], start: str, depth: int) -> list[str]:
    """The nodes whose shortest distance from `start` is exactly `depth`, sorted."""
    out: dict[str, list[str]] = {}
    for u, v in edges:
        out.setdefault(u, []).append(v)
    distance = {start: 0}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if distance[node] == depth:
            continue
        for nxt in out.get(node, []):
            if nxt not in distance:
                distance[nxt] = distance[node] + 1
                queue.append(nxt)
    return sorted(n for n, d in distance.items() if d == depth)


def parents_of(edges: list[tuple[str, str]], node: str) -> list[str]:
    return sorted({u for u, v in edges if v == node})


def random_graph(rng: random.Random, size: int, depth: int) -> tuple[list[tuple[str, str]], str, list[str]]:
    """`max(size, depth)` distinct edges over about `size / OUT_DEGREE` nodes, shuffled; a start node and the
    chain of `depth` nodes from it that no other edge points at (so the start has a node at every depth)."""
    total = max(size, depth)
    ids: set[str] = set()
    nodes = [make_value(ID_KIND, rng, ids) for _ in range(max(depth + 2, total // OUT_DEGREE + 1))]
    start, chain = nodes[0], nodes[1 : depth + 1]
    edges = list(zip([start, *chain[:-1]], chain))
    taken = set(edges)
    targets = [n for n in nodes if n not in set(chain)]
    while len(edges) < total:
        edge = (rng.choice(nodes), rng.choice(targets))
        if edge[0] != edge[1] and edge not in taken:
            taken.add(edge)
            edges.append(edge)
    rng.shuffle(edges)
    return edges, start, chain


@task_family("graphwalk", version="1")
class Graphwalk(Sized):
    Params = GraphwalkParams

    def max_size(self, params: BaseModel, length: int) -> int:
        p = GraphwalkParams.model_validate(params)
        return len(_published(p)) if p.dataset else max(1, length // 4)

    def sized_draft(self, params: BaseModel, mode: Mode, rng: random.Random, length: int, size: int) -> Draft:
        p = GraphwalkParams.model_validate(params)
        if p.dataset:
            return _published_draft(p, mode, rng, size)
        edges, start, chain = random_graph(rng, size, p.depth if p.query == "bfs" else 1)
        if p.query == "bfs":
            answers = bfs_at_depth(edges, start, p.depth)
            question = f"Operation:\nPerform a BFS from node {start} with depth {p.depth}."
        else:
            pointed = sorted({v for _, v in edges} - set(chain))
            node = pointed[rng.randrange(len(pointed))] if pointed else chain[0]
            answers = parents_of(edges, node)
            question = f"Operation:\nFind the parents of node {node}."
        head = INSTRUCTIONS + EXAMPLE + EDGES_HEAD + "\n".join(f"{u} -> {v}" for u, v in edges)
        return frame(
            head,
            question,
            PREFIX,
            mode,
            (),
            Expected(kind="nodes", answers=answers),
            max_tokens=answer_tokens(answers),
            document_start=len(INSTRUCTIONS),
        )


def answer_tokens(answers: list[str]) -> int:
    return min(4096, 16 + TOKENS_PER_NODE * len(answers))


def _published(p: GraphwalkParams) -> list[dict[str, Any]]:
    """The published rows of the query's type, shortest first."""
    assert p.dataset is not None
    rows = [
        r for r in load_rows(p.dataset, "GraphWalks", DATASET_COLUMNS, p.dataset_sha256) if r["problem_type"] == p.query
    ]
    return some_rows(rows, p.dataset, f"problem_type {p.query}")


def _published_draft(p: GraphwalkParams, mode: Mode, rng: random.Random, size: int) -> Draft:
    """Row `size - 1 - offset` of the shortest-first rows, `offset` drawn from the seed: the builder's search
    for the largest fitting size finds the row `offset` places below the longest that fits."""
    row = row_at(_published(p), size, rng)
    answers = [str(n) for n in row["answer_nodes"]]
    tail, prefix = ("\n\n" + PREFIX, PREFIX) if mode == "completions" else ("", "")
    return Draft(
        head=str(row["prompt"]),
        tail=tail,
        question="",
        answer_prefix=prefix,
        needles=(),
        expected=Expected(kind="nodes", answers=answers),
        max_tokens=answer_tokens(answers),
    )


_FINAL = re.compile(r"Final Answer: ?\[(.*)\]")


def final_answer(text: str) -> list[str] | None:
    """The node list on the response's last line, or None when that line holds no `Final Answer: [...]`, or
    offers more after its closing bracket ("[a, b], c": a node outside the list is still offered)."""
    lines = text.rstrip().split("\n")
    match = _FINAL.search(lines[-1]) if "Final Answer:" in lines[-1] else None
    if match is None or re.search(r"\w", lines[-1][match.end() :]):
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
    """The published rule on a model's raw output (see `_nodes`)."""
    body = strip_reasoning(text)
    if sample.recipe.mode == "completions" and sample.answer_prefix:
        body = sample.answer_prefix + body.lstrip(" ").split("\n", 1)[0]
    nodes = final_answer(body)
    if nodes is None:  # a format error scores 0; what it listed is extracted (a long wrong list is wrong, not cut off)
        listed = body.rstrip().split("\n")[-1].partition("Final Answer:")[2].strip(" [")
        return Score(
            extracted=[n.strip() for n in listed.split(",") if n.strip()], correct=False, partial=0.0, unit=UNIT
        )
    answered, truth = set(nodes), set(sample.expected.answers)
    return Score(
        extracted=list(dict.fromkeys(nodes)), correct=answered == truth, partial=set_f1(answered, truth), unit=UNIT
    )


UNIT = "last line"  # the answer slot GraphWalks reads (the record states it)


@answer_kind("nodes")
def _nodes(region: AnswerRegion, sample: Sample) -> Score:
    """A `nodes` answer by GraphWalks' published rule, read from the whole output (not the answer region).

    GraphWalks reads the very last line of the response; it must hold `Final Answer: [a, b, ...]`, else the answer
    is a format error and scores 0. The items inside the brackets, split at commas and stripped, are the answered
    set; partial credit is its F1 against the true set, and correct is the exact set (nothing missing, nothing
    offered beside it). Two deliberate differences from the README's code: the items are the ones inside the
    brackets (the README's `strip("[]")` on the whole match leaves `Final Answer: [` on the first item, which no id
    can equal), and an empty answer to an empty set is F1 1 (the README's formula gives 0 to a correct empty
    answer). Trailing blank lines are not the last line. In completions mode the answer prefix (`Final Answer: [`)
    is in the prompt: the model's first line continues it."""
    return score_nodes(sample, region.output)
