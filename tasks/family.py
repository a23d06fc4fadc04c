"""What a task family implements, in one place (`ctxprobe.tasks.family`, its names also on `ctxprobe`).

A family is a class registered with `@task_family("name", version="1")`, holding a pydantic `Params` model
and one method, `draft(params, depth, mode, rng) -> Draft`: the head, the tail (question and answer prefix),
the needles to place at depths (`NeedleDraft`), and the `Expected` answer. `frame` writes the head and tail
as every built-in family does (the answer prefix in completions mode, "answer only" in chat mode, the
budget a chat model's sentence needs). The `*_field` helpers declare the parameters families share.

The expected answer's `kind` names its scorer: a general kind (`value`, `values`, `string`, `any`, `chain`:
evals/scoring/score.py) or one of the family's own, registered in the family's own module with
`@answer_kind("kind")`: a function `(region, sample) -> Score`, `region` the answer region of the output
(`AnswerRegion`, the answer slot: its lines, its `unit`, `affirmed()` with what it does not assert blanked,
`scoped(values)`, the whole `output`; `tasks/answers/reading.py: read` gives its candidates of a kind) and `Score(extracted, correct, partial)` the verdict. All three live in tasks/answers (the
registry, the region and its token helpers, the verdict), so a family and its scorer are one module and import
nothing from evals: the built-in `latent` (`name`), `graphwalk` (`nodes`) and `mrcr` (`mrcr`) do so, the needle
file's `exact`, `number`, `set`, `contains` sit beside `needles` (needles_rules.py). A scorer looked up imports
every family module first, so a kind registered beside its family is always known.

A family built from data (a QA dataset, a needle file) expands the suite's tasks itself: a classmethod
`expand_tasks(tasks, given)` (`DataBacked`) turns each of its tasks into the tasks its data holds, `given`
being the data named on the command line for it (`--qa`, `--needles`: the option named as the family).

A family outside the package is found through a `ctxprobe.families` entry point or `--include PATH`
(tasks/family_index.py): one module too, its family and its answer kind side by side (`ctxprobe.task_family`,
`ctxprobe.answer_kind`, `ctxprobe.Score`, `ctxprobe.AnswerRegion` are the same objects).
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, runtime_checkable

from ctxprobe.tasks.answers.kinds import answer_kind
from ctxprobe.tasks.answers.region import AnswerRegion
from ctxprobe.tasks.answers.verdict import Score
from ctxprobe.tasks.draft import Draft, NeedleDraft
from ctxprobe.tasks.families.framing import (
    CHAT_SENTENCE_TOKENS,
    Lang,
    LengthConvention,
    Template,
    english_only,
    frame,
    join_names,
    lang_field,
    length_convention_field,
    template_field,
)
from ctxprobe.tasks.families.vocab import make_key, make_value, spread_depths
from ctxprobe.tasks.registry import TaskFamily, task_family
from ctxprobe.tasks.sample import Expected, Mode

__all__ = [
    "CHAT_SENTENCE_TOKENS",
    "AnswerRegion",
    "DataBacked",
    "Draft",
    "Expected",
    "Lang",
    "LengthConvention",
    "Mode",
    "NeedleDraft",
    "Score",
    "TaskFamily",
    "Template",
    "answer_kind",
    "english_only",
    "frame",
    "join_names",
    "lang_field",
    "length_convention_field",
    "make_key",
    "make_value",
    "spread_depths",
    "task_family",
    "template_field",
]


@runtime_checkable
class DataBacked(Protocol):
    """A family whose tasks come from data: it expands the suite's tasks (plain dicts, as in a suite file)
    into one task per item of its data, or leaves out those with none."""

    name: ClassVar[str]

    @classmethod
    def expand_tasks(cls, tasks: list[dict[str, Any]], given: str | None) -> list[dict[str, Any]]: ...
