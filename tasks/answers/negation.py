"""Negated and withdrawn mentions: a value the answer says it is *not*, or takes back, is not an answer.

"It is not 1234567; it is 7654321." offers 7654321 and rejects 1234567; "The number is 1234567, not
7654321." offers 1234567. So before a scorer looks for values, what the answer does not offer is masked:

- a negated clause, from a negation cue (`not`, `n't`, `never`, `neither`, `nor`, `instead of`, `rather than`,
  `other than`, `except`; in Chinese `不是`, `并非`, `而非`, `不`) to the end of its clause (`.` `;` `,` `:` `!` `?`,
  a line end, `but`, or a full-width mark);
- a value denied after it is named ("X is incorrect.", "X is wrong.", "X is not the answer.", "X isn't
  right.", "X是错的"): the sentence up to the denial, back to its start (`.` `;` `:` `!` `?`, a line end, `but`,
  `however`), so "A, B, C is wrong." denies the whole list and "It is 1234567; 7654321 is wrong." keeps
  1234567;
- everything before a later correction ("scratch that", "no wait", "wait, no", "correction:", "on second
  thought", "I take that back", "make that", "let me correct", and, at the start of a sentence or clause,
  "actually", "I mean"; in Chinese `更正`, `我是说`, `不对，`): "X. Actually, scratch that: Y." offers Y alone, so it
  is wrong when X is expected and right when Y is, as long as nothing else follows in Y's place.

A masked value is then neither credited nor counted as a rival. Uncertainty is not negation: "I'm not sure,
but it is 1234567" and "not 100% certain" keep what follows.
"""

from __future__ import annotations

import re

_CUE = re.compile(
    r"\b(?:not|never|neither|nor|except|instead\s+of|rather\s+than|other\s+than)\b|\w+n['\u2019]t\b"
    r"|\u4e0d\u662f|\u5e76\u975e|\u800c\u975e|\u4e0d",  # 不是 并非 而非 不
    re.I,
)
# "not sure", "not certain", "not 100% sure", "not entirely certain", "not quite sure": doubt, not denial
_DOUBT = re.compile(r"\s*(?:(?:100\s*%|entirely|completely|quite|totally|fully|very)\s+)?"
                    r"(?:sure|certain|confident|positive)\b", re.I)
_CLAUSE_END = re.compile(r"[.;,:!?\n\u3002\uff0c\uff1b\uff1a\uff01\uff1f\u3001]|\bbut\b|\bhowever\b", re.I)

# A denial after the value: "is incorrect", "was wrong", "is not the answer", "isn't right"; 是错的 错了 不对 不正确 不是答案
_BAD = r"(?:incorrect|wrong|false|invalid|mistaken|a\s+mistake|an\s+error)"
_GOOD = r"(?:right|correct|true|valid|it|the\s+(?:right\s+|correct\s+)?(?:answer|one|number|value|name|word)s?)"
_DENIAL = re.compile(
    rf"\b(?:is|are|was|were|would\s+be|must\s+be)\s+(?:(?:definitely|certainly|probably|clearly)\s+)?{_BAD}\b"
    rf"|\b(?:(?:is|are|was|were)\s+not|isn['\u2019]t|aren['\u2019]t|wasn['\u2019]t|weren['\u2019]t)\s+{_GOOD}\b"
    r"|\u662f\u9519(?:\u8bef)?\u7684|\u9519\u4e86|\u4e0d\u5bf9|\u4e0d\u6b63\u786e"
    r"|\u4e0d\u662f(?:\u6b63\u786e)?\u7b54\u6848",
    re.I,
)
_SENTENCE_START = re.compile(r"[.;:!?\n\u3002\uff1b\uff1a\uff01\uff1f]|\bbut\b|\bhowever\b", re.I)

# A later correction: what came before it is withdrawn. "actually" and "I mean" only where a sentence or clause
# starts ("1234567 is actually the answer" corrects nothing).
_CORRECTION = re.compile(
    r"\b(?:scratch\s+that|strike\s+that|no,?\s+wait|wait,?\s+no|I\s+take\s+(?:that|it)\s+back"
    r"|on\s+second\s+thoughts?|make\s+that|let\s+me\s+correct(?:\s+(?:that|myself))?)\b|\bcorrection\s*:"
    r"|(?:^|(?<=[.;:!?,(\u2014\u2013]))\s*(?:actually|I\s+mean)\b"
    r"|\u66f4\u6b63|\u6211\u662f\u8bf4|\u4e0d\u5bf9[\uff0c,]",  # 更正 我是说 不对，
    re.I,
)


def mask_negated(text: str) -> str:
    """`text` with each negated clause (from its cue to the clause's end) and each denied sentence (from its
    start to the denial) replaced by one space."""
    return _mask_cued(_mask_denied(text))


def _mask_cued(text: str) -> str:
    out: list[str] = []
    position = kept = 0
    while (cue := _CUE.search(text, position)) is not None:
        start, end = cue.start(), cue.end()
        if cue.group(0).isascii() and _DOUBT.match(text, end):
            position = end
            continue
        stop = _CLAUSE_END.search(text, end)
        finish = stop.start() if stop else len(text)
        out += [text[kept:start], " "]
        kept = position = max(finish, end)
    return "".join(out) + text[kept:]


def _mask_denied(text: str) -> str:
    """Each denial with what it denies: back to the start of its sentence; a denial with nothing before it in
    its sentence ("1234567. Is incorrect.") reaches back one sentence more."""
    while (denial := _DENIAL.search(text)) is not None:
        starts = [m.end() for m in _SENTENCE_START.finditer(text, 0, denial.start())]
        start = starts[-1] if starts else 0
        if not re.search(r"\w", text[start : denial.start()]) and starts:
            start = starts[-2] if len(starts) > 1 else 0
        text = text[:start] + " " + text[denial.end() :]
    return text


def withdraw_corrected(lines: tuple[str, ...]) -> tuple[str, ...]:
    """The lines from the last correction on, what precedes the correction dropped: "X. Actually, scratch
    that: Y." -> " : Y."; no correction, the lines as they are."""
    for i in range(len(lines) - 1, -1, -1):
        last = None
        for last in _CORRECTION.finditer(lines[i]):
            pass
        if last is not None:
            return (" " + lines[i][last.end() :], *lines[i + 1 :])
    return lines
