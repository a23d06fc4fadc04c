"""The gold answer's teacher-forced log-probabilities: log P(gold_j | prompt, gold[:j]) at every gold position,
with the top-k alternatives there, at the least cost an engine that reports only generated tokens allows.

The answer request itself (greedy, temperature 0) asks for logprobs. While its greedy tokens equal the gold
tokens, each position's context is prompt + gold[:j] already, so their logprobs and top-k come for free. At the
first position where greedy decoding leaves the gold path, the gold token's logprob is read from that
position's top-k if it is there. Past it, one extra request on the token ids prompt + gold[:j+1] continues
greedily and gives every position while it follows the gold again (a model that wrote `:` before the number
writes the number once it is given the space); a gold token outside the top-k takes one request forced to it by
`logit_bias`. llama-server and vLLM (its default `raw_logprobs` mode) report the forced token's unbiased logprob
and the unbiased top-k, and serve the prompt from their prefix cache (the requests go to the replica that
answered), so each costs a few decode steps, not a prefill (docs/ENGINES.md, "Log-probabilities").

Positions stay aligned with the gold tokens whichever way each was read, so two runs of the same prompts
compare position by position. `top` keeps the k likeliest alternatives at each position (vLLM adds the sampled
token to its top-k; it is left out unless it is among them)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, Protocol

from ctxprobe.runners.response import AnswerLogprobs, GeneratedToken, Response, TokenLogprob


class Unmeasurable(Exception):
    """The gold's log-probabilities cannot be read for this sample; the message says why (one line)."""


class NextToken(Protocol):
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
        extra_body: Mapping[str, Any] | None = None,
        chain: str | None = None,
    ) -> Response: ...


class Position(NamedTuple):
    logprob: float
    top: list[TokenLogprob]
    greedy: bool


def gold_ids(context: Sequence[int], full: Sequence[int]) -> list[int]:
    """The gold's token ids: the tokens of prompt + gold past the prompt's own. The prompt's tokens must be
    a prefix of them: where the gold's first characters merge with the prompt's last token, no split gives
    log P(gold | prompt), and the sample is unmeasurable rather than given a wrong number."""
    if len(full) <= len(context) or list(full[: len(context)]) != list(context):
        cut = next((i for i, (a, b) in enumerate(zip(context, full)) if a != b), min(len(context), len(full)))
        raise Unmeasurable(
            f"the gold text merges with the prompt's last tokens (the tokens differ from position "
            f"{cut} of {len(context)}): no token boundary between prompt and gold"
        )
    return list(full[len(context) :])


def from_generated(
    gold: Sequence[int], generated: Sequence[GeneratedToken], top: int
) -> tuple[list[Position | None], int | None]:
    """What a greedy continuation's tokens say of each gold position: known while greedy equals gold, and at
    the first divergence where the gold token is in the top-k there; None where a request must ask. Also
    the position where the gold token was seen outside the top-k (a forced request must read it), if any."""
    known: list[Position | None] = []
    outside: int | None = None
    for j, want in enumerate(gold):
        if j >= len(generated) or generated[j].id is None:
            break
        token = generated[j]
        alternatives = _top(token.top, top)
        if token.id == want:
            known.append(Position(token.logprob, alternatives, True))
            continue
        gold_there = next((t for t in token.top if t.id == want), None)
        if gold_there is None:
            outside = j
            break
        known.append(Position(gold_there.logprob, alternatives, False))
        break
    return known + [None] * (len(gold) - len(known)), outside


def _top(candidates: Sequence[TokenLogprob], k: int) -> list[TokenLogprob]:
    return sorted(candidates, key=lambda t: -t.logprob)[:k]


def forced_position(response: Response, want: int, top: int) -> Position:
    """The position a forced one-token request read: the forced token's logprob and the top-k there."""
    generated = response.generated or []
    if not generated:
        raise Unmeasurable("a one-token request came back without logprobs")
    token = generated[0]
    if token.id is None:
        raise Unmeasurable("the engine gave the forced token's logprob without its id")
    if token.id != want:
        raise Unmeasurable(f"the engine did not force the gold token {want} with logit_bias (it gave {token.id})")
    alternatives = _top(token.top, top)  # vLLM's list adds the forced token: the lowest, when outside the top-k
    greedy = bool(alternatives) and alternatives[0].id == want
    return Position(token.logprob, alternatives, greedy)


async def measure(
    engine: NextToken,
    context: list[int],
    gold: list[int],
    gold_text: str,
    generated: Sequence[GeneratedToken] | None,
    *,
    top: int,
    seed: int,
    affinity: int | None = None,
    extra_body: Mapping[str, Any] | None = None,
    chain: str | None = None,
) -> AnswerLogprobs:
    """The gold's logprobs after `context` (the prompt's token ids as the engine reads them): from the
    answer request's `generated` tokens where they follow the gold; past a divergence, a greedy continuation
    of prompt + gold[:j] reads the positions it follows the gold on (often the rest of the answer: a model
    that wrote `:` before the number writes the number once given it), and a forced one-token request reads a
    gold token outside the top-k. Requests go in gold order, each extending a prompt the prefix cache holds,
    to the replica that answered (`affinity`) with the sample's `chain` (its session header, its replica).
    Raises `Unmeasurable` for an answer the engine's replies cannot give; an `EndpointError` goes to the caller."""
    if not gold:
        raise Unmeasurable("the gold text has no tokens")
    nothing_known: list[Position | None] = [None] * len(gold)
    known, outside = from_generated(gold, generated, top) if generated else (nothing_known, None)
    method = "generated" if known[0] is not None else "forced"
    requests = prompt_tokens = 0
    while (j := next((i for i, p in enumerate(known) if p is None), None)) is not None:
        prompt = context + gold[:j]
        if outside != j:  # greedy from here: free positions while it follows the gold
            reply = await engine.next_token(
                prompt,
                force=None,
                max_tokens=len(gold) - j,
                top=top,
                planned_tokens=len(prompt),
                seed=seed,
                affinity=affinity,
                extra_body=extra_body,
                chain=chain,
            )
            requests += 1
            prompt_tokens += reply.prompt_tokens if reply.prompt_tokens is not None else len(prompt)
            found, seen_outside = from_generated(gold[j:], reply.generated or [], top)
            known[j:] = found
            outside = None if seen_outside is None else j + seen_outside
            if known[j] is not None:
                continue
            if outside != j:
                raise Unmeasurable("a continuation request came back without token ids or logprobs")
        reply = await engine.next_token(
            prompt,
            force=gold[j],
            top=top,
            planned_tokens=len(prompt),
            seed=seed,
            affinity=affinity,
            extra_body=extra_body,
            chain=chain,
        )
        requests += 1
        prompt_tokens += reply.prompt_tokens if reply.prompt_tokens is not None else len(prompt)
        known[j] = forced_position(reply, gold[j], top)
        outside = None
    positions = [p for p in known if p is not None]
    greedy = [p.greedy for p in positions]
    return AnswerLogprobs(
        gold=gold_text,
        token_ids=gold,
        logprobs=[p.logprob for p in positions],
        top=[p.top for p in positions],
        greedy=greedy,
        first_divergence=next((j for j, g in enumerate(greedy) if not g), None),
        method=method,
        extra_requests=requests,
        extra_prompt_tokens=prompt_tokens,
    )
