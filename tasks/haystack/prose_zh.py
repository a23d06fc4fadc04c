"""The `prose:zh` haystack: Chinese essay-like paragraphs from a small grammar, generated offline and
deterministically as `prose` is (the same block seeding, its own vocabulary and templates).

Units are sentences ending in `。`, `！` or `？`: the first of a paragraph starts with "\\n\\n", the others
with nothing (Chinese puts no space between sentences), and an inserted needle is a sentence of its own with
no leading space. No digits, Latin letters, quotation marks or brackets occur, and no sentence starts with a
mark: a tokenizer that joins `。` to a following `“` or `（` (Gemma's does) never sees such a pair, so a
prompt's token count is still the sum of its units'."""

from __future__ import annotations

from functools import cache

from ctxprobe.tasks.haystack import prose_zh_vocab as vocab
from ctxprobe.tasks.haystack.prose import ProseHaystack, compile_topic
from ctxprobe.tasks.haystack.prose_vocab import Topic

TEMPLATES = (
    "{T}，{W}{R}{V}了{N}，又把{N}放回了{L}。",
    "{W}在{L}{R}{V}着那些{J}的{N}。",
    "谁也记不清是谁最先把{N}搬到{L}的。",
    "等到{W}赶来的时候，{N}早已被{V}好，{L}也变得{J}了。",
    "{W}在{L}停下脚步，看了看{J}的{N}，又{R}走开了。",
    "天色渐晚，{L}越来越{J}，{N}一件一件地被{V}好。",
    "那些{N}并没有什么特别，可{W}还是{V}了两遍。",
    "这活儿很{J}，但{W}从来没有抱怨过{N}。",
    "{L}总有一件{J}的{N}在等着人。",
    "{T}，{L}很{J}，{N}也很{J}。",
    "{P}里的每一件{N}都有它的位置，{W}{R}{V}着每一件。",
    "{W}和一位邻居{T}一起{V}{N}。",
    "很少有人知道，{W}的每一件{N}都是亲手{V}的。",
    "来到{P}的人常常会问，为什么这里的{N}这么{J}。",
    "{T}，人们很容易注意到{N}显得多么{J}。",
    "从{L}望过去，{N}显得{J}，又有些{J}。",
    "{V}{N}的声音{T}传遍了{L}。",
    "站在{L}的人，会看见一件{J}的{N}和一排{J}的{N}。",
    "因为{N}太{J}了，{W}总是先{R}{V}它，再去碰别的东西。",
    "每当{N}变得{J}，{W}就会把它们带到{L}去{V}。",
    "虽然{W}{R}{V}了{N}，可{N}还是需要{X}。",
    "要是{N}放得太久，{L}的{N}就会变得{J}。",
    "所以{W}总在{T}{V}{N}，因为{X}比速度更要紧。",
    "在{P}，{X}是慢慢学来的，{W}{V}{N}的时候也记着这一点。",
    "日子久了，{N}变得{J}，这也说明了{W}为什么总是{R}{V}它们。",
    "{W}曾经说过，一件{J}的{N}胜过一车{J}的{N}。",
    "很多事情都取决于{X}，哪怕是一件{J}的{N}，也可能耽误了{L}的活儿。",
    "{P}的{X}不在于{N}，而在于在这里干活的人。",
    "你见过比{L}更{J}的地方吗？",
    "{W}笑着说，{N}又被{V}好了！",
    "{T}的{P}格外{J}，连{N}都显得{J}。",
    "{W}把{J}的{N}{R}摆在{L}，转身又去忙别的事。",
)


def _topic_pools(topic: Topic) -> dict[str, tuple[str, ...]]:
    return {
        "W": topic.people,
        "L": topic.places,
        "P": (topic.setting,),
        "N": topic.things * 3 + vocab.GENERAL_THINGS,
        "J": topic.adjectives * 2 + vocab.GENERAL_ADJECTIVES,
        "V": topic.verbs,
        "R": vocab.ADVERBS,
        "T": vocab.TIMES,
        "X": vocab.ABSTRACTS,
    }


class ChineseProseHaystack(ProseHaystack):
    kind = "prose:zh"
    version = "1"
    compiled = tuple(compile_topic(_topic_pools(topic), TEMPLATES) for topic in vocab.TOPICS)
    sentence_separator = ""  # Chinese puts no space between sentences

    def wrap_needle(self, sentence: str) -> str:
        return sentence.strip()


@cache
def make_prose_zh() -> ChineseProseHaystack:
    return ChineseProseHaystack()
