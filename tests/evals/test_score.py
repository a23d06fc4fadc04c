import random
from functools import cache

import pytest

from ctxprobe.evals.scoring.score import levenshtein, score_sample, similarity
from tests.evals.factories import make_sample

HEX = "3f9a0c27d4e18b56a7c90e3d2b41f8a6c5e07d19"  # 40 hex chars
UUID = "5d1f2a7c-3b9e-4c8d-9f0a-1e2b3c4d5e6f"


def score(answers, text, kind="value", **kw):
    return score_sample(make_sample(answers, kind, **kw), text)


# --- value --------------------------------------------------------------------------------------


def test_longer_number_containing_the_needle_is_not_credited():
    s = score(["6462207"], " 16462207.")
    assert not s.correct and s.partial == 0.0
    assert s.extracted == ["16462207"]


@pytest.mark.parametrize("text", [" 6462207.", " 6462207", " **6462207**.", ' "6462207"', " 6,462,207."])
def test_number_after_prefix(text):
    s = score(["6462207"], text)
    assert s.correct and s.partial == 1.0 and s.extracted == ["6462207"]


@pytest.mark.parametrize("text", [" 646220.", " 64622070", " 6462207.5", " 6462-207"])
def test_near_misses_are_wrong(text):
    assert not score(["6462207"], text).correct


def test_base_model_run_on_is_ignored_after_the_first_sentence():
    text = " 7654321.\nThe special magic number for tidy-lobster mentioned in the provided text is 1234567."
    s = score(["1234567"], text)
    assert not s.correct and s.extracted == ["7654321"]
    assert score(["1234567"], " 1234567. The special magic number for amber-falcon is 7654321.").correct


def test_echoed_prefix_at_start_is_cut():
    text = " The special magic number for tidy-lobster mentioned in the provided text is 1234567."
    assert score(["1234567"], text).correct


def test_a_second_candidate_is_not_exact():
    s = score(["1234567"], " 1234567 or 7654321")
    assert not s.correct and s.partial == pytest.approx(0.5) and s.extracted == ["1234567", "7654321"]
    s = score(["1234567"], " 7654321 or 1234567")
    assert not s.correct and s.partial == pytest.approx(0.5)


@pytest.mark.parametrize(
    "text",
    [
        "The number is **1234567**",
        "Sure! The special magic number for tidy-lobster mentioned in the provided text is 1,234,567.",
        "The answer is:\n\n```\n1234567\n```",
        "<think>It might be 7654321, or not.</think>1234567",
    ],
)
def test_chat_answers(text):
    assert score(["1234567"], text, mode="chat").correct


def test_reasoning_without_answer_scores_zero():
    s = score(["1234567"], "<think>The number is 1234567 I think", mode="chat")
    assert not s.correct and s.extracted == []


def test_empty_output():
    s = score(["1234567"], "")
    assert s == s.model_copy(update={"extracted": [], "correct": False, "partial": 0.0})


def test_word_value():
    q = "What is the special magic word for tidy-lobster mentioned in the provided text?"
    assert score(["quokka"], "Sure. It is **Quokka**.", mode="chat", question=q).correct
    s = score(["quokka"], "The word is quokkas.", mode="chat", question=q)
    assert not s.correct and s.extracted == ["quokkas"]


def test_uuid_value_ignores_the_key_from_the_question():
    key = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
    q = f"What is the special magic UUID for {key} mentioned in the provided text?"
    s = score([UUID], f"The UUID for {key} is {UUID.upper()}.", mode="chat", question=q)
    assert s.correct and s.extracted == [UUID]
    assert not score([UUID], f"The UUID is {UUID}0.", mode="chat", question=q).correct


# --- values -------------------------------------------------------------------------------------

MV = ["1234567", "2345678", "3456789", "4567890"]


def test_multivalue_fraction_found():
    s = score(MV, " 1234567, 2345678 and 3456789.", kind="values")
    assert not s.correct and s.partial == pytest.approx(0.75)
    assert s.extracted == ["1234567", "2345678", "3456789"]


def test_values_trap_and_extras():
    s = score(MV, " 12345678, 2345678, 9999999, 3456789 and 4567890.", kind="values")
    assert s.partial == pytest.approx(3 / 4 * 3 / 5) and not s.correct  # 3 of 4 recalled, 3 of 5 offered expected
    assert "9999999" in s.extracted and "12345678" in s.extracted


def test_multiquery_chat_list_all_found():
    text = "Here they are:\n\n1. **1234567**\n2. 2345678\n3. 3456789\n4. 4567890\n\nLet me know!"
    s = score(MV, text, kind="values", mode="chat")
    assert s.correct and s.partial == 1.0


VARTRACK_Q = "Find all variables that are assigned the value 12345 in the text above."
VARTRACK_PREFIX = (
    "Answer: According to the chain(s) of variable assignment in the text above, "
    "3 variables are assigned the value 12345, they are:"
)


def test_variable_tracking_names():
    s = score(
        ["XKQZP", "JRTWL", "MNBVC"],
        " XKQZP, JRTWL, ABCDE",
        kind="values",
        question=VARTRACK_Q,
        answer_prefix=VARTRACK_PREFIX,
    )
    assert s.partial == pytest.approx(2 / 3 * 2 / 3) and not s.correct  # ABCDE is a rival name
    assert s.extracted == ["XKQZP", "JRTWL", "ABCDE"]
    s = score(
        ["XKQZP", "JRTWL", "MNBVC"],
        " VAR XKQZP, VAR MNBVC and VAR JRTWL\n\nQuestion: VAR XXXXX",
        kind="values",
        question=VARTRACK_Q,
        answer_prefix=VARTRACK_PREFIX,
    )
    assert s.correct and "XXXXX" not in s.extracted


# --- string -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        f" {HEX}",
        f" {HEX}.",
        f' "{HEX}".',
        f" `{HEX}`",
        f"The string is: **{HEX}**.",
        f"```\n{HEX}\n```",
    ],
)
def test_string_exact(text):
    s = score([HEX], text, kind="string", mode="chat")
    assert s.correct and s.partial == 1.0 and s.extracted == [HEX]


def test_string_one_char_off_gets_edit_similarity():
    wrong = HEX[:-1] + "0"
    s = score([HEX], f" {wrong}", kind="string")
    assert not s.correct and s.partial == pytest.approx(1 - 1 / 40) and s.extracted == [wrong]


def test_string_with_extra_chars_is_not_exact():
    s = score([HEX], f" 0x{HEX}", kind="string")
    assert not s.correct and s.partial == pytest.approx(1 - 2 / 42)


def test_code_line_from_a_completion():
    line = "return round(scaled * ledger.rate + 412, 2)"
    prefix = "The return statement of the function audit_ledger_totals is:"
    q = "What is the exact return statement of the function audit_ledger_totals defined in the provided text?"
    kw = dict(kind="string", question=q, answer_prefix=prefix)
    assert score([line], f"\n```python\n{line}\n```\n\nThe function", **kw).correct
    assert score([line], f" `{line}`.", **kw).correct
    s = score([line], f" {line})", **kw)
    assert not s.correct and s.partial == pytest.approx(1 - 1 / (len(line) + 1))
    s = score([line], '\n    raise ValueError("scaled out of range")', **kw)
    assert not s.correct and 0 < s.partial < 0.5


def test_clause_quoted_with_its_label():
    clause = (
        "The Supplier shall pay the Customer EUR 12,345.67 no later than 3 May 2030, "
        "failing which interest accrues at 2.5% per annum."
    )
    kw = dict(
        kind="string",
        question="What is the exact text of Clause 12-B?",
        answer_prefix="The exact text of Clause 12-B is:",
    )
    assert score([clause], f" Clause 12-B. {clause} Clause 13-C. The Tenant shall", **kw).correct
    s = score([clause], " " + clause.replace("12,345.67", "12,345.76"), **kw)
    assert not s.correct and s.partial == pytest.approx(1 - 2 / (len(clause) - 1))  # final period set aside


def test_code_line_and_clause():
    line = "    total = sum(x * 2 for x in items)"
    assert score([line], "total = sum(x * 2 for x in items)", kind="string", mode="chat").correct
    s = score([line], "total = sum(x * 3 for x in items)", kind="string", mode="chat")
    assert s.partial == pytest.approx(1 - 1 / len(line.strip()))
    clause = "The Supplier shall deliver the Goods within thirty (30) days of the Order Date."
    assert score([clause], f' "{clause}"', kind="string").correct
    assert score([clause], " " + clause[:-1], kind="string").correct  # missing final period only
    assert not score([clause], " " + clause.replace("thirty", "forty"), kind="string").correct


# --- chain --------------------------------------------------------------------------------------

CHAIN = ["Bram", "Cleo", "Dov"]


@pytest.mark.parametrize(
    "text,partial,correct",
    [
        (" Bram.", 1 / 3, False),
        (" Cleo.", 2 / 3, False),
        (" Dov.", 1.0, True),
        (" Bram's father is Dov.", 1.0, True),
        (" Nora.", 0.0, False),
    ],
)
def test_chain_partial_credit(text, partial, correct):
    s = score(
        ["Dov"],
        text,
        kind="chain",
        chain=CHAIN,
        question="Who is Ada's great-grandfather?",
        answer_prefix="Ada's great-grandfather is",
    )
    assert s.partial == pytest.approx(partial) and s.correct is correct


KEYCHAIN = ["amber-falcon", "calm-teapot", "6462207"]
KEYCHAIN_Q = "Starting from key tidy-lobster and following the keys, what value do you reach in the provided text?"
KEYCHAIN_PREFIX = "Starting from key tidy-lobster and following the keys, the value reached is"


@pytest.mark.parametrize(
    "text,partial,correct",
    [
        (" 6462207.", 1.0, True),
        (" 16462207.", 0.0, False),
        (" calm-teapot.", 2 / 3, False),
        (" the key amber-falcon.", 1 / 3, False),
        (" 7654321. The key calm-teapot opens the box holding the value 6462207.", 0.0, False),
    ],
)
def test_keychain(text, partial, correct):
    s = score(["6462207"], text, kind="chain", chain=KEYCHAIN, question=KEYCHAIN_Q, answer_prefix=KEYCHAIN_PREFIX)
    assert s.partial == pytest.approx(partial) and s.correct is correct


def test_chain_extracted_in_order():
    s = score(["Dov"], " Cleo, then Bram", kind="chain", chain=CHAIN, question="Who?", answer_prefix="It is")
    assert s.extracted == ["Cleo", "Bram"] and s.partial == pytest.approx(2 / 3)


# --- edit similarity ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "a,b,dist",
    [
        ("kitten", "sitting", 3),
        ("flaw", "lawn", 2),
        ("", "", 0),
        ("abc", "", 3),
        ("abc", "abc", 0),
        ("intention", "execution", 5),
    ],
)
def test_levenshtein_known(a, b, dist):
    assert levenshtein(a, b) == dist == levenshtein(b, a)


def test_similarity_values():
    assert similarity("kitten", "sitting") == pytest.approx(1 - 3 / 7)
    assert similarity("", "") == 1.0 and similarity("abc", "") == 0.0
    assert similarity(HEX, HEX[:20]) == pytest.approx(0.5)


def test_levenshtein_matches_reference_recursion():
    rng = random.Random(7)

    def ref(a, b):
        @cache
        def d(i, j):
            if i == 0 or j == 0:
                return i + j
            return min(d(i - 1, j) + 1, d(i, j - 1) + 1, d(i - 1, j - 1) + (a[i - 1] != b[j - 1]))

        return d(len(a), len(b))

    for _ in range(200):
        a = "".join(rng.choice("abc") for _ in range(rng.randint(0, 9)))
        b = "".join(rng.choice("abc") for _ in range(rng.randint(0, 9)))
        assert levenshtein(a, b) == ref(a, b)
