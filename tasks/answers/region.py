"""Pulling the answer out of a model's raw output.

The answer region is where a scorer looks: reasoning blocks and code fences dropped, an echoed answer
prefix cut off, then the first line (completions mode: a base model runs on after its answer) or the
first paragraph (chat mode, or a list of values). Inside it, values are compared as whole tokens, so
the needle `6462207` is not found in `16462207`. What the region offers (`AnswerRegion.affirmed`) is read in
its comparison characters (`tasks/answers/fold.py`): a value in fullwidth digits or a rival in Cyrillic
look-alike letters reads as the plain value or rival. The region as written is what a judge is shown, and
the whole output (`AnswerRegion.output`) is kept as it came, for the kinds that score by a dataset's own rule."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ctxprobe.tasks.answers.fold import fold
from ctxprobe.tasks.answers.negation import mask_negated, withdraw_corrected
from ctxprobe.tasks.answers.rivals import Rivals, rivals_of
from ctxprobe.tasks.answers.tokens import FILLER, Shape, find_tokens, is_candidate, norm, norm_tokens, tokens
from ctxprobe.tasks.sample import Sample

_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_FENCE = re.compile(r"^\s*(```|~~~)")
# A sentence ends after . ! or ? and a space, but not after a list marker that starts the line ("1.
# tidy-lobster"); or after 。！？, space or none.
_SENTENCE_END = re.compile(r"(?<=[.!?])(?<!^\d\.)(?<!^\d\d\.)\s+|(?<=[\u3002\uff01\uff1f])\s*")


@dataclass(frozen=True)
class AnswerRegion:
    """The part of the output that holds the answer, the words the question itself supplied, and the
    rival candidates of the sample's expected answer (`tasks/answers/rivals.py`)."""

    lines: tuple[str, ...]
    excluded: frozenset[str]
    rivals: Rivals = Rivals()
    chat: bool = False
    output: str = ""  # the whole output it was read from (a kind scored by its dataset's own rule reads that)

    def affirmed(self) -> AnswerRegion:
        """What the answer offers, in its comparison characters (`tasks/answers/fold.py`: what a scorer compares;
        the region itself stays as written, for a judge to read): what a later correction withdrew dropped
        ("X. Actually, scratch that: Y." offers Y), then its negated clauses masked (`tasks/answers/negation.py`)."""
        lines = withdraw_corrected(tuple(fold(line) for line in self.lines))
        return replace(self, lines=tuple(mask_negated(line) for line in lines))

    def scoped(self, values: list[str]) -> AnswerRegion:
        """Where an answer's values and rivals are looked for. Chat mode: the whole region (the first
        paragraph: whatever it names is offered). Completions mode: a base model runs on after its answer
        ("1234567. The special magic number for amber-falcon is 7654321."), so the first sentence that says
        something the question did not and, where it names one of `values`, each next sentence while it
        names one too ("One of the numbers for K is: 1234567. So: 1234567.")."""
        if self.chat:
            return self
        sentences: list[str] = []
        for sentence in self.sentences():  # "1234567. or 7654321": a lower-case start continues the sentence
            if sentences and sentence[:1].islower():
                sentences[-1] += " " + sentence
            else:
                sentences.append(sentence)
        said = [i for i, s in enumerate(sentences)
                if any(t not in self.excluded and t not in FILLER for t in norm_tokens(s))]
        if not said:
            return replace(self, lines=())
        wanted = [norm_tokens(v) for v in values]

        def names(i: int) -> bool:
            return any(find_tokens(v, norm_tokens(sentences[i])) >= 0 for v in wanted)

        last = said[0]
        while names(last) and last + 1 < len(sentences) and names(last + 1):
            last += 1
        return replace(self, lines=tuple(sentences[said[0] : last + 1]))

    def offered_rivals(self) -> list[str]:
        """The rivals this region names (in normalized form), outside the question's words."""
        return self.rivals.offered(self.text, self.excluded)

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
    return AnswerRegion(tuple(lines), excluded, rivals_of(sample), chat, text)


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
