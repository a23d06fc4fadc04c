"""What a resumed run keeps: the finished samples still in its plan; a plan that changed is refused with
the first difference named."""

from __future__ import annotations

from typing import Any

from ctxprobe.evals.records.record import ErrorKind, SampleRecord
from ctxprobe.evals.records.store import RunStore
from ctxprobe.evals.run.send.answer_budget import AnswerBudget
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.sample import Recipe

CAPPED = (ErrorKind.rejected_too_long, ErrorKind.no_answer_room)  # over the server's context: its cap, not a fault


def check_resumable(
    store: RunStore, recipes: list[Recipe], budget: AnswerBudget | None = None, same_server: bool = False
) -> dict[str, SampleRecord]:
    """The finished samples to keep: the scored ones, the truncated ones unless `budget` now gives them
    more room (a truncated answer sent again with the same budget is cut again), and where the server is the
    one that capped them (`same_server`: `served_lengths.same_limit`) the samples over its context (too long,
    or no room left for the answer unless `budget` now gives less): that server would reject them again. Every finished sample
    must still be in the plan: if it isn't, the plan changed (another tokenizer, generator or suite), and
    resuming is refused with one line naming the first difference. Nothing is ever dropped from samples.jsonl."""
    planned = {r.sample_id(): r for r in recipes}
    by_task = {r.task_key(): r for r in recipes}
    latest = store.latest_records(needles=False)  # outlines: a recipe and an outcome are all it reads
    for sid, record in latest.items():
        if sid not in planned:
            old = record.sample.recipe
            now = by_task.get(old.task_key())
            if now is not None:
                diff = first_difference(old.model_dump(mode="json"), now.model_dump(mode="json"))
            else:
                diff = "it is no longer in the suite (suite, lengths, depths or generator version changed)"
            raise UserError(
                f"cannot resume {store.dir}: sample {sid} was planned differently: {diff}; "
                "start a new run (finished samples are kept as they are)"
            )
    return {
        sid: r
        for sid, r in latest.items()
        if r.error is None
        or (r.error is ErrorKind.truncated and budget is not None and not budget.raised_for(r))
        or (same_server and r.error is ErrorKind.rejected_too_long)
        or (same_server and r.error is ErrorKind.no_answer_room and budget is not None and not budget.lowered_for(r))
    }


def first_difference(old: dict[str, Any], new: dict[str, Any]) -> str:
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            return f"{key} {old.get(key)!r} then, {new.get(key)!r} now"
    return "no field differs"
