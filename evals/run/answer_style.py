"""How a model answers, asked with one or two short requests: whether chat mode fits it at all, and on a
short needle prompt how many tokens it writes before the value, whether it reasons, and the answer budget
that fits it.

`ctxprobe doctor` shows both; `ctxprobe run` asks the chat question once before a chat-mode run, because a
base model served without a chat template (llama-server falls back to ChatML) continues the template as
text and would score 0 without a word."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ctxprobe.evals.scoring.score import score_sample
from ctxprobe.runners.endpoint import EndpointClient, EndpointError
from ctxprobe.runners.response import ErrorKind
from ctxprobe.tasks.answers.region import answer_region
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.sample import Mode
from ctxprobe.tasks.token_counter import TokenCounter

CHAT_WORD = "ready"
CHAT_PROBE = f"Reply with the single word: {CHAT_WORD}."
STYLE_LENGTH = 512  # tokens of the needle prompt the answer style is measured on
# room for the answer to finish: a base model continues to the limit, so completions get less than chat,
# where a chatty or reasoning answer may run long
STYLE_MAX_TOKENS = {"completions": 64, "chat": 256}
Status = Literal["ok", "missing", "failed", "n/a"]


@dataclass(frozen=True)
class ChatFit:
    """Whether the model follows a chat request: `ok`, `missing` (it answered, but not what it was asked:
    a base model, or no chat template), `failed` (the endpoint refused the chat request, HTTP 4xx) or
    `n/a` (no answer to judge: a timeout, a server or connection error)."""

    status: Status
    found: str
    reasoning: bool = False


async def chat_fit(client: EndpointClient) -> ChatFit:
    """One chat request asking for a single word; an instruction-following model says it."""
    try:
        reply = await client.send(CHAT_PROBE, max_tokens=64, planned_tokens=50, seed=0)
    except EndpointError as exc:
        refused = exc.kind is ErrorKind.http_error and exc.detail.startswith("HTTP 4")
        return ChatFit("failed" if refused else "n/a", f"{exc.kind.value}: {exc.detail}"[:300])
    reasons = bool(reply.reasoning)
    said = reply.text.strip()[:60]
    low = said.lower()
    echoed = "reply with" in low or "<|im_" in low  # a base model continues the template's text
    if CHAT_WORD not in low or echoed:
        return ChatFit(
            "missing",
            f"chat answered {said!r}, not the word it was asked for ({'with' if reasons else 'no'} reasoning text)",
            reasons,
        )
    return ChatFit(
        "ok", f"chat works ({'with a reasoning field' if reasons else 'no reasoning text'}); answered {said!r}", reasons
    )


@dataclass(frozen=True)
class AnswerStyle:
    """How the model answered one short needle prompt in one mode."""

    mode: Mode
    correct: bool
    tokens_before_answer: int | None  # None when the answer was not found
    completion_tokens: int | None
    reasons: bool
    reasoning_tokens: int | None
    family_budget: int  # the niah budget of this mode (the family's; chat adds a sentence's worth)
    recommended_answer_tokens: int
    text: str


def recommend(tokens_through_answer: int | None, family_budget: int) -> int:
    """An answer budget with room to spare: twice the tokens through the end of the answer, in steps of 16,
    never below the mode's own budget."""
    if tokens_through_answer is None:
        return family_budget
    return max(family_budget, -(-2 * tokens_through_answer // 16) * 16)


async def answer_style(client: EndpointClient, mode: Mode, counter: TokenCounter) -> AnswerStyle:
    """Send one short niah prompt in `mode` with a generous budget and read how the model answered."""
    from ctxprobe.tasks.build import builder_for

    builder = builder_for(counter)
    sample = builder.build(builder.recipe(family="niah", context_tokens=STYLE_LENGTH, depth=50.0, mode=mode))
    budget = sample.max_tokens
    reply = await client.send(
        sample.prompt, max_tokens=STYLE_MAX_TOKENS[mode], planned_tokens=sample.planned_tokens, seed=0
    )
    score = score_sample(sample, reply.text)
    value = sample.expected.answers[0]
    region = answer_region(sample, reply.text)
    at = reply.text.find(value) if score.correct else -1
    before = _count(counter, reply.text[:at]) if at >= 0 else None
    through = before + _count(counter, value) if before is not None else None
    reasoning_tokens = reply.reasoning_tokens
    if reply.reasoning and reasoning_tokens is None:
        reasoning_tokens = _count(counter, reply.reasoning)
    return AnswerStyle(
        mode=mode,
        correct=score.correct,
        tokens_before_answer=before,
        completion_tokens=reply.completion_tokens,
        reasons=bool(reply.reasoning),
        reasoning_tokens=reasoning_tokens,
        family_budget=budget,
        recommended_answer_tokens=recommend(through, budget),
        text=(region.text or reply.text)[:120],
    )


def _count(counter: TokenCounter, text: str) -> int:
    if not text:
        return 0
    try:
        return counter.count_many([text])[0]
    except UserError:
        return -(-len(text) // 4)
