"""Every family and kind, built at a real token length: an independent reader of the prompt text alone
(regexes written here, not the family code) must derive the expected answer from it."""

from __future__ import annotations

import re

import pytest

from ctxprobe.tasks.build import builder_for, token_counter
from ctxprobe.tasks.sample import Sample

COUNTER = "local:gemma3-270m"
HAYSTACKS = ("noise", "prose")


def build(
    family: str,
    params: dict[str, object],
    haystack: str,
    tokens: int = 3072,
    depth: float = 30.0,
    mode: str = "completions",
    seed: int = 0,
) -> Sample:
    builder = builder_for(token_counter(COUNTER))
    recipe = builder.recipe(
        family=family, params=params, haystack=haystack, context_tokens=tokens, depth=depth, mode=mode, seed=seed
    )
    sample = builder.build(recipe)
    assert sample.planned_tokens <= tokens
    for spot in sample.needles:
        assert sample.prompt[spot.char_offset :].startswith(spot.text), spot
    return sample


def occurrences(prompt: str, text: str) -> int:
    return len(re.findall(r"(?<![0-9A-Za-z])" + re.escape(text) + r"(?![0-9A-Za-z])", prompt))


def roles(sample: Sample) -> dict[str, int]:
    out: dict[str, int] = {}
    for spot in sample.needles:
        out[spot.role] = out.get(spot.role, 0) + 1
    return out


def split_names(text: str) -> list[str]:
    """`a`, `a and b`, `a, b and c` -> names."""
    head, _, last = text.rpartition(" and ")
    return [*head.split(", "), last] if head else [last]


# --- niah ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("haystack", HAYSTACKS)
@pytest.mark.parametrize("value_kind", ["number", "word", "uuid"])
@pytest.mark.parametrize("variant", ["single", "multikey", "multivalue", "multiquery"])
def test_niah_answer_is_in_prompt(variant: str, value_kind: str, haystack: str) -> None:
    params = {"variant": variant, "value_kind": value_kind, "distractors": 3, "values": 3, "queries": 3}
    sample = build("niah", params, haystack)
    prompt = sample.prompt
    asked = re.search(r"What (?:is|are all) the special magic \w+ for (.+?) mentioned in the provided text\?", prompt)
    assert asked is not None
    keys = split_names(asked.group(1))
    facts = re.findall(r"One of the special magic \w+ for ([a-z]+-[a-z]+) is: ([0-9a-z-]+)\.", prompt)
    found = [value for key in keys for k, value in facts if k == key]
    assert sorted(found) == sorted(sample.expected.answers)  # a key's values may lie in any order
    for value in found:
        assert occurrences(prompt, value) == 1
    others = [k for k, _ in facts if k not in keys]
    if variant == "multikey":
        assert len(others) == 3 == roles(sample)["distractor"]
        assert len(set(others)) == 3
    else:
        assert others == []
    assert len(facts) == len(sample.needles)


# --- recall ----------------------------------------------------------------------------------------


def recall_answer(prompt: str, kind: str) -> tuple[str, int]:
    """The string the prompt's question asks for, and how many needles of the kind the prompt holds."""
    if kind in ("hex", "uuid"):
        noun, pattern = ("access token", "[0-9a-f]+") if kind == "hex" else ("record id", "[0-9a-f-]{36}")
        key = re.search(rf"What is the {noun} for (\S+) mentioned in the provided text\?", prompt)
        assert key is not None
        facts = dict(re.findall(rf"The {noun} for ([a-z]+-[a-z]+) is ({pattern})\.", prompt))
        return facts[key.group(1)], len(facts)
    if kind == "code":
        name = re.search(r"return statement of the function (\w+) defined", prompt)
        assert name is not None
        lines = prompt.split("\n")
        start = lines.index(next(line for line in lines if line.startswith(f"def {name.group(1)}(")))
        body = []
        for line in lines[start + 1 :]:
            if not line.startswith(" "):
                break
            body.append(line.strip())
        returns = [line for line in body if line.startswith("return ")]  # the first is the function's own
        generated = r"^def \w+\(\w+, \w+\):\n    (\w+) = .*\n    if \1 >= \d+:\n        return round\("
        return returns[0], len(re.findall(generated, prompt, flags=re.M))
    label = re.search(r"What is the exact text of (Clause \d+-[A-Z]) in the provided text\?", prompt)
    assert label is not None
    text = re.search(re.escape(label.group(1)) + r"\. (.+?\.)(?=\s|$)", prompt)
    assert text is not None
    return text.group(1), len(re.findall(r"Clause \d+-[A-Z]\. ", prompt))


RECALL_CASES = [(kind, h) for kind in ("hex", "uuid", "code", "clause") for h in HAYSTACKS]
RECALL_CASES += [("code", "code"), ("clause", "legal")]


@pytest.mark.parametrize("distractors", [0, 2])
@pytest.mark.parametrize(("kind", "haystack"), RECALL_CASES)
def test_recall_string_is_in_prompt(kind: str, haystack: str, distractors: int) -> None:
    sample = build("recall", {"kind": kind, "distractors": distractors, "length": 48}, haystack)
    answer, needles = recall_answer(sample.prompt, kind)
    assert sample.expected.kind == "string"
    assert [answer] == sample.expected.answers
    assert occurrences(sample.prompt, answer) == 1
    assert needles == distractors + 1 == len(sample.needles)
    assert roles(sample).get("distractor", 0) == distractors
    if kind == "hex":
        assert len(answer) == 48
    assert sample.max_tokens >= 16


# --- multihop --------------------------------------------------------------------------------------


def follow_vartrack(prompt: str) -> tuple[list[str], int]:
    """Variables holding the asked value (in assignment order), and how many chains the prompt holds."""
    value = re.search(r"Find all variables that are assigned the value (\d+) in the text above\.", prompt)
    assert value is not None
    roots = re.findall(r"VAR ([A-Z]{5}) = (\d+)\.", prompt)
    links = dict((src, dst) for dst, src in re.findall(r"VAR ([A-Z]{5}) = VAR ([A-Z]{5})\.", prompt))
    names = [name for name, v in roots if v == value.group(1)]
    assert len(names) == 1
    while names[-1] in links:
        names.append(links[names[-1]])
    return names, len(roots)


def follow_keychain(prompt: str) -> tuple[list[str], int]:
    first = re.search(r"Starting from key (\S+) and following the keys, what value", prompt)
    assert first is not None
    step = dict(re.findall(r"The key (\S+) opens the box holding key (\S+)\.", prompt))
    ends = dict(re.findall(r"The key (\S+) opens the box holding the value (\d+)\.", prompt))
    chain, key = [], first.group(1)
    while key in step:
        key = step[key]
        chain.append(key)
    return [*chain, ends[key]], len(ends)


def follow_kinship(prompt: str) -> tuple[list[str], int]:
    child = re.search(r"Who is the eldest ancestor of (\w+) mentioned in the text\?", prompt)
    assert child is not None
    facts = re.findall(r"(\w+) is (\w+)'s parent\.", prompt)
    parent = {c: p for p, c in facts}
    assert len(parent) == len(facts)  # nobody has two parents: every chain is unambiguous
    chain, name = [], child.group(1)
    while name in parent:
        name = parent[name]
        chain.append(name)
    roots = {p for p, _ in facts} - set(parent)
    order = [p for p, _ in facts if p in chain]
    assert len(chain) < 3 or order not in (chain, chain[::-1])  # facts appear shuffled
    return chain, len(roots)


FOLLOW = {"vartrack": follow_vartrack, "keychain": follow_keychain, "kinship": follow_kinship}


@pytest.mark.parametrize("haystack", HAYSTACKS)
@pytest.mark.parametrize("chains", [0, 2])
@pytest.mark.parametrize("placement", ["spread", "random"])
@pytest.mark.parametrize("kind", ["vartrack", "keychain", "kinship"])
def test_multihop_chain_is_derivable(kind: str, placement: str, chains: int, haystack: str) -> None:
    hops = 4
    sample = build("multihop", {"kind": kind, "hops": hops, "chains": chains, "placement": placement}, haystack)
    found, chain_count = FOLLOW[kind](sample.prompt)
    assert chain_count == chains + 1
    expected = sample.expected
    if kind == "vartrack":
        assert expected.kind == "values" and found == expected.answers and len(found) == hops + 1
        assert f"{hops + 1} variables are assigned the value" in sample.prompt
        per_chain = hops + 1
    else:
        assert expected.kind == "chain" and found == expected.chain and expected.answers == [found[-1]]
        assert len(found) == hops
        per_chain = hops
    # Every name a chain introduces is used by the next fact once; the last one only where introduced.
    for name in found[:-1]:
        assert occurrences(sample.prompt, name) == 2
    assert occurrences(sample.prompt, found[-1]) == 1
    counts = roles(sample)
    assert counts["target"] == 1 and counts.get("hop", 0) == per_chain - 1
    assert counts.get("distractor", 0) == chains * per_chain
    assert sorted(s.answer for s in sample.needles if s.role != "distractor") == sorted(found)


def test_multihop_spread_places_hops_from_depth_to_end() -> None:
    sample = build("multihop", {"kind": "keychain", "hops": 5, "chains": 0}, "prose", tokens=4096, depth=20.0)
    depths = [s.depth_pct for s in sample.needles]
    assert depths == sorted(depths)
    assert depths[0] == pytest.approx(20.0, abs=3.0) and depths[-1] > 95.0


def test_chat_mode_has_no_answer_prefix() -> None:
    sample = build("recall", {"kind": "clause"}, "prose", tokens=2048, mode="chat")
    assert sample.answer_prefix == ""
    assert sample.prompt.endswith("Answer with the answer only.")
    assert recall_answer(sample.prompt, "clause")[0] == sample.expected.answers[0]


def test_kinship_needs_enough_names() -> None:
    from ctxprobe.tasks.errors import UserError

    with pytest.raises(UserError, match="distinct names"):
        build("multihop", {"kind": "kinship", "hops": 16, "chains": 8}, "prose")
