"""Negated clauses are masked before a scorer looks for values: the cue to the end of its clause."""

import pytest

from ctxprobe.tasks.answers.negation import mask_negated


@pytest.mark.parametrize("text,kept,gone", [
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
])
def test_masking(text, kept, gone):
    masked = mask_negated(text)
    assert all(v in masked for v in kept) and not any(v in masked for v in gone), masked
    assert masked.count("\n") == text.count("\n")
