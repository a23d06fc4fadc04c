"""The answer slot: where in a model's raw output the answer is read.

Chat mode: the whole reply, every paragraph (a second paragraph, a fenced block, a reasoning block after the
answer are all offered), after a repeated question and the first echo of the answer prefix. Completions mode:
the documented unit, since a base model runs on after its answer (and a nested prompt holds further needles
it may quote): the first line after the answer prefix (the first paragraph for a list), and of it the first
sentence that says something the question did not, with each next sentence while it names an expected value
(`AnswerRegion.scoped`). Reasoning before the answer (`<think>…</think>`) is not the answer; an unclosed
`<think>` at the start means no answer yet. What the slot asserts, and its candidates, are read in
`reading.py`; the slot as written is what a judge is shown and what the record states (`unit`), and the whole
output (`AnswerRegion.output`) is kept as it came, for the kinds that score by a dataset's own rule."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ctxprobe.tasks.answers.polarity import asserted
from ctxprobe.tasks.answers.reading import CandidateKind, Reading, candidate_kind, comparable, read
from ctxprobe.tasks.answers.tokens import FILLER, Shape, find_tokens, is_candidate, norm, norm_tokens, tokens
from ctxprobe.tasks.sample import Sample

_LEADING_THINK = re.compile(r"\s*<think>.*?</think>", re.S | re.I)
_FENCE = re.compile(r"^\s*(```|~~~)")
# A sentence ends after . ! or ? and a space, but not after a list marker that starts the line ("1.
# tidy-lobster"); or after 。！？, space or none.
_SENTENCE_END = re.compile(r"(?<=[.!?])(?<!^\d\.)(?<!^\d\d\.)\s+|(?<=[\u3002\uff01\uff1f])\s*")


UNIT_REPLY = "reply"  # chat: the whole reply
UNIT_SENTENCE = "first sentence"  # completions: the first informative sentence (and next ones naming a value)
UNIT_LINE = "first line"  # completions: the first line after the answer prefix
UNIT_PARAGRAPH = "first paragraph"  # completions, a list: the first block of lines


@dataclass(frozen=True)
class AnswerRegion:
    """The answer slot (see the module docstring): its lines, the unit they are, and the words the question
    itself supplied."""

    lines: tuple[str, ...]
    excluded: frozenset[str]
    chat: bool = False
    output: str = ""  # the whole output it was read from (a kind scored by its dataset's own rule reads that)
    unit: str = UNIT_LINE
    frame: str = ""  # the question and the answer prefix: their own candidates are not offered

    def affirmed(self) -> AnswerRegion:
        """What the slot asserts, in its comparison characters (`reading.comparable`; the region itself stays as
        written, for a judge to read), with what it does not assert blanked (`polarity.py`: negated, refused,
        denied, joked, asked, withdrawn by a later correction)."""
        return replace(self, lines=tuple(asserted(comparable(self.text)).text.split("\n")))

    def scoped(self, values: list[str]) -> AnswerRegion:
        """The unit an answer's candidates are read in. Chat mode: the whole slot (the whole reply:
        whatever it names is offered). Completions mode: a base model runs on after its answer
        ("1234567. The special magic number for amber-falcon is 7654321."), so the first sentence that says
        something the question did not and, where it names one of `values`, each next sentence while it
        names one too ("One of the numbers for K is: 1234567. So: 1234567.")."""
        if self.chat:
            return self
        unit = replace(self, unit=UNIT_SENTENCE)
        sentences: list[str] = []
        for sentence in self.sentences():  # "1234567. or 7654321": a lower-case start continues the sentence
            if sentences and sentence[:1].islower():
                sentences[-1] += " " + sentence
            else:
                sentences.append(sentence)
        said = [
            i
            for i, s in enumerate(sentences)
            if any(t not in self.excluded and t not in FILLER for t in norm_tokens(s))
        ]
        if not said:
            return replace(unit, lines=())
        wanted = [norm_tokens(v) for v in values]

        def names(i: int) -> bool:
            return any(find_tokens(v, norm_tokens(sentences[i])) >= 0 for v in wanted)

        last = said[0]
        while names(last) and last + 1 < len(sentences) and names(last + 1):
            last += 1
        return replace(unit, lines=tuple(sentences[said[0] : last + 1]))

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def sentences(self) -> list[str]:
        return [s for line in self.lines for s in _SENTENCE_END.split(line) if s.strip()]


def strip_reasoning(text: str) -> str:
    """Drop the reasoning before the answer: `<think>…</think>` blocks at the start, or everything up to a lone
    closing tag; an unclosed opening tag at the start means the output is all reasoning and holds no answer.
    Reasoning written after an answer is part of the reply (what it names is offered too)."""
    while (match := _LEADING_THINK.match(text)) is not None:
        text = text[match.end() :]
    if "</think>" in text and not re.search(r"<think>", text.split("</think>", 1)[0], re.I):
        text = text.split("</think>", 1)[1]
    if re.match(r"\s*<think>", text, re.I):
        return ""
    return text


def _cut_echo(text: str, prefix: str, anywhere: bool) -> str:
    """Text after an echoed answer prefix (matched word by word, markdown and spacing ignored)."""
    words = tokens(prefix)
    if not words:
        return text
    pattern = r"[\W_]*".join(re.escape(w) for w in words)
    match = re.search(pattern, text, re.I) if anywhere else re.match(r"[\W_]*" + pattern, text, re.I)
    return text[match.end() :] if match else text


def _paragraph(lines: list[str], first_line_only: bool, whole: bool = False) -> list[str]:
    """The first block of non-empty lines (code fences skipped; `whole`: every non-empty line). A block whose
    last line ends with a colon ("The answer is:") runs on into the next block."""
    out: list[str] = []
    for line in lines:
        if whole:
            if line.strip() and not _FENCE.match(line):
                out.append(line.strip())
            continue
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
    """The answer slot. Completions mode: the first line after the prompt's answer prefix (an echo of the
    prefix at the very start is cut); `values` answers may be a list, so the first paragraph. Chat mode: the
    whole reply, after a repeated question at the start and the first echo of the answer prefix, if any."""
    chat = sample.recipe.mode == "chat"
    body = strip_reasoning(text)
    if chat:  # a chat model may repeat the question before it answers
        body = _cut_echo(body, sample.question, anywhere=False).lstrip("?.!: \t\r\n")
    body = _cut_echo(body, sample.answer_prefix, anywhere=chat)
    first_line_only = not chat and sample.expected.kind not in ("values", "set")
    lines = _paragraph(body.splitlines(), first_line_only, whole=chat)
    excluded = frozenset(norm_tokens(sample.question) + norm_tokens(sample.answer_prefix))
    unit = UNIT_REPLY if chat else UNIT_LINE if first_line_only else UNIT_PARAGRAPH
    return AnswerRegion(tuple(lines), excluded, chat, text, unit, f"{sample.question}\n{sample.answer_prefix}")


def slot_closed(sample: Sample, text: str) -> bool:
    """Whether the answer slot ended before `text` did: more output could not change what is read. Chat mode's
    slot is the whole reply, so never; completions mode's ends with its line (its paragraph for a list), and
    what a base model wrote after it is not read."""
    if sample.recipe.mode == "chat":
        return False
    return answer_region(sample, text).lines == answer_region(sample, text + "zz").lines


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


def reading_of(region: AnswerRegion, values: list[str], kind: CandidateKind | None = None) -> Reading:
    """The slot read for candidates of the kind `values` share (`tasks/answers/reading.py`), scoped in
    completions mode to the documented unit (`AnswerRegion.scoped`)."""
    kind = kind or candidate_kind(values)
    unit = region.scoped(values).unit

    def scope(said: str) -> str:  # the unit, of what the whole slot asserts
        return replace(region, lines=tuple(said.split("\n"))).scoped(values).text

    return read(region.text, unit, kind, region.frame, [kind.canonical(v) for v in values], scope)
