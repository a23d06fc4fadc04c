"""The documents and questions of a QA dataset the user brings, in the shape RULER's `qa_utils` reads them
(`read_squad`, `read_hotpotqa`): every distinct document once, sorted, and each question with its answers,
its gold documents and (SQuAD) the other paragraphs of the same article.

`hf:PATH` is a local .parquet file or folder, or a .json / .jsonl file; nothing is fetched from a hub. Rows
have SQuAD's fields (`title`, `context`, `question`, `answers` with `text`) or HotpotQA's (`question`,
`answer`, `context` as `{title: [...], sentences: [[...]]}` or as `[[title, [sentences]]]`); the official
SQuAD JSON (`{"data": [{"title", "paragraphs": [...]}]}`) is read too. Unanswerable SQuAD questions are left
out, as RULER leaves them."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from ctxprobe.tasks.data_files import parquet_files, parquet_rows
from ctxprobe.tasks.errors import UserError, read_user_text
from ctxprobe.tasks.families.dataset_digest import located

Format = Literal["squad", "hotpotqa"]


@dataclass(frozen=True)
class Question:
    query: str
    answers: tuple[str, ...]
    gold: tuple[int, ...]  # indices into the documents
    more: tuple[int, ...] = ()  # SQuAD: the article's other paragraphs


@dataclass(frozen=True)
class QaData:
    format: Format
    documents: tuple[str, ...]
    questions: tuple[Question, ...]


def load_qa(spec: str, digest: str | None = None) -> QaData:
    """The dataset at `hf:PATH` (its file's size and time of change key the cache); with the recipe's content
    `digest`, a file of that content (`dataset_digest.located`)."""
    if not spec.startswith("hf:") or not spec[3:]:
        raise UserError(f"invalid QA dataset {spec!r}: use hf:PATH (a local .parquet, .json or .jsonl file or folder)")
    path = located(spec, digest, "QA")
    stat = path.stat()
    return _load(str(path.resolve()), stat.st_size, stat.st_mtime_ns)


@lru_cache(maxsize=4)
def _load(path: str, size: int, mtime: int) -> QaData:
    rows = _rows(Path(path))
    if not rows:
        raise UserError(f"QA dataset {path}: no rows")
    first = rows[0]
    try:
        if {"question", "answer", "context"} <= first.keys():
            return _hotpotqa(rows)
        if {"question", "answers", "context"} <= first.keys():
            return _squad(rows)
    except (KeyError, TypeError, ValueError) as error:  # a later row without a field, a context of another shape
        raise UserError(
            f"QA dataset {path}: a row does not have the first row's shape ({type(error).__name__}: {error})"
        ) from None
    raise UserError(
        f"QA dataset {path}: rows need SQuAD's fields (context, question, answers) or HotpotQA's "
        f"(context, question, answer); found {', '.join(sorted(first))}"
    )


def _rows(path: Path) -> list[dict[str, Any]]:
    if path.is_dir() or path.suffix == ".parquet":
        return parquet_rows(parquet_files(path, f"QA dataset {path}"), f"QA dataset {path}")
    text = read_user_text(path, f"QA dataset {path}")
    try:
        if path.suffix == ".jsonl":
            rows = [json.loads(line) for line in text.splitlines() if line.strip()]
            if not all(isinstance(row, dict) for row in rows):
                raise UserError(f"QA dataset {path}: expected one JSON object a line")
            return rows
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise UserError(f"QA dataset {path}: cannot read it: {str(error).splitlines()[0]}") from None
    if isinstance(data, dict) and isinstance(data.get("data"), list):  # the official SQuAD JSON
        return [
            {
                "title": article.get("title", ""),
                "context": p["context"],
                "question": qa["question"],
                "answers": qa.get("answers", []),
                "is_impossible": qa.get("is_impossible", False),
            }
            for article in data["data"]
            for p in article["paragraphs"]
            for qa in p["qas"]
        ]
    if not isinstance(data, list) or not all(isinstance(row, dict) for row in data):
        raise UserError(f"QA dataset {path}: expected a list of records")
    return data


def _answer_texts(answers: Any) -> list[str]:
    if isinstance(answers, dict):  # HF squad: {"text": [...], "answer_start": [...]}
        return [str(t) for t in answers.get("text", [])]
    return [str(a["text"] if isinstance(a, dict) else a) for a in answers or []]


def _squad(rows: list[dict[str, Any]]) -> QaData:
    documents = sorted({str(r["context"]) for r in rows})
    index = {d: i for i, d in enumerate(documents)}
    by_title: dict[str, list[int]] = {}
    for r in rows:
        paragraphs = by_title.setdefault(str(r.get("title", "")), [])
        if index[str(r["context"])] not in paragraphs:
            paragraphs.append(index[str(r["context"])])
    questions = []
    for r in rows:
        answers = _answer_texts(r["answers"])
        if r.get("is_impossible") or not answers:
            continue
        gold = index[str(r["context"])]
        more = tuple(i for i in by_title[str(r.get("title", ""))] if i != gold)
        questions.append(Question(str(r["question"]), tuple(answers), (gold,), more))
    return QaData("squad", tuple(documents), tuple(questions))


def _paragraphs(context: Any) -> list[str]:
    # HF hotpot_qa: {"title": [...], "sentences": [[...]]}; the original JSON: [[title, [sentences]]]
    pairs: Iterable[tuple[Any, Any]] = (
        zip(context["title"], context["sentences"]) if isinstance(context, dict) else ((t, s) for t, s in context)
    )
    return [f"{title}\n{''.join(sentences)}" for title, sentences in pairs]


def _hotpotqa(rows: list[dict[str, Any]]) -> QaData:
    documents = sorted({d for r in rows for d in _paragraphs(r["context"])})
    index = {d: i for i, d in enumerate(documents)}
    questions = tuple(
        Question(str(r["question"]), (str(r["answer"]),), tuple(index[d] for d in _paragraphs(r["context"])))
        for r in rows
    )
    return QaData("hotpotqa", tuple(documents), questions)
