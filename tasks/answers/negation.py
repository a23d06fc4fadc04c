"""Negated mentions: a value the answer says it is *not* is not an answer.

"It is not 1234567; it is 7654321." offers 7654321 and rejects 1234567; "The number is 1234567, not
7654321." offers 1234567. So before a scorer looks for values, each negated clause of the answer region is
masked: from a negation cue (`not`, `n't`, `never`, `neither`, `nor`, `instead of`, `rather than`,
`other than`, `except`; in Chinese `不是`, `并非`, `而非`, `不`) to the end of its clause (`.` `;` `,` `:` `!` `?`, a
line end, `but`, or a full-width mark). A masked value is then neither credited nor counted as a rival.

Uncertainty is not negation: "I'm not sure, but it is 1234567" and "not 100% certain" keep what follows.
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


def mask_negated(text: str) -> str:
    """`text` with each negated clause, from its cue to the clause's end, replaced by one space."""
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
