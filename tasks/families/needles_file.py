"""A needle file the user writes: one item a line (JSONL), or a JSON list of items, each a fact hidden in the
haystack and the question that asks for it:

    {"id": "zorbia", "needle": "The capital of Zorbia is Quelmont.", "question": "What is the capital of Zorbia?",
     "answers": ["Quelmont"], "kind": "exact", "answer_prefix": "The capital of Zorbia is"}

`needle` (one sentence) or `needles` (several, for a multi-needle item), `question`, and `answer` or `answers`
(the accepted answers: aliases, or the members of a `set`) are required; `kind` (exact, number, set,
contains; default exact), `answer_prefix` (completions mode; default `Answer:`), `max_tokens` and `id` are
optional. Each item becomes one task of the `needles` family whose parameters ARE the item's content, so
the sample ids and prompt hashes come from what the file says, never from where it lies: two runs of one
file pair, and a run is rebuilt from its records without the file."""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ctxprobe.tasks.errors import UserError, first_problem, read_user_text

AnswerKind = Literal["exact", "number", "set", "contains"]
DEFAULT_PREFIX = "Answer:"
DEFAULT_MAX_TOKENS = 32


class NeedleItem(BaseModel):
    """One item of a needle file, as written (`needle`/`answer` are the one-value spellings)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str | None = Field(None, min_length=1, max_length=80)
    needle: str | None = None
    needles: list[str] | None = None
    question: str = Field(min_length=1)
    answer: str | int | float | None = None
    answers: list[str | int | float] | None = None
    kind: AnswerKind = "exact"
    answer_prefix: str = DEFAULT_PREFIX
    max_tokens: int = Field(DEFAULT_MAX_TOKENS, ge=1, le=4096)

    @field_validator("question")
    @classmethod
    def _question_text(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("is empty")
        return v.strip()

    @model_validator(mode="after")
    def _one_of_each(self) -> NeedleItem:
        if (self.needle is None) == (self.needles is None):
            raise ValueError("give `needle` (a sentence) or `needles` (a list of sentences), one of them")
        if (self.answer is None) == (self.answers is None):
            raise ValueError("give `answer` or `answers` (a list of accepted answers), one of them")
        if any(not s.strip() for s in self.texts()):
            raise ValueError("a needle is empty")
        if not self.accepted() or any(not a.strip() for a in self.accepted()):
            raise ValueError("an answer is empty")
        if self.kind == "number":
            bad = [a for a in self.accepted() if parse_number(a) is None]
            if bad:
                raise ValueError(f"kind number: answer {bad[0]!r} is not a number")
        for field, text in self._text_fields():
            control = next((ch for ch in text if ch not in "\t\n" and unicodedata.category(ch) in ("Cc", "Cs")), None)
            if control is not None:
                raise ValueError(f"{field} holds the control character U+{ord(control):04X}: a needle file is text")
        missing = unstated(self.kind, self.accepted(), self.texts())
        if missing:
            raise ValueError(
                f"the needle never states the answer {missing!r}, so no answer drawn from the context "
                "could be right: write the answer into the needle (kind number: as digits)"
            )
        return self

    def _text_fields(self) -> list[tuple[str, str]]:
        return [
            ("id", self.id or ""),
            *(("needle", t) for t in self.texts()),
            ("question", self.question),
            *(("answer", a) for a in self.accepted()),
            ("answer_prefix", self.answer_prefix),
        ]

    def texts(self) -> list[str]:
        return [self.needle] if self.needle is not None else list(self.needles or [])

    def accepted(self) -> list[str]:
        values = [self.answer] if self.answer is not None else list(self.answers or [])
        return [str(v) for v in values]

    def params(self) -> dict[str, Any]:
        """The `needles` family's parameters for this item: its content, and its name (the `id`, else a
        hash of the content)."""
        content = {
            "needles": [t.strip() for t in self.texts()],
            "question": self.question,
            "answers": [a.strip() for a in self.accepted()],
            "kind": self.kind,
            "answer_prefix": self.answer_prefix,
            "max_tokens": self.max_tokens,
        }
        name = self.id or hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:10]
        return {"name": name, **content}


def parse_number(text: str) -> float | None:
    """A number as people write it: `1234`, `1,234`, `1 234`, `1_234`, `-12.5`, `+3`, `12.50`; None otherwise.
    Thousands separators are dropped only in groups of three digits."""
    t = text.strip().replace("\u2212", "-")
    if not re.fullmatch(r"[+-]?(?:\d{1,3}(?:([,_ \u00a0\u202f])\d{3})(?:\1\d{3})*|\d+)(?:\.\d+)?", t):
        return None
    return float(re.sub(r"[,_ \u00a0\u202f]", "", t))


_WORDS = re.compile(r"\w+")
_WRITTEN_NUMBER = re.compile(r"[+\-\u2212]?\d[\d,_ \u00a0\u202f]*(?:\.\d+)?")


def unstated(kind: str, answers: list[str], needles: list[str]) -> str | None:
    """An answer the needles never state (None: stated), compared as words (case and punctuation aside) or, for
    kind `number`, as a number the needles write in digits: for a `set` every member, else one accepted answer."""
    text = " ".join(needles)
    words = f" {' '.join(_WORDS.findall(unicodedata.normalize('NFKC', text).casefold()))} "
    values = {parse_number(m.group(0).strip(" ,_\u00a0\u202f")) for m in _WRITTEN_NUMBER.finditer(text)}

    def stated(answer: str) -> bool:
        wanted = " ".join(_WORDS.findall(unicodedata.normalize("NFKC", answer).casefold()))
        return (bool(wanted) and f" {wanted} " in words) or (
            kind == "number" and parse_number(answer) in values - {None}
        )

    if kind == "set":
        return next((a for a in answers if not stated(a)), None)
    return None if any(stated(a) for a in answers) else answers[0]


def load_needles(path_text: str) -> list[dict[str, Any]]:
    """The items of the needle file at `path_text`, each as the `needles` family's parameters."""
    path = Path(path_text).expanduser()
    where = f"needle file {path_text}"
    text = read_user_text(path, where)
    rows = _rows(text, where)
    if not rows:
        raise UserError(f"{where}: no items (one JSON object a line, each with needle, question and answers)")
    items, names = [], set()
    for line, row in rows:
        if not isinstance(row, dict):
            raise UserError(f"{where}: {line}: expected a JSON object with needle, question and answers")
        params = item_params(row, f"{where}: {line}")
        if params["name"] in names:
            raise UserError(f"{where}: {line}: the id {params['name']!r} is given twice")
        names.add(params["name"])
        items.append(params)
    return items


def item_params(row: dict[str, Any], where: str) -> dict[str, Any]:
    """One item (as written in a file, or a suite's `needles` task with the family's own field names, its
    `name` for the id) as the family's parameters; a bad one is a UserError naming `where` and the field."""
    if "name" in row and "id" not in row:
        row = {("id" if k == "name" else k): v for k, v in row.items()}
    try:
        return NeedleItem.model_validate(row).params()
    except ValidationError as exc:
        field, msg, _ = first_problem(exc)
        raise UserError(f"{where}: {field + ': ' if field else ''}{msg.removeprefix('Value error, ')}") from None


def _rows(text: str, where: str) -> list[tuple[str, Any]]:
    """(where, decoded value): a JSON list's items (`item N`), or one JSON value a line (`line N`)."""
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise UserError(f"{where}: invalid JSON at line {error.lineno}: {error.msg}") from None
        if not isinstance(data, list):
            raise UserError(f"{where}: expected a JSON list of items, or one JSON object a line")
        return [(f"item {i}", row) for i, row in enumerate(data, 1)]
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                rows.append((f"line {number}", json.loads(line)))
            except json.JSONDecodeError as error:
                raise UserError(f"{where}: invalid JSON at line {number}: {error.msg}") from None
    return rows
