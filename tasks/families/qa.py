"""`qa`: RULER's question answering at length (`qa_1` on SQuAD, `qa_2` on HotpotQA), on a dataset the user
brings (`dataset: hf:PATH`, see `qa_data.py`; `ctxprobe run --qa hf:PATH` sets it for every `qa` task).

A sample asks one of the dataset's questions (drawn from the seed) over its gold documents and distractor
documents, as RULER's `qa_utils.generate_input_output` lays them out: for SQuAD the other paragraphs of the
same article first, then documents drawn at random; all shuffled and written `Document {i}:\\n{text}`,
separated by blank lines. The number of documents is the largest that fits the length (`tasks/sized.py`).
`template: ruler` is lm-eval's `ruler_qa_squad` / `ruler_qa_hotpot` prompt: the instruction before and after
the documents, `Question: {question}` and the answer prefix `Answer:`; `length_convention: ruler` counts
RULER's 32 generated tokens in the length. Any of the question's answers is correct (`any`)."""

from __future__ import annotations

import random
import sys
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.families.dataset_digest import digest_field
from ctxprobe.tasks.families.framing import LengthConvention, Template, frame, length_convention_field, template_field
from ctxprobe.tasks.families.qa_data import QaData, Question, load_qa
from ctxprobe.tasks.items import split_items
from ctxprobe.tasks.registry import Draft, task_family
from ctxprobe.tasks.sample import Expected, Mode
from ctxprobe.tasks.sized import Sized

GENERATION_TOKENS = 32
INSTRUCTION = (
    "Answer the question based on the given documents. Only give me the answer and do not output any other words."
)
HEAD = f"{INSTRUCTION}\n\nThe following are given documents.\n\n"
PREFIX = "Answer:"


class QaParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    dataset: str | None = Field(
        None, description="hf:PATH: a local .parquet, .json or .jsonl with SQuAD or HotpotQA fields"
    )
    dataset_sha256: str | None = digest_field()
    expect: Literal["any", "squad", "hotpotqa"] = Field("any", description="refuse a dataset of the other format")
    template: Template = template_field()
    length_convention: LengthConvention = length_convention_field("it includes 32 generated tokens")


def dataset_of(p: QaParams) -> QaData:
    if p.dataset is None:
        raise UserError(
            "task family 'qa' needs a dataset: give --qa hf:PATH (a local parquet or JSON file "
            "with SQuAD or HotpotQA fields) or params.dataset"
        )
    data = load_qa(p.dataset, p.dataset_sha256)
    if p.expect != "any" and data.format != p.expect:
        raise UserError(f"QA dataset {p.dataset!r} has {data.format} fields, but this task expects {p.expect}")
    return data


@task_family("qa")
class Qa(Sized):
    Params = QaParams

    def max_size(self, params: BaseModel, length: int) -> int:
        return len(dataset_of(QaParams.model_validate(params)).documents)

    @classmethod
    def expand_tasks(cls, tasks: list[dict[str, Any]], given: str | None) -> list[dict[str, Any]]:
        """`given` (datasets, comma-separated: `hf:squad.parquet,hf:hotpot.json`) given to the suite's `qa`
        tasks that name none: each task gets the dataset of the format it `expect`s (any: the first). Those
        still without one are left out, with a note."""
        datasets = [(spec, load_qa(spec).format) for spec in (split_items(given, "--qa") if given else [])]
        out = []
        for task in tasks:
            params = task.get("params") or {}
            if task["family"] == cls.name and not params.get("dataset"):
                expect = params.get("expect", "any")
                fitting = [spec for spec, fmt in datasets if expect in ("any", fmt)]
                if not fitting:
                    continue
                task = {**task, "params": {**params, "dataset": fitting[0]}}
            out.append(task)
        if len(out) < len(tasks):
            print(
                f"note: {len(tasks) - len(out)} qa task(s) left out: give --qa hf:PATH[,hf:PATH] (SQuAD "
                "and HotpotQA files) to run them",
                file=sys.stderr,
            )
        if not out:
            raise UserError("the suite's tasks are all qa tasks: give --qa hf:PATH")
        return out

    def sized_draft(self, params: BaseModel, mode: Mode, rng: random.Random, length: int, size: int) -> Draft:
        p = QaParams.model_validate(params)
        data = dataset_of(p)
        question = data.questions[rng.randrange(len(data.questions))]
        documents = [data.documents[i] for i in _documents(question, len(data.documents), size, rng)]
        context = "\n\n".join(f"Document {i + 1}:\n{d}" for i, d in enumerate(documents))
        head = f"{HEAD}{context}\n\n{INSTRUCTION}"
        return frame(
            head,
            f"Question: {question.query}",
            PREFIX,
            mode,
            (),
            Expected(kind="any", answers=list(question.answers)),
            max_tokens=GENERATION_TOKENS,
            template=p.template,
            length_convention=p.length_convention,
            ruler_gap="\n\n",
            ruler_generation_tokens=GENERATION_TOKENS,
            document_start=len(INSTRUCTION),
        )


def _documents(question: Question, total: int, size: int, rng: random.Random) -> list[int]:
    """RULER's choice of `size` documents: the gold ones, then the article's others (SQuAD), then random
    ones; all of them when `size` reaches the dataset's; shuffled."""
    gold, more = list(question.gold), list(question.more)
    if size >= total:
        chosen = list(range(total))
    elif size - len(gold) > len(more):
        others = [i for i in range(total) if i not in gold + more]
        chosen = gold + more + rng.sample(others, size - len(gold) - len(more))
    else:
        chosen = gold + rng.sample(more, max(0, size - len(gold)))
    rng.shuffle(chosen)
    return chosen
