"""The candidates of each answer kind in one canonical form (`tasks/answers/number_forms.py`, `shapes.py`, `words.py`,
`reading.py`): every way of writing a value reads as that value, a disguise is never plain, and ordinary prose
around an answer names no candidate."""

from __future__ import annotations

import pytest

from ctxprobe.tasks.answers.number_forms import canonical_numbers
from ctxprobe.tasks.answers.reading import CandidateKind, candidate_kind, comparable, read
from ctxprobe.tasks.answers.shapes import canonical_hex, canonical_statements
from ctxprobe.tasks.answers.words import canonical_words, list_items


@pytest.mark.parametrize(
    "written",
    [
        "765 4321",
        "765-4321",
        "765\u20134321",
        "765\u20114321",
        "765/4321",
        "7.654.321",
        "7,654,321",
        "7_654_321",
        "7\u2009654\u2009321",
        "7.654321e6",
        "7.654321 x 10^6",
        "7.654321 \u00d7 10**6",
        "7654321st",
        "7654321th",
        "seven million six hundred fifty-four thousand three hundred twenty-one",
        "seven six five four three two one",
        "7.654321 million",
        "&#55;&#54;&#53;&#52;&#51;&#50;&#49;",
        "\uff17\uff16\uff15\uff14\uff13\uff12\uff11",
    ],
)
def test_every_writing_of_a_number_is_that_number(written: str) -> None:
    assert [n for n, _, _ in canonical_numbers(comparable(written))] == ["7654321"]


@pytest.mark.parametrize(
    ("written", "plain"),
    [
        ("7654321", True),
        ("7,654,321", True),
        ("\uff17\uff16\uff15\uff14\uff13\uff12\uff11", True),
        ("765 4321", False),
        ("765-4321", False),
        ("7.654321e6", False),
        ("7654321st", False),
        ("seven six five four three two one", False),
    ],
)
def test_only_the_plain_writings_are_plain(written: str, plain: bool) -> None:
    assert [p for _, _, p in canonical_numbers(comparable(written))] == [plain]


def test_numbers_stay_apart_where_a_reader_keeps_them_apart() -> None:
    assert [n for n, _, _ in canonical_numbers("1234567-7654321, 1234567 7654321")] == ["1234567", "7654321"] * 2
    assert [n for n, _, _ in canonical_numbers("6462207.5")] == ["6462207.5"]
    assert [n for n, _, _ in canonical_numbers("one of the two values")] == []  # a lone small number word


@pytest.mark.parametrize(
    "written",
    [
        "cfa05737-5f3c-46dd-88f2-eb5c9e8dacc6",
        "CFA05737-5F3C-46DD-88F2-EB5C9E8DACC6",
        "cfa057375f3c46dd88f2eb5c9e8dacc6",
        "cfa05737 - 5f3c - 46dd - 88f2 - eb5c9e8dacc6",
        "0xcfa057375f3c46dd88f2eb5c9e8dacc6",
        "cfa05737 5f3c46dd 88f2eb5c 9e8dacc6",
        "cf:a0:57:37:5f:3c:46:dd:88:f2:eb:5c:9e:8d:ac:c6",
        "cfa05737\u20115f3c\u201146dd\u201188f2\u2011eb5c9e8dacc6",
    ],
)
def test_every_writing_of_a_uuid_is_that_uuid(written: str) -> None:
    assert [h for h, _, _ in canonical_hex(comparable(written))] == ["cfa057375f3c46dd88f2eb5c9e8dacc6"]


def test_hex_plainness_and_words_that_look_like_hex() -> None:
    assert [p for _, _, p in canonical_hex("cfa05737-5f3c-46dd-88f2-eb5c9e8dacc6")] == [True]
    assert [p for _, _, p in canonical_hex("0x9579f060b06fe33f")] == [False]
    assert [h for h, _, _ in canonical_hex("it is a bad face")] == ["a", "bad", "face"]  # words stay words


def test_statements_are_read_as_python_reads_them() -> None:
    said = "The return statement is `return round(scaled * window.rate + 274, 3)`."
    assert [s for s, _, _ in canonical_statements(said)] == ["return round(scaled * window.rate + 274, 3)"]
    assert [s for s, _, _ in canonical_statements("`return round(x,2)` or yield round(y, 2)")] == [
        "return round(x, 2)",
        "yield round(y, 2)",
    ]
    assert canonical_statements("return statement") == []  # words, not code
    assert canonical_statements("return f(x)). It") == [("return f(x)", "return f(x)).", False)]


def test_words_under_letter_spacing_and_list_items() -> None:
    assert [(w, p) for w, p in canonical_words("M e g a n, M-e-g-a-n, VAR_QWERT")] == [
        ("Megan", False),
        ("Megan", False),
        ("VAR", False),
        ("QWERT", False),
    ]
    said = "The words that appear most often are mocha, odd and cloudy. Another is zampone."
    assert [w for w, _ in list_items(said)] == ["mocha", "odd", "cloudy", "zampone"]


@pytest.mark.parametrize(
    ("values", "shape"),
    [
        (["1234567"], "number"),
        (["cfa05737-5f3c-46dd-88f2-eb5c9e8dacc6"], "uuid"),
        (["9579f060b06fe33f704bbf9941a08cde567ac32e"], "hex"),
        (["return round(x * 2, 3)"], "code"),
        (["HWUMP", "YLARE"], "var"),
        (["Megan"], "closed"),
        (["mocha", "odd"], "open"),
        (["iyujag", "cmednm"], "coded"),
        (["wary-gazelle"], "key"),
        (["The Supplier shall pay."], "text"),
    ],
)
def test_the_kind_is_decided_by_the_expected_values(values: list[str], shape: str) -> None:
    assert candidate_kind(values).shape == shape


def test_a_reading_counts_the_frame_out_and_states_its_polarity() -> None:
    kind = CandidateKind("number", 7)
    frame = "What is the number for 2345678?\nThe number is"
    reading = read("It is 1234567, not 7654321; 2345678 was asked.", "reply", kind, frame)
    assert reading.candidates == ("1234567",) and reading.withheld == ("7654321",)
    assert reading.polarity == "asserted" and reading.unit == "reply"
    assert read("I cannot say that it is 1234567.", "reply", kind, frame).polarity == "refused"
    assert read("1234567 (just kidding)", "reply", kind, frame).polarity == "jest"
    assert read("Nothing.", "reply", kind, frame).polarity == "silent"
    found, others = read("765 4321", "reply", kind, frame).offers(["7654321"])
    assert found == [] and others == ["7654321"]  # a disguise names a rival, never the value
