"""The comparison form of the characters of an answer, its expected values and its rivals: a value written in
other characters that a reader takes for the same is the same value, so a rival disguised in them is still a
rival (and the expected value written in them is still the value).

`fold` maps, character by character (punctuation and spaces untouched, so the answer region's sentence and
clause marks, full-width Chinese ones included, read as before):

- letters and digits to their Unicode NFKC form: fullwidth `７６５４３２１` and `ＡＢＣ`, mathematical `𝟕`, ligatures;
- every decimal digit to its ASCII digit (Arabic-Indic `٧`, Devanagari `७`);
- the common Cyrillic and Greek letters that look like Latin ones to those Latin letters (`CONFUSABLES`, a
  short explicit table of the look-alikes in common fonts: `а е о р с у х і ј ѕ`, `ο ν ι`, the capitals);
- invisible format characters (zero-width space and joiners, soft hyphen, bidi marks) dropped.

Both sides are folded, so an answer in Russian or Greek still matches an expected value in the same script; the
cost is that a Latin word and its Cyrillic look-alike are one word, which is the point."""

from __future__ import annotations

import unicodedata
from functools import lru_cache

# Cyrillic and Greek letters drawn like a Latin letter in common fonts -> that letter
CONFUSABLES: dict[str, str] = {
    # Cyrillic small
    "\u0430": "a",
    "\u0435": "e",
    "\u043e": "o",
    "\u0440": "p",
    "\u0441": "c",
    "\u0443": "y",
    "\u0445": "x",
    "\u0455": "s",
    "\u0456": "i",
    "\u0458": "j",
    "\u0501": "d",
    "\u04bb": "h",
    "\u04cf": "l",
    "\u051b": "q",
    "\u051d": "w",
    "\u0475": "v",
    "\u0491": "r",
    # Cyrillic capital
    "\u0410": "A",
    "\u0412": "B",
    "\u0415": "E",
    "\u041a": "K",
    "\u041c": "M",
    "\u041d": "H",
    "\u041e": "O",
    "\u0420": "P",
    "\u0421": "C",
    "\u0422": "T",
    "\u0425": "X",
    "\u0405": "S",
    "\u0406": "I",
    "\u0408": "J",
    "\u0423": "Y",
    "\u04ae": "Y",
    "\u04c0": "I",
    "\u050c": "G",
    "\u051a": "Q",
    "\u051c": "W",
    # Greek small
    "\u03bf": "o",
    "\u03bd": "v",
    "\u03b9": "i",
    "\u03ba": "k",
    "\u03c1": "p",
    "\u03c5": "u",
    "\u03c7": "x",
    "\u03b1": "a",
    "\u03f2": "c",
    "\u03f3": "j",
    # Greek capital
    "\u0391": "A",
    "\u0392": "B",
    "\u0395": "E",
    "\u0396": "Z",
    "\u0397": "H",
    "\u0399": "I",
    "\u039a": "K",
    "\u039c": "M",
    "\u039d": "N",
    "\u039f": "O",
    "\u03a1": "P",
    "\u03a4": "T",
    "\u03a5": "Y",
    "\u03a7": "X",
    "\u03f9": "C",
    "\u037f": "J",
}


@lru_cache(maxsize=4096)
def _fold_char(ch: str) -> str:
    category = unicodedata.category(ch)
    if category == "Cf":  # zero-width space, joiners, soft hyphen, bidi marks: invisible
        return ""
    if category == "Nd":
        return str(unicodedata.decimal(ch))
    if category[0] not in "LN":
        return ch
    if ch in CONFUSABLES:
        return CONFUSABLES[ch]
    folded = unicodedata.normalize("NFKC", ch)
    return "".join(
        CONFUSABLES.get(c, str(unicodedata.decimal(c)) if unicodedata.category(c) == "Nd" else c) for c in folded
    )


def fold(text: str) -> str:
    """`text` in its comparison characters (see the module docstring); ASCII text is returned as it is."""
    if text.isascii():
        return text
    return "".join(_fold_char(ch) for ch in unicodedata.normalize("NFC", text))
