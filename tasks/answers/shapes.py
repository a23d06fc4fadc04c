"""Hex strings, UUIDs and code in one canonical form.

- hex and UUIDs (`canonical_hex`): lower case, without `0x` prefixes and without the separators a reader
  skips: groups joined by a hyphen (plain, non-breaking, en dash; spaced or not), a colon or an underscore
  (`cfa05737-5f3c-…`, `cfa05737 - 5f3c - …`, `de:ad:be:ef`), or by spaces where both groups hold a digit
  (groups of 8: `9579f060 b06fe33f …`, while `a bad face` stays words). A UUID is its 32 hex digits.
- code (`canonical_statements`): each `return` or `yield` statement the text writes, read as Python reads it
  (`ast`): the longest stretch from the keyword that parses as one statement whose value is more than a bare
  name (`return round(x, 2)`, not the words "return statement"), in `ast.unparse`'s spelling, so spacing and
  quotes do not matter and `` `return f(x)` or yield g(x) `` is two statements."""

from __future__ import annotations

import ast
import re

__all__ = ["canonical_hex", "canonical_statements", "statement"]

_GROUP = re.compile(r"(?<![0-9A-Za-z_])(?:0[xX])?([0-9A-Fa-f]+)(?![0-9A-Za-z])")
_MARK = re.compile(r"[ \t]*[-:_\u2010\u2011\u2012\u2013\u2212][ \t]*")
_SPACE = re.compile(r"[ \t\u00a0]+")


_UUID_WRITTEN = re.compile(r"[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}", re.I)


def canonical_hex(text: str) -> list[tuple[str, str, bool]]:
    """Every run of hex groups in `text`, in order: joined and lower-cased, as written, and whether written
    plainly (one group with no prefix, or a UUID's own 8-4-4-4-12 dashes)."""
    runs: list[tuple[str, int, int]] = []  # canonical, start, end
    previous: re.Match[str] | None = None
    for group in _GROUP.finditer(text):
        if previous is not None and runs:
            gap = text[previous.end() : group.start()]
            digits = any(c.isdigit() for c in previous.group(1)) and any(c.isdigit() for c in group.group(1))
            if _MARK.fullmatch(gap) or (digits and _SPACE.fullmatch(gap)):
                runs[-1] = (runs[-1][0] + group.group(1).lower(), runs[-1][1], group.end())
                previous = group
                continue
        runs.append((group.group(1).lower(), group.start(), group.end()))
        previous = group
    out = []
    for canonical, start, end in runs:
        written = text[start:end]
        out.append((canonical, written, written.lower() == canonical or bool(_UUID_WRITTEN.fullmatch(written))))
    return out


_KEYWORD = re.compile(r"\b(?:return|yield)\b")


def statement(code: str) -> str | None:
    """`code` in ast's spelling where it is one `return`/`yield` statement of more than a bare name."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    if len(tree.body) != 1:
        return None
    node = tree.body[0]
    value = (
        node.value
        if isinstance(node, ast.Return)
        else getattr(getattr(node, "value", None), "value", None)
        if isinstance(node, ast.Expr) and isinstance(node.value, (ast.Yield, ast.YieldFrom))
        else None
    )
    if value is None or isinstance(value, (ast.Name, ast.Constant)):
        return None
    return ast.unparse(node)


_STATEMENT_END = re.compile(r"\n|`|\.\s|\.$")  # a line, a code span or a sentence ends a statement
_PLAIN_AFTER = re.compile(r"$|[\s`.,;:!?'\"*]")


def canonical_statements(text: str) -> list[tuple[str, str, bool]]:
    """Every `return`/`yield` statement `text` writes, in order: in ast's spelling, as written, and whether
    written plainly (nothing of code glued after it: `f(x))` is not `f(x)`)."""
    out: list[tuple[str, str, bool]] = []
    for keyword in _KEYWORD.finditer(text):
        line = text[keyword.start() :][:400]
        line = line[: m.start()] if (m := _STATEMENT_END.search(line)) else line
        for end in range(len(line), len(keyword.group(0)), -1):
            if not (line[end - 1].isalnum() or line[end - 1] in ")]}'\"_"):
                continue
            if end < len(line) and (line[end].isalnum() or line[end] == "_"):
                continue  # a statement ends where a word does
            found = statement(line[:end])
            if found is not None:
                rest = text[keyword.start() + end :]
                plain = bool(_PLAIN_AFTER.match(rest))
                glued = "" if plain else re.split(r"\s", rest, maxsplit=1)[0]  # the word glued to the statement
                out.append((found, line[:end] + glued, plain))
                break
    return out
