"""Pulling the answer out of a model's raw output.

The answer region is where a scorer looks: reasoning blocks and code fences dropped, an echoed answer
prefix cut off, then the first line (completions mode: a base model runs on after its answer) or the
first paragraph (chat mode, or a list of values). Inside it, values are compared as whole tokens, so
the needle `6462207` is not found in `16462207`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from ctxprobe.tasks.sample import Sample

Shape = Literal["number", "uuid", "text"]

_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_FENCE = re.compile(r"^\s*(```|~~~)")
# A token: a digit group with thousands separators (1,234,567), a run of letters/digits joined by `-`, `_`
# or `.` with no space (uuids, `tidy-lobster`, `VAR_X`, `12.5`), or one Chinese or Japanese character:
# that script puts no space between words, so `答案是6030913。` holds the token `6030913`.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_WORD = rf"[^\W_{_CJK}]"
_TOKEN = re.compile(rf"\d{{1,3}}(?:,\d{{3}})+(?!\d)(?!,\d)|[{_CJK}]|{_WORD}+(?:[-_.]{_WORD}+)*")
_CJK_CHAR = re.compile(f"[{_CJK}]")
# A sentence ends after . ! or ? and a space, but not after a list marker that starts the line ("1.
# tidy-lobster"); or after 。！？, space or none.
_SENTENCE_END = re.compile(r"(?<=[.!?])(?<!^\d\.)(?<!^\d\d\.)\s+|(?<=[\u3002\uff01\uff1f])\s*")
_UUID = re.compile(r"^[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}$")
_NUMBER = re.compile(r"^\d+(?:\.\d+)?$")
# Words that carry no answer: "Sure. The answer is: X" -> X.
FILLER = frozenset(
    "a an and answer are as based certainly final given here i is it it's its my of ok okay on "
    "provided s sure text that the this to was yes".split()
)


def is_cjk(char: str) -> bool:
    """Whether `char` is a Chinese or Japanese character (no space separates it from a value)."""
    return bool(_CJK_CHAR.fullmatch(char))


def norm(token: str) -> str:
    """The comparison form of a token: thousands separators dropped, case folded."""
    return token.replace(",", "").casefold() if token[:1].isdigit() else token.casefold()


def tokens(text: str) -> list[str]:
    """The tokens of a text, as written."""
    return _TOKEN.findall(text)


def norm_tokens(text: str) -> list[str]:
    return [norm(t) for t in tokens(text)]


def find_tokens(needle: list[str], hay: list[str]) -> int:
    """Index where the token sequence `needle` occurs whole in `hay`, or -1."""
    width = len(needle)
    if width == 0:
        return -1
    for i in range(len(hay) - width + 1):
        if hay[i : i + width] == needle:
            return i
    return -1


def shape(value: str) -> Shape:
    """The kind of value a needle holds, which decides what counts as a candidate answer."""
    v = value.strip().casefold()
    if v.isdigit():
        return "number"
    if _UUID.match(v):
        return "uuid"
    return "text"


def is_candidate(token: str, kind: Shape, expected: str) -> bool:
    """A normalized token that looks like an answer of the expected shape. Numbers need at least half
    the expected digit count, so a list marker `1.` or a count `3` is not taken for the answer."""
    if kind == "number":
        return bool(_NUMBER.match(token)) and len(token.split(".")[0]) >= max(2, len(expected.strip()) // 2)
    if kind == "uuid":
        return bool(re.match(r"^[0-9a-f]+(?:-[0-9a-f]+){2,}$", token))
    return token not in FILLER


@dataclass(frozen=True)
class AnswerRegion:
    """The part of the output that holds the answer, and the words the question itself supplied."""

    lines: tuple[str, ...]
    excluded: frozenset[str]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def sentences(self) -> list[str]:
        return [s for line in self.lines for s in _SENTENCE_END.split(line) if s.strip()]


def strip_reasoning(text: str) -> str:
    """Drop `<think>…</think>` blocks; with a lone closing tag keep what follows it; an unclosed
    opening tag means the output is all reasoning and holds no answer."""
    text = _THINK.sub("", text)
    if "</think>" in text:
        text = text.rsplit("</think>", 1)[1]
    if re.search(r"<think>", text, re.I):
        text = re.split(r"<think>", text, maxsplit=1, flags=re.I)[0]
    return text


def _cut_echo(text: str, prefix: str, anywhere: bool) -> str:
    """Text after an echoed answer prefix (matched word by word, markdown and spacing ignored)."""
    words = tokens(prefix)
    if not words:
        return text
    pattern = r"[\W_]*".join(re.escape(w) for w in words)
    match = re.search(pattern, text, re.I) if anywhere else re.match(r"[\W_]*" + pattern, text, re.I)
    return text[match.end() :] if match else text


def _paragraph(lines: list[str], first_line_only: bool) -> list[str]:
    """The first block of non-empty lines (code fences skipped). A block whose last line ends with a
    colon ("The answer is:") runs on into the next block."""
    out: list[str] = []
    for line in lines:
        if _FENCE.match(line):
            continue
        if line.strip():
            out.append(line.strip())
            if first_line_only and not out[-1].endswith(":"):
                break
        elif out and not out[-1].endswith(":"):
            break
    return out


def answer_region(sample: Sample, text: str) -> AnswerRegion:
    """Where the answer is. Completions mode: the first line after the prompt's answer prefix (an echo
    of the prefix at the very start is cut); `values` answers may be a list, so the first paragraph.
    Chat mode: the first paragraph, after a repeated question at the start and the first echo of the
    answer prefix, if any."""
    chat = sample.recipe.mode == "chat"
    body = strip_reasoning(text)
    if chat:  # a chat model may repeat the question before it answers
        body = _cut_echo(body, sample.question, anywhere=False).lstrip("?.!: \t\r\n")
    body = _cut_echo(body, sample.answer_prefix, anywhere=chat)
    first_line_only = not chat and sample.expected.kind not in ("values", "set")
    lines = _paragraph(body.splitlines(), first_line_only)
    excluded = frozenset(norm_tokens(sample.question) + norm_tokens(sample.answer_prefix))
    return AnswerRegion(tuple(lines), excluded)


def candidates(text: str, kind: Shape, expected: str, excluded: frozenset[str]) -> list[str]:
    """Tokens in `text` that could be the answer, in order of appearance, repeats dropped; numbers
    and uuids in normalized form (`1,234,567` -> `1234567`), words as written."""
    seen: dict[str, str] = {}
    for raw in tokens(text):
        tok = norm(raw)
        if tok not in excluded and is_candidate(tok, kind, expected):
            seen.setdefault(tok, raw if kind == "text" else tok)
    return list(seen.values())


def answer_sentence(region: AnswerRegion, kind: Shape, expected: str) -> str:
    """The first sentence that says something the question did not: "Sure! The number is 1234567."
    -> "The number is 1234567."; "" when there is none."""
    for sentence in region.sentences():
        if candidates(sentence, kind, expected, region.excluded):
            return sentence
    return ""
