"""The comparison characters (`tasks/answers/fold.py`) and the grouped-number rivals (`tasks/answers/number_forms.py`):
what reads as the same value reads the same, checked against Unicode's own data, and what does not stays apart."""

from __future__ import annotations

import sys
import unicodedata

import pytest

from ctxprobe.evals.scoring.score import score_sample
from ctxprobe.tasks.answers.fold import CONFUSABLES, fold
from tests.evals.factories import make_sample


def test_every_confusable_is_a_cyrillic_or_greek_letter_of_the_same_case_as_its_latin_letter():
    for ch, latin in CONFUSABLES.items():
        name = unicodedata.name(ch)
        assert name.startswith(("CYRILLIC", "GREEK")), name
        assert unicodedata.name(latin).startswith("LATIN") and latin.isupper() == ch.isupper(), (name, latin)


def test_fullwidth_letters_and_digits_fold_to_ascii_and_punctuation_stays():
    for code in range(0xFF01, 0xFF5F):
        ch = chr(code)
        plain = chr(code - 0xFEE0)
        assert fold(ch) == (plain if plain.isalnum() else ch), hex(code)


def test_every_decimal_digit_folds_to_its_value():
    digits = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Nd"]
    assert len(digits) > 500
    assert all(fold(d) == str(unicodedata.decimal(d)) for d in digits)


@pytest.mark.parametrize(
    ("text", "folded"),
    [
        ("Ѕеvеn", "Seven"),
        ("ΑΒΓ", "ABΓ"),
        ("7654\u200b321", "7654321"),
        ("ﬁve", "five"),
        ("Café", "Café"),
        ("答案是6030913，然后。", "答案是6030913，然后。"),  # Chinese text and its full-width marks untouched
        ("plain ASCII, as it is.", "plain ASCII, as it is."),
    ],
)
def test_fold(text: str, folded: str) -> None:
    assert fold(text) == folded


@pytest.mark.parametrize(
    ("text", "correct"),
    [
        (" 1234567 or 765 4321", False),
        (" 1234567 or 7.654.321", False),
        (" 1234567 or 7 654 321", False),
        (" 1234567 or 76 54 32 1", False),
        (" 1234567 or 7\u2009654\u2009321", False),
        (" 1234567 or 7_654_321", False),
        (" 1234567 or 765\u200b4321", False),
        (" 1234567 or \uff17\uff16\uff15\uff14\uff13\uff12\uff11", False),
        (" 1234567 or 1 234 567", True),  # the same number grouped is no rival
        (" 123 4567", False),  # the value grouped is not the value named
        (" 1234567 (step 1 2 3)", True),
        (" 1234567, found at 12.5%", True),  # short groups make no rival
        (" \uff11\uff12\uff13\uff14\uff15\uff16\uff17", True),
    ],
)
def test_a_rival_is_a_rival_whatever_its_grouping(text: str, correct: bool) -> None:
    assert score_sample(make_sample(["1234567"]), text).correct is correct


def test_the_region_stays_as_written_for_a_judge_and_what_it_offers_is_folded():
    from ctxprobe.tasks.answers.region import answer_region

    written = (
        "\uff11\uff12\uff13\uff14\uff15\uff16\uff17, \u041c\u043e\u0441\u043a\u0432\u0430"  # fullwidth digits, Москва
    )
    region = answer_region(make_sample(["1234567"]), " " + written)
    assert region.text == written
    assert region.affirmed().text == "1234567, Mocквa"
