"""`needles`: the user's own facts and questions (`ctxprobe run --needles FILE`, see `needles_file.py`).

One task is one item of the needle file: its parameters are the item's content (needle sentences,
question, accepted answers, answer kind), so its ids and prompt hashes follow the content alone. The
first needle goes at the recipe's depth and the others, for a multi-needle item, evenly from there to the
end of the haystack; each is inserted as a sentence of the haystack at a unit boundary, at the exact
length, its token offset recorded, as for every family. The answer is scored by the item's kind
(`needles_rules.py`): exact, number, set or contains, never by a model unless a judge is asked for."""

from __future__ import annotations

import random
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import JsonDict

from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.families.framing import frame
from ctxprobe.tasks.families.needles_file import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_PREFIX,
    AnswerKind,
    item_params,
    load_needles,
)
from ctxprobe.tasks.families.vocab import spread_depths
from ctxprobe.tasks.registry import Draft, NeedleDraft, task_family
from ctxprobe.tasks.sample import Expected, Mode

HEAD = "Some facts are hidden within the following text. Read it carefully: you will be asked about them afterwards."
_HIDDEN: JsonDict = {"shown": False}  # the item's text: left out of the report's variant label (the name stands for it)


class NeedlesParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field("", description="the item's id in the needle file, or a hash of its content")
    kind: AnswerKind = Field("exact", description="how the answer is scored: exact, number, set or contains")
    needles: list[str] = Field([], description="the sentences hidden in the haystack", json_schema_extra=_HIDDEN)
    question: str = Field("", description="what is asked about them", json_schema_extra=_HIDDEN)
    answers: list[str] = Field(
        [], description="accepted answers (aliases), or the members of a set", json_schema_extra=_HIDDEN
    )
    answer_prefix: str = Field(
        DEFAULT_PREFIX, description="completions mode: what the answer follows", json_schema_extra=_HIDDEN
    )
    max_tokens: int = Field(
        DEFAULT_MAX_TOKENS, ge=1, le=4096, description="the answer budget", json_schema_extra=_HIDDEN
    )


@task_family("needles", version="1")
class Needles:
    Params = NeedlesParams
    name: ClassVar[str]  # set by @task_family

    runs_alone = True  # its data given without --suite or --family: a suite of these tasks alone

    @classmethod
    def expand_tasks(cls, tasks: list[dict[str, Any]], given: str | None) -> list[dict[str, Any]]:
        """Each `needles` task becomes one task per item of its needle file (`params.file`, else `given`),
        the item's content for its parameters; a `needles` task that is an item itself (`needles`,
        `question`, `answers`, ... in its parameters) is checked as one and named. A suite without `needles`
        tasks gets one for `given`."""
        out: list[dict[str, Any]] = []
        if given and not any(task["family"] == cls.name for task in tasks):
            tasks = [*tasks, {"family": cls.name, "params": {}}]  # a suite of other families, and the needles
        for task in tasks:
            params = dict(task.get("params") or {})
            path = params.pop("file", None) or (given if not params.get("needles") else None)
            if task["family"] == cls.name and path is None and params:  # an item written in the suite
                out.append({**task, "params": item_params(params, "needles task in the suite")})
                continue
            if task["family"] != cls.name or path is None:
                out.append(task)
                continue
            out += [{**task, "params": {**params, **item}} for item in load_needles(str(path))]
        return out

    def draft(self, params: BaseModel, depth: float, mode: Mode, rng: random.Random) -> Draft:
        p = NeedlesParams.model_validate(params)
        if not p.needles or not p.question or not p.answers:
            raise UserError(
                "task family 'needles' needs the items of a needle file: give --needles FILE "
                "(JSONL: needle, question, answers per line)"
            )
        depths = spread_depths(depth, len(p.needles), rng, "spread")
        # A needle's `answer` is what must occur once, where it was put: the whole sentence (the user's
        # answers may be common words that the haystack also holds).
        needles = tuple(NeedleDraft(role="target", text=t, answer=t, depth=d) for t, d in zip(p.needles, depths))
        return frame(
            HEAD,
            p.question,
            p.answer_prefix,
            mode,
            needles,
            Expected(kind=p.kind, answers=p.answers),
            max_tokens=p.max_tokens,
        )
