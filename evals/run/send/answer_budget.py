"""How many tokens each sample may generate: its answer budget, and a reasoning budget on top.

Each sample carries its mode's answer budget (`Sample.max_tokens`: the family's tight budget in
completions mode, plus a sentence's worth in chat mode, see tasks/families/framing.py); `--answer-tokens N`
(or a suite's or task's `answer_tokens:`) sets it outright.
A reasoning model thinks before it answers: `--reasoning-tokens N` is added to `max_tokens` and sent in
the field the engine caps reasoning with (`reasoning_budget_field` of its adapter, docs/ENGINES.md).

The prompt and the whole budget must fit in the engine's context: `misfit` says why a sample cannot,
before it is sent."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.tasks.identity import condition_key, condition_of
from ctxprobe.tasks.sample import Sample
from ctxprobe.tasks.suite import Suite


@dataclass(frozen=True)
class AnswerBudget:
    """The budgets of one run. `answer_tokens` (the run's option) overrides every sample's answer budget;
    `by_task` holds suite and task `answer_tokens:` fields, by family and full parameters."""

    answer_tokens: int | None = None
    reasoning_tokens: int = 0
    reasoning_field: str | None = None
    by_task: Mapping[str, int] = field(default_factory=dict)

    def answer(self, sample: Sample) -> int:
        """The tokens the answer itself may take."""
        recipe = sample.recipe
        return self.answer_tokens or self.by_task.get(condition_key(recipe)) or sample.max_tokens

    def max_tokens(self, sample: Sample) -> int:
        """`max_tokens` sent: the answer budget plus the reasoning budget."""
        return self.answer(sample) + self.reasoning_tokens

    def extra_body(self) -> dict[str, Any]:
        """The request field that caps reasoning, where the engine has one and a budget is set."""
        return {self.reasoning_field: self.reasoning_tokens} if self.reasoning_tokens and self.reasoning_field else {}

    def raised_for(self, record: SampleRecord) -> bool:
        """Whether this budget gives a recorded sample more room than it was sent with."""
        before = record.answer_tokens or record.sample.max_tokens
        return self.answer(record.sample) > before or self.reasoning_tokens > record.reasoning_tokens_budget

    def lowered_for(self, record: SampleRecord) -> bool:
        """Whether this budget gives a recorded sample less room than it was sent with (a prompt that left no
        room for its answer may fit with less)."""
        before = record.answer_tokens or record.sample.max_tokens
        return self.answer(record.sample) < before or self.reasoning_tokens < record.reasoning_tokens_budget

    def misfit(self, sample: Sample, context_length: int | None) -> str | None:
        """Why the prompt and its budget cannot fit in the engine's stated context, or None."""
        if not context_length:
            return None
        need = sample.planned_tokens + self.max_tokens(sample)
        if need < context_length:  # llama-server rejects a prompt that fills the context exactly
            return None
        parts = f"prompt {sample.planned_tokens:,} + answer budget {self.answer(sample)}"
        if self.reasoning_tokens:
            parts += f" + reasoning budget {self.reasoning_tokens}"
        return f"{parts} = {need:,} tokens does not fit in the engine's context of {context_length:,} tokens (not sent)"


def suite_budgets(suite: Suite) -> dict[str, int]:
    """Each suite task's `answer_tokens:` (the task's, else the suite's), by family and full parameters."""
    out: dict[str, int] = {}
    for task, params in suite.task_layouts():
        given = task.answer_tokens or suite.answer_tokens
        if given:
            out[condition_of(task.family, params)] = given
    return out


def reasoning_field(engine: str) -> str | None:
    from ctxprobe.runners.engines import adapter, known_engines

    return adapter(engine).reasoning_budget_field if engine in known_engines() else None
