"""`mrcr`: OpenAI MRCR-style multi-round co-reference: reproduce the i-th of several identical requests' answers.

A synthetic conversation (`mrcr_text.py`: requests of four kinds over forty topics, answers written from
small grammars) holds `needles` identical requests ("write a poem about tapirs"), the first at the recipe's
depth and the others spread from there to the end, among requests for the same kind on other topics, other
kinds on the same topic, and others. The last user turn asks: "Prepend HASH to the 2nd (1 indexed) poem about
tapirs. Do not include any other text in your response." The expected response is HASH followed by that
answer, scored by MRCR's rule (`score_mrcr`, at the end of this module).

The number of filler turns is the largest that fits the length (`tasks/sized.py`), and the gap a whole turn
would overrun is filled inside the conversation: one more filler exchange, just before the last filler, whose
answer is cut to the most words that fit (`fill`), so the prompt lands within the length's tolerance (a turn
is up to ~120 tokens; the tolerance is 0.5 % or 32). In chat mode the prompt is
a real `messages` array (user and assistant turns), its length counted with the endpoint's chat template
(`tasks/chat_turns.py`); in completions mode it is a transcript (`User: ...` / `Assistant: ...`) that ends
with `Assistant:`. Each needle's user turn is recorded with its offset.

`dataset: hf:PATH` reads OpenAI's published MRCR parquet instead (columns `prompt` (the messages as JSON),
`answer`, `random_string_to_prepend`, `n_needles`, ...): a sample is a published row with `needles` needles,
the longest that fits the length, a seed moving a few rows shorter; its prompt as published (fixed lengths:
not the exact length)."""

from __future__ import annotations

import json
import random
from difflib import SequenceMatcher
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ctxprobe.tasks.answers.kinds import answer_kind
from ctxprobe.tasks.answers.region import AnswerRegion, strip_reasoning
from ctxprobe.tasks.answers.verdict import Score
from ctxprobe.tasks.families import mrcr_text
from ctxprobe.tasks.families.dataset_digest import digest_field
from ctxprobe.tasks.families.published_rows import load_rows, row_at, some_rows, with_published_dataset
from ctxprobe.tasks.families.vocab import spread_depths
from ctxprobe.tasks.registry import Draft, NeedleDraft, task_family
from ctxprobe.tasks.sample import Expected, Mode, Sample
from ctxprobe.tasks.sized import Sized

HEAD = "The following is a conversation between a user and an assistant."
FILL_WORDS = 256  # the fill exchange's answer at most: more tokens than the longest filler turn
NEAR = 0.25  # the share of filler requests on the needle's topic (another kind), and of those of its kind
DATASET_COLUMNS = ("prompt", "answer", "random_string_to_prepend", "n_needles")
Message = dict[str, str]


class MrcrParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    needles: Literal[2, 4, 8] = Field(
        2, description="identical requests in the conversation; one of their answers is asked for"
    )
    dataset: str | None = Field(
        None, description="hf:PATH: OpenAI's MRCR parquet, kept locally, instead of generated conversations"
    )
    dataset_sha256: str | None = digest_field()

    @model_validator(mode="after")
    def _asked_last(self) -> MrcrParams:
        if getattr(self, "question_position", "end") != "end":  # the common parameter, added at registration
            raise ValueError("mrcr asks in the conversation's last turn: question_position is end")
        return self


def final_request(hash_: str, index: int, kind: str, topic: str) -> str:
    return (
        f"Prepend {hash_} to the {mrcr_text.ordinal(index)} (1 indexed) {kind} about {topic}. "
        "Do not include any other text in your response."
    )


def transcript(messages: list[Message]) -> tuple[str, str]:
    """Completions mode's text of a conversation: (everything before the last user turn, that turn and the cue)."""
    turns = [f"{'User' if m['role'] == 'user' else 'Assistant'}: {m['content']}" for m in messages]
    return f"{HEAD}\n\n" + "\n\n".join(turns[:-1]), f"\n\n{turns[-1]}\n\nAssistant:"


@task_family("mrcr", version="2")  # 2: filled to the length inside the conversation
class Mrcr(Sized):
    Params = MrcrParams

    runs_alone = True  # `--mrcr hf:PATH` without --suite or --family: a suite of this task alone

    @classmethod
    def expand_tasks(cls, tasks: list[dict[str, Any]], given: str | None) -> list[dict[str, Any]]:
        """The published MRCR file given on the command line (`--mrcr hf:PATH`) for the tasks naming none."""
        return with_published_dataset(tasks, cls.name, given)

    def max_size(self, params: BaseModel, length: int) -> int:
        p = MrcrParams.model_validate(params)
        return len(_published(p)) if p.dataset else max(1, length // 40)

    def fill_limit(self, params: BaseModel) -> int:
        """Words the fill exchange's answer may take (more than a turn's tokens); a published row: none."""
        return 0 if MrcrParams.model_validate(params).dataset else FILL_WORDS

    def sized_draft(self, params: BaseModel, mode: Mode, rng: random.Random, length: int, size: int) -> Draft:
        return self.sized_draft_at(params, mode, rng, length, size, 0.0)

    def sized_draft_at(
        self, params: BaseModel, mode: Mode, rng: random.Random, length: int, size: int, depth: float, fill: int = 0
    ) -> Draft:
        """The conversation with `size` filler turns, and with `fill` > 0 one more just before the last filler
        whose answer is its first `fill` words; the needles and the question are drawn first, and the fill's
        words from a generator of their own, so every size and fill has the same needles (the builder's search
        keeps them while it sizes the conversation)."""
        p = MrcrParams.model_validate(params)
        if p.dataset:
            return _published_draft(p, mode, rng, size)
        kind, topic = rng.choice(mrcr_text.KINDS), rng.choice(mrcr_text.TOPICS)
        asked = rng.randint(1, p.needles)
        hash_ = mrcr_text.hash_string(rng)
        answers = [mrcr_text.answer(kind, topic, rng) for _ in range(p.needles)]
        slots = [round(d / 100.0 * size) for d in spread_depths(depth, p.needles, rng, "spread")]
        filler = _fill_exchange(kind, topic, random.Random(rng.getrandbits(64)), fill)
        pairs: list[tuple[str, str, int]] = []  # request, answer, needle number (0: a filler)
        for i in range(size + 1):
            pairs += [(mrcr_text.request(kind, topic), answers[j], j + 1) for j, slot in enumerate(slots) if slot == i]
            if i == size - 1 and filler is not None:
                pairs.append((*filler, 0))
            if i < size:
                k, t = _filler(kind, topic, rng)
                pairs.append((mrcr_text.request(k, t), mrcr_text.answer(k, t, rng), 0))
        messages = [
            m for q, a, _ in pairs for m in ({"role": "user", "content": q}, {"role": "assistant", "content": a})
        ]
        messages.append({"role": "user", "content": final_request(hash_, asked, kind, topic)})
        needles = tuple(
            NeedleDraft(
                role="target" if n == asked else "distractor",
                text=f"User: {q}\n\nAssistant: {a}",
                answer=a,
                depth=round(100.0 * i / max(1, len(pairs)), 3),
            )
            for i, (q, a, n) in enumerate(pairs)
            if n
        )
        expected = Expected(kind="mrcr", answers=[hash_ + answers[asked - 1], hash_])
        return _draft(messages, mode, expected, needles)


def _fill_exchange(kind: str, topic: str, rng: random.Random, words: int) -> tuple[str, str] | None:
    """A filler request and the first `words` words of its answer (answers to it written one after another
    until there are enough words); None for no words."""
    if words <= 0:
        return None
    k, t = _filler(kind, topic, rng)
    text: list[str] = []
    while len(text) < words:
        text += mrcr_text.answer(k, t, rng).split(" ")
    return mrcr_text.request(k, t), " ".join(text[:words])


def _filler(kind: str, topic: str, rng: random.Random) -> tuple[str, str]:
    """A request other than the needles': on their topic, of their kind, or neither."""
    draw = rng.random()
    other_kinds = [k for k in mrcr_text.KINDS if k != kind]
    other_topics = [t for t in mrcr_text.TOPICS if t != topic]
    if draw < NEAR:
        return rng.choice(other_kinds), topic
    if draw < 2 * NEAR:
        return kind, rng.choice(other_topics)
    return rng.choice(other_kinds), rng.choice(other_topics)


def _published(p: MrcrParams) -> list[dict[str, Any]]:
    assert p.dataset is not None
    rows = [
        r for r in load_rows(p.dataset, "MRCR", DATASET_COLUMNS, p.dataset_sha256) if int(r["n_needles"]) == p.needles
    ]
    return some_rows(rows, p.dataset, f"n_needles {p.needles}")


def _published_draft(p: MrcrParams, mode: Mode, rng: random.Random, size: int) -> Draft:
    """Row `size - 1 - offset` of the shortest-first rows (as the graphwalk family reads GraphWalks)."""
    row = row_at(_published(p), size, rng)
    messages = [{"role": str(m["role"]), "content": str(m["content"])} for m in json.loads(row["prompt"])]
    expected = Expected(kind="mrcr", answers=[str(row["answer"]), str(row["random_string_to_prepend"])])
    return _draft(messages, mode, expected, ())


def _draft(messages: list[Message], mode: Mode, expected: Expected, needles: tuple[NeedleDraft, ...]) -> Draft:
    head, tail = transcript(messages)
    max_tokens = 64 + len(expected.answers[0]) // 2
    if mode == "chat":
        return Draft(
            head=head,
            tail=tail,
            question=messages[-1]["content"],
            answer_prefix="",
            needles=needles,
            expected=expected,
            max_tokens=max_tokens,
            messages=tuple(messages),
        )
    return Draft(
        head=head,
        tail=tail,
        question=messages[-1]["content"],
        answer_prefix="Assistant:",
        needles=needles,
        expected=expected,
        max_tokens=max_tokens,
    )


NEXT_TURN = "\n\nUser:"


def mrcr_ratio(response: str, answer: str, prepend: str) -> float:
    """MRCR's grade: 0 without the string at the start, else SequenceMatcher's ratio of what follows it."""
    if not response.startswith(prepend):
        return 0.0
    return float(SequenceMatcher(None, response.removeprefix(prepend), answer.removeprefix(prepend)).ratio())


def score_mrcr(sample: Sample, text: str) -> Score:
    """An `mrcr` answer by OpenAI MRCR's published rule: the response must start with the random string
    to prepend, else it scores 0; otherwise the partial credit is difflib's SequenceMatcher ratio of the rest
    against the expected answer with its string removed. Correct is an exact reproduction (the string and the
    answer, nothing before or after, surrounding whitespace aside).

    Reasoning before the response is dropped first; reasoning after it is part of it (not an exact reproduction). In completions mode the transcript goes on after the answer: the
    response is read up to the transcript's next turn (`\\n\\nUser:`), and the space a base model writes after
    `Assistant:` is not part of it. `Expected.answers` holds the expected response (string and answer) and the
    string alone."""
    answer, prepend = sample.expected.answers[0], sample.expected.answers[1]
    response = strip_reasoning(text)
    if sample.recipe.mode == "completions":
        response = response.split(NEXT_TURN, 1)[0].lstrip(" ")
    ratio = mrcr_ratio(response, answer, prepend)
    return Score(
        extracted=[response[: len(answer) + 40]],
        correct=response.strip() == answer.strip(),
        partial=ratio,
        unit="response" if sample.recipe.mode == "chat" else "response to the next turn",
    )


@answer_kind("mrcr")
def _mrcr(region: AnswerRegion, sample: Sample) -> Score:
    return score_mrcr(sample, region.output)  # MRCR's rule: the hash at the start of the whole output
