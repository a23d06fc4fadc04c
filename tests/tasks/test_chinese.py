"""Chinese tasks (`lang: zh`) and the `prose:zh` haystack: generated deterministically with no digit, Latin
letter or quotation mark, sentence units that end at 。！？ and whose Gemma token counts add up exactly;
Chinese framing with the same keys and values as English, prompts at their exact length, needles once at
their recorded offsets, English-only layouts refused, default prompts and ids unchanged, a Chinese text of
the user's own split at its sentence ends, and answers in Chinese scored by the same rules."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from ctxprobe.evals.scoring.score import score_sample
from ctxprobe.tasks.assemble import tolerance
from ctxprobe.tasks.build import builder_for, token_counter
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.families.chinese import join_names
from ctxprobe.tasks.haystack import make_haystack
from ctxprobe.tasks.haystack.prose_zh import ChineseProseHaystack
from ctxprobe.tasks.haystack.user_text import split_units
from ctxprobe.tasks.registry import get_family, validate_params
from ctxprobe.tasks.sample import Recipe
from ctxprobe.tasks.suite import Suite

GEMMA = "local:gemma3-270m"
CASES = [
    ("niah", {}),
    ("niah", {"variant": "multikey"}),
    ("niah", {"variant": "multivalue", "value_kind": "uuid"}),
    ("niah", {"variant": "multiquery", "value_kind": "word"}),
    ("recall", {"kind": "hex"}),
    ("recall", {"kind": "uuid", "distractors": 2}),
    ("recall", {"kind": "code"}),
    ("multihop", {}),
    ("multihop", {"kind": "keychain"}),
    ("multihop", {"kind": "kinship"}),
]
_CJK = re.compile(r"[\u4e00-\u9fff]")


def _build(
    family: str,
    params: dict[str, object],
    lang: str = "zh",
    counter: str = GEMMA,
    length: int = 2048,
    depth: float = 40.0,
    mode: str = "completions",
    haystack: str = "prose:zh",
):
    builder = builder_for(token_counter(counter))
    extra = {"lang": lang} if lang != "en" else {}
    recipe = builder.recipe(
        family=family,
        params={**params, **extra},
        haystack=haystack,
        context_tokens=length,
        depth=depth,
        seed=5,
        mode=mode,
    )
    return builder, builder.build(recipe)


def test_the_chinese_haystack_is_deterministic_and_clean() -> None:
    first, fresh = make_haystack("prose:zh"), ChineseProseHaystack()
    assert first.units(0, 3000) == fresh.units(0, 3000) and first.units(70_000, 70_500) == fresh.units(70_000, 70_500)
    assert first.fingerprint != make_haystack("prose").fingerprint
    units = first.units(0, 5000)
    text = "".join(units)
    assert not re.search(r"[0-9A-Za-z\"'“”‘’「」『』（）()\[\]]", text)
    assert all(u[-1] in "。！？" and (u.startswith("\n\n") or _CJK.match(u)) for u in units)
    assert sum(u.startswith("\n\n") for u in units) > 500 and len(set(units)) > 0.95 * len(units)
    assert (
        first.wrap_needle(" 关于amber-lobster的特殊魔法数字之一是：1234567。")
        == "关于amber-lobster的特殊魔法数字之一是：1234567。"
    )


@pytest.mark.parametrize("start", [0, 40_000])
def test_its_unit_counts_add_up_exactly_with_gemma(start: int) -> None:
    counter = token_counter(GEMMA)
    units = make_haystack("prose:zh").units(start, start + 1500)
    needles = [_build("niah", {})[1].needles[0].text, _build("multihop", {"kind": "kinship"})[1].needles[0].text]
    for at in range(0, len(units), 37):
        units.insert(at, needles[at % 2])
    assert sum(counter.count_many(units)) == counter.count_many(["".join(units)])[0]


@pytest.mark.parametrize("family,params", CASES)
@pytest.mark.parametrize("mode", ["completions", "chat"])
def test_chinese_prompts_are_exact_with_their_needles_once(family: str, params: dict[str, object], mode: str) -> None:
    builder, zh = _build(family, params, mode=mode)
    counted = builder.counter.count_many([zh.prompt])[0] + builder.counter.bos_tokens
    lead = builder.lead_tokens(mode)
    assert counted - builder.counter.bos_tokens + lead == zh.planned_tokens
    assert 2048 - tolerance(2048) <= zh.planned_tokens <= 2048
    assert _CJK.search(zh.question) and (mode == "chat" or _CJK.search(zh.answer_prefix))
    assert zh.prompt.startswith("下面的文本中") or zh.prompt.startswith("请记住")
    for spot in zh.needles:
        assert zh.prompt.count(spot.text) == 1 and zh.prompt[spot.char_offset :].startswith(spot.text)
        before = builder.counter.count_many([zh.prompt[: spot.char_offset]])[0] + lead
        assert before == spot.token_offset
        assert spot.answer in spot.text and (spot.text.endswith("。") or params.get("kind") == "code")
    for answer in zh.expected.answers:
        assert answer in zh.prompt


def test_chinese_asks_with_the_keys_and_values_english_draws() -> None:
    family = get_family("niah")
    en = family.draft(validate_params(family, {}), 50.0, "completions", random.Random(3))
    zh = family.draft(validate_params(family, {"lang": "zh"}), 50.0, "completions", random.Random(3))
    assert en.expected == zh.expected and en.unique == zh.unique
    assert en.needles[0].text != zh.needles[0].text and en.unique[0] in zh.question


def test_english_only_layouts_are_refused() -> None:
    for family, params in (
        ("niah", {"template": "ruler"}),
        ("multihop", {"template": "ruler"}),
        ("recall", {"kind": "clause"}),
    ):
        with pytest.raises(UserError, match="lang 'en'"):
            validate_params(get_family(family), {**params, "lang": "zh"})
    with pytest.raises(UserError, match="lang"):
        validate_params(get_family("niah"), {"lang": "fr"})


def test_the_default_language_leaves_recipes_and_prompts_as_they_were() -> None:
    for name in ("niah", "recall", "multihop"):
        assert "lang" not in validate_params(get_family(name), {}).model_dump(mode="json")
        assert validate_params(get_family(name), {"lang": "en"}).model_dump(mode="json") == validate_params(
            get_family(name), {}
        ).model_dump(mode="json")
    builder = builder_for(token_counter(GEMMA))

    def recipes(params: dict[str, object]) -> list[Recipe]:
        return Suite.model_validate(
            {
                "name": "en",
                "lengths": [1024],
                "depths": [0, 50],
                "tasks": [{"family": "niah", "params": params}, {"family": "multihop", "params": params}],
            }
        ).recipes(builder.recipe_tokenizer)

    plain, spelled = recipes({}), recipes({"lang": "en", "question_position": "end"})
    assert [r.sample_id() for r in plain] == [r.sample_id() for r in spelled]
    assert builder.build(plain[1]).prompt == builder.build(spelled[1]).prompt


def test_the_question_goes_first_in_chinese_too() -> None:
    _, start = _build("niah", {"question_position": "start"})
    _, end = _build("niah", {})
    assert start.prompt.index(start.question) < start.needles[0].char_offset
    assert start.prompt.endswith(end.answer_prefix) and start.prompt.count(start.question) == 1


def test_a_chinese_text_is_split_at_its_sentence_ends(tmp_path: Path) -> None:
    assert split_units("第一句。第二句！第三句？“引号”不拆开。\n\n新的一段。Then English. More.") == [
        "\n\n第一句。",
        "第二句！",
        "第三句？“引号”不拆开。",
        "\n\n新的一段。Then English.",
        " More.",
    ]
    path = tmp_path / "zh.txt"
    path.write_text("".join(make_haystack("prose:zh").units(0, 400)), encoding="utf-8")
    haystack = make_haystack(f"file:{path}")
    assert haystack.units(0, 400) == make_haystack("prose:zh").units(0, 400)
    assert haystack.wrap_needle("关于x的值是：1。") == "关于x的值是：1。"
    assert haystack.wrap_needle("The value is 1.") == " The value is 1."
    builder, sample = _build("niah", {}, haystack=f"file:{path}", length=1024)
    assert builder.counter.count_many([sample.prompt])[0] + 1 == sample.planned_tokens


def test_chinese_answers_are_scored_by_the_same_rules() -> None:
    _, niah = _build("niah", {}, mode="chat")
    value = niah.expected.answers[0]
    assert score_sample(niah, f"文中提到的特殊魔法数字是：{value}。").correct
    assert score_sample(niah, f"答案是{value}。").correct
    assert not score_sample(niah, f"答案是1{value}。").correct  # whole tokens: a longer number is not it
    _, many = _build("niah", {"variant": "multiquery"}, mode="chat")
    listed = "、".join(many.expected.answers[:-1])
    partial = score_sample(many, f"它们分别是{listed}。")
    assert not partial.correct and partial.partial == pytest.approx(3 / 4)
    assert score_sample(many, f"它们分别是{join_names(many.expected.answers)}。").correct
    _, recall = _build("recall", {"kind": "hex"})
    token = recall.expected.answers[0]
    for said in (f"{token}。", f"文中提到的访问令牌是{token}。", f"访问令牌：{token}", f"令牌是“{token}”，没错。"):
        assert score_sample(recall, said).correct, said
    for wrong in (f"访问令牌是0x{token}。", f"访问令牌是{token}0。", f"访问令牌是{token[:-1]}。"):
        assert not score_sample(recall, wrong).correct, wrong
    _, kin = _build("multihop", {"kind": "kinship"})
    chain = kin.expected.chain
    assert score_sample(kin, f"{chain[-1]}。").correct
    halfway = score_sample(kin, f"{chain[1]}。")
    assert not halfway.correct and halfway.partial == pytest.approx(2 / len(chain))
