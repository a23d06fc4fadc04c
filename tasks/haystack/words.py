"""The words a stretch of haystack holds: what a nested chain checks its drawn keys and values against.

A nested chain draws every cell's needles apart from its whole haystack stream (`tasks/nested.py`), megabytes
of text at 1M tokens, and finding its words took a third of a second a chain. The chains of one haystack read
nearly the same units (seeds' windows start at most `WINDOW_STEP_MAX` units apart, and each chain reads its
longest length's worth), so the words are kept per chunk of `CHUNK_UNITS` units at fixed places in the
haystack, and a stretch's words are the union of its whole chunks' and those of the few units at its ends. A word
is a run of ASCII letters and digits (`WORD`), so no word crosses a unit's end: a chunk's words are those of its
units, wherever a stretch starts."""

from __future__ import annotations

import re
import sys
import threading
from collections import OrderedDict

from ctxprobe.tasks.haystack.base import Haystack

WORD = re.compile(r"[0-9A-Za-z]+")  # the runs `assemble.whole_word` bounds a match by
CHUNK_UNITS = 2048
CHUNKS_KEPT = 512  # chunks' words kept, the least recently used dropped first (a generated haystack's vocabulary
# is small: about a thousand words a chunk, each word's string shared by every chunk that holds it)

_IN_WORD = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"  # WORD's bytes
_APART = bytes(b if b in _IN_WORD else ord(" ") for b in range(256))

_chunks: OrderedDict[tuple[str, int], frozenset[str]] = OrderedDict()
_lock = threading.Lock()


def words_of(haystack: Haystack, start: int, units: list[str]) -> set[str]:
    """The words of `units`, which are `haystack`'s units from `start` on."""
    stop = start + len(units)
    first, last = -(-start // CHUNK_UNITS), stop // CHUNK_UNITS  # the whole chunks inside
    if first >= last:
        return _words(units)
    out = _words(units[: first * CHUNK_UNITS - start]) | _words(units[last * CHUNK_UNITS - start :])
    for chunk in range(first, last):
        at = chunk * CHUNK_UNITS - start
        out |= _chunk_words(haystack.fingerprint, chunk, units[at : at + CHUNK_UNITS])
    return out


def _words(units: list[str]) -> set[str]:
    """`WORD`'s matches in `units`, found as bytes: each byte no match holds becomes a space (a character outside
    ASCII is bytes of 0x80 and over), and the rest split on spaces, in a third of the regular expression's time."""
    text = "\x00".join(units).encode("utf-8", "surrogatepass")
    return {w.decode("ascii") for w in set(text.translate(_APART).split())}


def _chunk_words(fingerprint: str, chunk: int, units: list[str]) -> frozenset[str]:
    key = (fingerprint, chunk)
    with _lock:
        found = _chunks.get(key)
        if found is not None:
            _chunks.move_to_end(key)
            return found
    found = frozenset(sys.intern(w) for w in _words(units))
    with _lock:
        _chunks[key] = found
        while len(_chunks) > CHUNKS_KEPT:
            _chunks.popitem(last=False)
    return found
