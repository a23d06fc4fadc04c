"""The slot's polarity: what the answer asserts, and what it says without asserting it.

An answer names a value and may still not offer it: it denies it, refuses it, takes it back, jokes, asks, or
corrects itself. So before the candidates are counted, what the slot does not assert is blanked out
(`asserted`), by one table of cues (`CUES`), each with a category and a direction:

- forward (negation, refusal, a label): from the cue to the end of its clause (`.` `;` `,` `:` `!` `?`, a line
  end, `but`, or a full-width mark), or for a label (`Wrong: X`) to the end of its sentence: "It is not X",
  "I cannot say that it is X", "Wrong: X", "X rather than Y"; in Chinese `不是`, `并非`, `而非`, `不`;
- backward (denial, jest, hedge, a reply): from the cue back to the start of its sentence (`.` `;` `:` `!` `?`,
  a line end, `but`, `however`), and one sentence further when the cue stands alone ("X. Just kidding."):
  "X is wrong", "X is a lie", "X (incorrect)", "X (just kidding)", "X, just a guess", "X? Certainly not.";
- a sentence that asks (ends in `?`) asserts nothing: "Is it X?";
- withdrawal: a later correction ("scratch that", "no wait", "correction:", "I mean", "actually" where a
  sentence starts, `更正`) withdraws everything before it: "X. Actually, scratch that: Y." asserts Y alone.

Doubt is not denial: "I'm not sure, but it is X" and "not 100% certain" keep what follows, and "I think it is
X" or "probably X" asserts X. A blanked stretch keeps its length, so positions in the slot still hold.

Beside it, `abstention` reads whether a slot says the text holds no answer (`ABSTENTIONS`, built from the same
negation and refusal cues): the reply an absent needle's question is credited for (`absence.py`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["ABSTENTIONS", "Asserted", "Polarity", "abstention", "asserted"]

Polarity = Literal["asserted", "negated", "refused", "denied", "jest", "hedged", "asked", "withdrawn", "silent"]

_BAD = (
    r"(?:incorrect|wrong|false|invalid|mistaken|a\s+mistake|an\s+error|a\s+lie|lies|a\s+joke|a\s+fake|fake"
    r"|made\s+up|fabricated|invented|bogus|nonsense|a\s+guess)"
)
_GOOD = r"(?:right|correct|true|valid|it|the\s+(?:right\s+|correct\s+)?(?:answer|one|number|value|name|word)s?)"
_JEST = r"(?:just\s+)?(?:kidding|joking)|jk|j/k|lol|april\s+fools?|not\s+really|haha"
_REPLY = r"(?:(?:certainly|definitely|absolutely|of\s+course|surely)\s+not|no\s+way|nope|not\s+at\s+all|no)"
_GUESS = r"(?:just\s+)?(?:a\s+)?(?:wild\s+|random\s+)?guess(?:ing)?|I['\u2019]m\s+guessing|I\s+am\s+guessing"

_NEGATION = (
    r"\b(?:not|never|neither|nor|except|instead\s+of|rather\s+than|other\s+than)\b"
    r"|\w+n['\u2019]t\b|\u4e0d\u662f|\u5e76\u975e|\u800c\u975e|\u4e0d"
)
_REFUSAL = r"\b(?:cannot|can\s+not|unable\s+to|refuse\s+to|decline\s+to|won['\u2019]t)\b"

# (category, direction, pattern): the one table every scorer's polarity comes from, applied in this order (a
# denial that says `not`, "X is not the answer", before the negation that would otherwise take `not` alone)
CUES: tuple[tuple[Polarity, str, str], ...] = (
    ("denied", "label", rf"(?:^|(?<=[.;!?\n(]))\s*(?:{_BAD}|not\s+(?:this|it)|lie|joke|jest|fake)\s*:"),
    (
        "denied",
        "backward",
        rf"\b(?:is|are|was|were|would\s+be|must\s+be|sounds?\s+like)\s+(?:(?:definitely|certainly|probably|clearly"
        rf"|obviously|totally|all)\s+)?{_BAD}\b"
        rf"|\b(?:(?:is|are|was|were)\s+not|isn['\u2019]t|aren['\u2019]t|wasn['\u2019]t|weren['\u2019]t)\s+{_GOOD}\b"
        rf"|\(\s*(?:{_BAD}|not|no|wrong\s+answer)\s*[.!]?\s*\)"
        r"|\u662f\u9519(?:\u8bef)?\u7684|\u9519\u4e86|\u4e0d\u5bf9|\u4e0d\u6b63\u786e|\u4e0d\u662f(?:\u6b63\u786e)?\u7b54\u6848",
    ),
    ("jest", "backward", rf"\(?\b(?:{_JEST})\b\)?"),
    ("hedged", "backward", rf"\(?\b(?:{_GUESS})\b\)?"),
    ("denied", "backward", rf"(?:^|(?<=[.;!?\n]))\s*{_REPLY}\s*(?=[.!]|$)"),
    ("negated", "forward", _NEGATION),
    ("refused", "forward", _REFUSAL),
)
# What says the text holds no answer: an absent needle's honest reply (`tasks/answers/absence.py`). A negation
# or refusal of the table above, or "no", followed within a few words by holding, finding or knowing ("does
# not mention", "isn't provided", "cannot find", "Not found.", "I don't know", "no number is given", within
# its clause); or a word that names nothing ("there is no", "none", "nothing", "unknown", "N/A"). Doubt ("not sure") says
# nothing about the text, so it is none of them.
_HOLDING = (
    r"(?:mention|contain|includ|hold|say|said|state|specif|provid|give|given|list|find|found|locat|present"
    r"|appear|exist|know|available|see|seen|identif|determin|refer|record|in\s+(?:the|this|your)\s+"
    r"(?:text|context|document|passage|prompt))\w*"
)
ABSTENTIONS: tuple[str, ...] = (
    rf"(?:{_NEGATION}|{_REFUSAL}|\bno\b|\bfail(?:s|ed)?\s+to\b)(?:[\s'\u2019-]+\w+){{0,8}}?[\s'\u2019-]+{_HOLDING}",
    r"\bthere\s*(?:is|are|was|were|['\u2019]s)\s+(?:no|not)\b|\bthere\s+(?:is|are|was|were)n['\u2019]t\b"
    r"|\bno\s+such\b|\bnone\b|\bnothing\b|\bunknown\b|\bn/a\b",
)
_ABSTAINS = re.compile("|".join(f"(?:{p})" for p in ABSTENTIONS), re.I)
_COMPILED = tuple((category, direction, re.compile(pattern, re.I)) for category, direction, pattern in CUES)
# "not sure", "not certain", "not 100% sure", "not entirely certain": doubt, not denial
_DOUBT = re.compile(
    r"\s*(?:(?:100\s*%|entirely|completely|quite|totally|fully|very)\s+)?"
    r"(?:sure|certain|confident|positive)\b",
    re.I,
)
_CLAUSE_END = re.compile(r"[.,](?!\d)|[;:!?\n\u3002\uff0c\uff1b\uff1a\uff01\uff1f\u3001]|\bbut\b|\bhowever\b", re.I)
_SENTENCE_END = re.compile(r"[.;!?\n\u3002\uff1b\uff01\uff1f]")
_SENTENCE_START = re.compile(r"[.;:!?\n\u3002\uff1b\uff1a\uff01\uff1f]|\bbut\b|\bhowever\b", re.I)
_QUESTION = re.compile(r"[^.;!?\n\u3002\uff1b\uff01\uff1f]*[?\uff1f]")

# A later correction: what came before it is withdrawn. "actually" and "I mean" only where a sentence or clause
# starts ("1234567 is actually the answer" corrects nothing).
_CORRECTION = re.compile(
    r"\b(?:scratch\s+that|strike\s+that|no,?\s+wait|wait,?\s+no|I\s+take\s+(?:that|it)\s+back"
    r"|on\s+second\s+thoughts?|make\s+that|let\s+me\s+correct(?:\s+(?:that|myself))?)\b|\bcorrection\s*:"
    r"|(?:^|(?<=[.;:!?,(\u2014\u2013]))\s*(?:actually|I\s+mean)\b"
    r"|\u66f4\u6b63|\u6211\u662f\u8bf4|\u4e0d\u5bf9[\uff0c,]",  # 更正 我是说 不对，
    re.I,
)


@dataclass(frozen=True)
class Asserted:
    """The slot with what it does not assert blanked out (same length, so positions hold), and the categories
    of what was blanked, in the order found."""

    text: str
    withheld: tuple[Polarity, ...] = ()

    def polarity(self, asserts_something: bool) -> Polarity:
        """The slot's polarity: asserted where a candidate is left, else what withheld it (`silent`: nothing)."""
        return "asserted" if asserts_something else (self.withheld[0] if self.withheld else "silent")


def _blank(text: str, start: int, end: int) -> str:
    return text[:start] + "".join(c if c == "\n" else " " for c in text[start:end]) + text[end:]


def _sentence_start(text: str, at: int) -> int:
    """Where the sentence holding `at` starts; where the cue stands alone there ("X. Just kidding."), where the
    sentence before it with words in it starts."""
    starts = [0, *(m.end() for m in _SENTENCE_START.finditer(text, 0, at))]
    return next((start for start in reversed(starts) if re.search(r"\w", text[start:at])), 0)


def asserted(slot: str) -> Asserted:
    """What `slot` asserts (see the module docstring)."""
    withheld: list[Polarity] = []
    text = slot
    corrections = list(_CORRECTION.finditer(text))
    if corrections:
        text = _blank(text, 0, corrections[-1].end())
        withheld.append("withdrawn")
    for category, direction, cue in _COMPILED:
        position = 0
        while (match := cue.search(text, position)) is not None:
            start, end = match.span()
            position = max(end, start + 1)
            if not text[start:end].strip():
                continue
            if category == "negated" and match.group(0).isascii() and _DOUBT.match(text, end):
                continue
            if direction == "forward":
                stop = _CLAUSE_END.search(text, end)
                text = _blank(text, start, stop.start() if stop else len(text))
            elif direction == "label":
                stop = _SENTENCE_END.search(text, end)
                text = _blank(text, start, stop.start() if stop else len(text))
            else:
                text = _blank(text, _sentence_start(text, start), end)
            withheld.append(category)
    for question in _QUESTION.finditer(text):
        if re.search(r"\w", question.group(0)):
            text = _blank(text, question.start(), question.end())
            withheld.append("asked")
    return Asserted(text, tuple(withheld))


def abstention(slot: str) -> str:
    """Where `slot` says the text holds no answer, the words that say it (`ABSTENTIONS`); "" where it does not."""
    found = _ABSTAINS.search(slot)
    return found.group(0).strip() if found else ""
