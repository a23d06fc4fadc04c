"""What a run checks once before it sends a sample: that chat mode fits the model, whether the model
reasons, and so the budgets every sample gets.

A base model served in chat mode (llama-server falls back to ChatML when the GGUF has no chat template,
and Gemma continues it as text) scores 0 without a word; the doctor's chat check catches it with one
short request. The run refuses with the fix (`--mode completions`), unless chat mode was asked for
explicitly (`--mode chat`, or the suite's or a task's `mode: chat`), when it warns and goes on. The same reply says whether the model reasons
(a reasoning field or `<think>`): a reasoning model gets a reasoning budget on top of its answer budget."""

from __future__ import annotations

import asyncio
import sys

from ctxprobe.evals.run.answer_style import ChatFit, chat_fit
from ctxprobe.evals.run.plan import Budgets
from ctxprobe.evals.run.send.answer_budget import AnswerBudget, reasoning_field, suite_budgets
from ctxprobe.evals.run.send.serving import Served
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.sample import Mode, Recipe
from ctxprobe.tasks.suite import Suite

DEFAULT_REASONING_TOKENS = 1024  # a reasoning model's thinking room when none is given


def check_chat(served: Served) -> ChatFit:
    """The doctor's chat check, with the run's timeout."""
    from ctxprobe.runners.endpoint import EndpointClient

    async def ask() -> ChatFit:
        async with EndpointClient(served.config.model_copy(update={"mode": "chat", "concurrency": 1})) as client:
            return await chat_fit(client)

    return asyncio.run(ask())


def chat_asked(mode: Mode | None, suite: Suite) -> str | None:
    """Where chat mode was asked for (`--mode chat`, or a suite's or task's `mode: chat` that no flag
    overrides), None where it is only the endpoint's default: a base model is then refused, not warned about."""
    if mode is not None:
        return "--mode chat" if mode == "chat" else None
    if suite.mode == "chat":
        return f"suite {suite.name}: mode chat"
    tasks = [task.family for task in suite.tasks if task.mode == "chat"]
    return f"suite {suite.name}: mode chat for {', '.join(dict.fromkeys(tasks))}" if tasks else None


def preflight(mode: Mode | None, given: Budgets, suite: Suite, served: Served, recipes: list[Recipe]) -> AnswerBudget:
    """Check chat mode where samples use it (`mode`: the one asked for), and return the run's budgets (the
    answer budget's default is `AnswerBudget.answer`'s; the reasoning room's is decided here)."""
    reasons = False
    if any(r.mode == "chat" for r in recipes):
        fit = check_chat(served)
        reasons = fit.reasoning
        if fit.status == "n/a":
            print(f"ctxprobe: warning: could not check that chat mode fits the model ({fit.found})", file=sys.stderr)
        elif fit.status == "failed" and "HTTP 404" in fit.found:  # the name, not the mode (vLLM, SGLang)
            raise UserError(f"the endpoint does not serve --model {served.config.model!r}: {fit.found}")
        elif fit.status != "ok":
            fix = (
                f"chat mode does not fit this model: {fit.found}. A base model (or one served without a chat "
                "template) continues the template as text"
            )
            asked = chat_asked(mode, suite)
            if asked is None:
                raise UserError(f"{fix}: use --mode completions (or --mode chat to run chat mode anyway)")
            print(f"ctxprobe: warning: {fix}; running chat mode as asked ({asked})", file=sys.stderr)
    reasoning = given.reasoning_tokens if given.reasoning_tokens is not None else suite.reasoning_tokens
    if reasoning is None:
        reasoning = DEFAULT_REASONING_TOKENS if reasons else 0
        if reasons:
            print(
                f"ctxprobe: the model reasons: {reasoning} reasoning tokens on top of each answer budget "
                "(--reasoning-tokens N sets them)",
                file=sys.stderr,
            )
    return AnswerBudget(
        answer_tokens=given.answer_tokens,
        reasoning_tokens=reasoning,
        reasoning_field=reasoning_field(served.engine.engine),
        by_task=suite_budgets(suite),
    )
