"""What the slot does not assert is blanked before a scorer reads its candidates (`tasks/answers/polarity.py`): a
negated or refused clause (the cue to the end of its clause), a value denied, joked about or guessed after it is
named (back to its sentence's start), a question, and what a later correction withdrew (everything before it)."""

import pytest

from ctxprobe.tasks.answers.polarity import asserted


@pytest.mark.parametrize(
    "text,kept,gone",
    [
        ("The number is not 1234567; it is 7654321.", ["7654321"], ["1234567"]),
        ("It is 1234567, not 7654321.", ["1234567"], ["7654321"]),
        ("It isn't 1234567.", [], ["1234567"]),
        ("Never 1234567. The answer is 7654321.", ["7654321"], ["1234567"]),
        ("It is not 1234567 but 7654321", ["7654321"], ["1234567"]),
        ("7654321 rather than 1234567", ["7654321"], ["1234567"]),
        ("答案不是1234567，是7654321。", ["7654321"], ["1234567"]),
        ("I'm not sure, but it is 1234567.", ["1234567"], []),
        ("I am not 100% certain: 1234567.", ["1234567"], []),
        ("The note says 1234567.", ["1234567"], []),  # `note` is not `not`
        # denied after the value: the sentence up to the denial
        ("1234567 is incorrect.", [], ["1234567"]),
        ("1234567 is wrong.", [], ["1234567"]),
        ("1234567 is not the answer.", [], ["1234567"]),
        ("1234567 isn't right.", [], ["1234567"]),
        ("1234567, 2345678 and 3456789 are incorrect.", [], ["1234567", "2345678", "3456789"]),
        ("It is 1234567; 7654321 is wrong.", ["1234567"], ["7654321"]),
        ("7654321 is definitely wrong, but 1234567 is right.", ["1234567"], ["7654321"]),
        ("1234567. Is incorrect.", [], ["1234567"]),
        ("1234567是错的。", [], ["1234567"]),
        ("1234567 is correct.", ["1234567"], []),
        ("The answer is 1234567, which is not wrong to ask.", ["1234567"], []),  # "not wrong" is no denial of it
        # refusal, jest, denial by a label or a parenthesis, a reply, a question, a guess
        ("I cannot say that it is 1234567.", [], ["1234567"]),
        ("1234567 (just kidding)", [], ["1234567"]),
        ("1234567. Just kidding.", [], ["1234567"]),
        ("1234567 (incorrect)", [], ["1234567"]),
        ("1234567 is a lie.", [], ["1234567"]),
        ("Wrong: 1234567", [], ["1234567"]),
        ("1234567? Certainly not.", [], ["1234567"]),
        ("Is it 1234567?", [], ["1234567"]),
        ("1234567, just a guess.", [], ["1234567"]),
        ("The answer is 1234567. Is there anything else?", ["1234567"], []),
        ("I think it is 1234567.", ["1234567"], []),
        ("Probably 1234567.", ["1234567"], []),
        ("It is 7654321, not 860,719.12 or 1234567.", ["7654321"], ["1234567", "860"]),  # `860,719` is one number
    ],
)
def test_masking(text, kept, gone):
    said = asserted(text)
    assert all(v in said.text for v in kept) and not any(v in said.text for v in gone), said
    assert len(said.text) == len(text) and said.text.count("\n") == text.count("\n")
    assert bool(said.withheld) or not gone


@pytest.mark.parametrize(
    "lines,kept,gone",
    [
        (("1234567. Actually, scratch that: 7654321.",), ["7654321"], ["1234567"]),
        (("1234567. No wait, it is 7654321.",), ["7654321"], ["1234567"]),
        (("1234567, I mean 7654321.",), ["7654321"], ["1234567"]),
        (("1234567. Correction: 7654321.",), ["7654321"], ["1234567"]),
        (("1234567.", "Wait, no: 7654321."), ["7654321"], ["1234567"]),  # a correction on a later line
        (("1234567. Actually, 7654321. No wait, 2345678.",), ["2345678"], ["1234567", "7654321"]),  # the last one
        (("1234567 is actually the answer.",), ["1234567"], []),  # "actually" inside a clause corrects nothing
        (("Actually, the answer is 1234567.",), ["1234567"], []),
        (("1234567.",), ["1234567"], []),
    ],
)
def test_a_later_correction_withdraws_what_came_before(lines, kept, gone):
    said = asserted("\n".join(lines))
    assert all(v in said.text for v in kept) and not any(v in said.text for v in gone), said
    assert "withdrawn" in said.withheld or not gone
