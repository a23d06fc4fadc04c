"""A difference is printed one way (`evals/compare/signed.py`): signed, never `-0`."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from ctxprobe.evals.compare.signed import signed

EVALS = Path(__file__).resolve().parents[3] / "evals"


@pytest.mark.parametrize(
    "value, decimals, scale, shown",
    [
        (-0.001, 0, 100.0, "0"),
        (0.004, 0, 100.0, "0"),
        (-0.0, 1, 100.0, "0.0"),
        (-0.0004, 2, 1.0, "0.00"),
        (-0.006, 0, 100.0, "-1"),
        (0.3, 0, 100.0, "+30"),
        (-0.0049, 1, 100.0, "-0.5"),
        (0.05, 1, 100.0, "+5.0"),
        (math.nan, 0, 100.0, "-"),
        (None, 1, 100.0, "-"),
    ],
)
def test_signed(value: float | None, decimals: int, scale: float, shown: str) -> None:
    assert signed(value, decimals, scale) == shown


def test_no_difference_is_formatted_with_a_sign_anywhere_else() -> None:
    """A `:+` format spec prints `-0` for a small negative difference: every signed figure goes through `signed`."""
    found = [
        f"{path.relative_to(EVALS)}:{n}"
        for path in EVALS.rglob("*.py")
        if path.name != "signed.py"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"\{[^{}]*:\+[^{}]*\}", line)
    ]
    assert found == []
