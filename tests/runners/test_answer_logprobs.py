"""The teacher-forced path (runners/answer_logprobs.py) against a scripted engine: which requests it sends
for an answer that diverges at position j, what it reads from each, and the boundary merge."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest

from ctxprobe.runners.answer_logprobs import Unmeasurable, from_generated, gold_ids, measure
from ctxprobe.runners.response import GeneratedToken, Response, TokenLogprob

VOCAB = 50


def dist(context: tuple[int, ...]) -> dict[int, float]:
    """A fixed next-token distribution of any context (a toy model): logprobs over VOCAB tokens."""
    weights = [((hash(context) * 31 + t * 17) % 97) + 1.0 for t in range(VOCAB)]
    if context and context[-1] == 7:  # after 7, token 8 is by far likeliest (greedy follows the gold)
        weights[8] = 5000.0
    total = sum(weights)
    return {t: math.log(w / total) for t, w in enumerate(weights)}


def token(t: int, context: tuple[int, ...], k: int) -> GeneratedToken:
    d = dist(context)
    top = sorted(d, key=lambda i: -d[i])[:k]
    return GeneratedToken(
        token=f"t{t}", id=t, logprob=d[t], top=[TokenLogprob(token=f"t{i}", id=i, logprob=d[i]) for i in top]
    )


def greedy(context: tuple[int, ...], n: int, k: int) -> list[GeneratedToken]:
    out = []
    for _ in range(n):
        d = dist(context)
        best = max(d, key=lambda i: d[i])
        out.append(token(best, context, k))
        context = (*context, best)
    return out


class Scripted:
    """Answers next_token from the toy model and keeps each request."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.sent: list[dict[str, Any]] = []

    async def next_token(
        self,
        prompt_ids: list[int],
        *,
        force: int | None,
        top: int,
        planned_tokens: int,
        seed: int,
        max_tokens: int = 1,
        affinity: int | None = None,
        extra_body: Any = None,
        chain: str | None = None,
    ) -> Response:
        self.sent.append(
            {
                "prompt": list(prompt_ids),
                "force": force,
                "max_tokens": max_tokens,
                "affinity": affinity,
                "extra_body": extra_body,
                "chain": chain,
            }
        )
        context = tuple(prompt_ids)
        tokens = [token(force, context, self.k)] if force is not None else greedy(context, max_tokens, self.k)
        return Response(endpoint="scripted", text="x", prompt_tokens=len(prompt_ids), generated=tokens)


def teacher_forced(context: list[int], gold: list[int]) -> list[float]:
    """The independent computation: log P(gold_j | context + gold[:j]) straight from the toy model."""
    return [dist(tuple(context + gold[:j]))[g] for j, g in enumerate(gold)]


def test_greedy_equal_to_gold_costs_nothing() -> None:
    context = [1, 2, 3]
    answer = greedy(tuple(context), 4, 5)
    gold = [t.id for t in answer]
    engine = Scripted(5)
    found = asyncio.run(measure(engine, context, gold, "g", answer, top=5, seed=0))
    assert engine.sent == []
    assert found.method == "generated" and found.first_divergence is None and found.top1_agreement == 1.0
    assert found.logprobs == pytest.approx(teacher_forced(context, gold))
    assert found.extra_requests == 0 and found.extra_prompt_tokens == 0


def test_divergence_at_j_sends_one_continuation_from_the_gold_path() -> None:
    """The answer follows the gold for 2 tokens, then writes another; gold then goes 7, 8 (greedy follows
    8 after 7): one continuation request from context + gold[:3] reads the rest."""
    context = [4, 5]
    answer = greedy(tuple(context), 2, 50)  # top-k = whole vocab: the gold's logprob at j is in it
    d = dist(tuple(context + [t.id for t in answer]))
    other = sorted(d, key=lambda i: -d[i])[3]  # a token greedy does not pick
    gold = [t.id for t in answer] + [other, 7, 8]
    assert answer[1].id is not None
    generated = answer + greedy(tuple(context + [t.id for t in answer]), 3, 50)
    engine = Scripted(50)
    found = asyncio.run(
        measure(engine, context, gold, "g", generated, top=50, seed=0, affinity=1, chain="0123456789abcdef")
    )
    assert found.first_divergence == 2
    assert found.greedy[:2] == [True, True] and found.greedy[2] is False
    assert found.logprobs == pytest.approx(teacher_forced(context, gold))
    assert engine.sent[0]["prompt"] == context + gold[:3] and engine.sent[0]["force"] is None
    assert all(
        s["affinity"] == 1 and s["chain"] == "0123456789abcdef" for s in engine.sent
    )  # the answer's replica and chain
    assert found.extra_requests == len(engine.sent)
    assert found.extra_prompt_tokens == sum(len(s["prompt"]) for s in engine.sent)
    assert [len(t) for t in found.top] == [50] * 5


def test_gold_outside_the_top_k_is_forced_and_read_unbiased() -> None:
    context = [9]
    k = 3
    d = dist(tuple(context))
    worst = min(d, key=lambda i: d[i])
    gold = [worst, 7, 8]
    answer = greedy(tuple(context), 3, k)
    engine = Scripted(k)
    found = asyncio.run(measure(engine, context, gold, "g", answer, top=k, seed=0))
    assert engine.sent[0] == {
        "prompt": context,
        "force": worst,
        "max_tokens": 1,
        "affinity": None,
        "extra_body": None,
        "chain": None,
    }
    assert found.method == "forced"  # the answer request knew nothing of position 0's gold
    assert found.logprobs == pytest.approx(teacher_forced(context, gold))
    assert found.greedy[0] is False and found.first_divergence == 0
    assert [t.id for t in found.top[0]] == sorted(d, key=lambda i: -d[i])[:k]


def test_every_position_forced_matches_the_independent_computation() -> None:
    context = [11, 12]
    gold = [3, 30, 21, 7, 8, 44]
    engine = Scripted(2)
    found = asyncio.run(measure(engine, context, gold, "g", None, top=2, seed=0))
    assert found.logprobs == pytest.approx(teacher_forced(context, gold))
    assert found.tokens == len(gold) and found.token_ids == gold
    assert found.p_answer == pytest.approx(math.exp(sum(teacher_forced(context, gold))))


def test_a_token_boundary_merge_is_unmeasurable() -> None:
    assert gold_ids([1, 2, 3], [1, 2, 3, 4, 5]) == [4, 5]
    with pytest.raises(Unmeasurable, match="merges"):
        gold_ids([1, 2, 3], [1, 2, 9, 5])  # the prompt's last token became another
    with pytest.raises(Unmeasurable):
        gold_ids([1, 2, 3], [1, 2, 3])  # nothing past the prompt


def test_an_engine_that_ignores_the_bias_is_unmeasurable() -> None:
    class Unforced(Scripted):
        async def next_token(self, prompt_ids: list[int], **kw: Any) -> Response:
            kw["force"] = None
            kw["max_tokens"] = 1
            return await super().next_token(prompt_ids, **kw)

    context = [9]
    d = dist(tuple(context))
    gold = [min(d, key=lambda i: d[i])]
    with pytest.raises(Unmeasurable, match="did not force"):
        asyncio.run(measure(Unforced(3), context, gold, "g", None, top=3, seed=0))


def test_generated_tokens_without_ids_read_nothing() -> None:
    known, outside = from_generated([5], [GeneratedToken(token="x", logprob=-1.0)], 5)
    assert known == [None] and outside is None
