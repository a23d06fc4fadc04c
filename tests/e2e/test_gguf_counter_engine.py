"""The offline GGUF token counter (tasks/gguf_counter.py) gives the running engine's own token ids: on
every built-in haystack (Chinese prose too) and on every task family's prompt templates (Chinese ones too),
against llama-server's /tokenize."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Literal, get_args, get_origin

import pytest

from ctxprobe.runners.launcher import EmbeddedEngine
from ctxprobe.runners.server_tokenizer import ServerTokenizer
from ctxprobe.tasks.families.needles_file import load_needles
from ctxprobe.tasks.haystack import make_haystack
from ctxprobe.tasks.registry import get_family, known_families, validate_params
from ctxprobe.tasks.sized import is_sized
from ctxprobe.tasks.token_counter import make_token_counter

pytestmark = pytest.mark.engine

HAYSTACKS = ("prose", "code", "legal", "noise", "prose:zh")


@pytest.fixture(scope="module")
def pair(embedded_engine: EmbeddedEngine) -> tuple[object, ServerTokenizer]:
    return make_token_counter("local:gemma3-270m"), ServerTokenizer(embedded_engine.base_url, "llama-server")


def texts_of(kind: str) -> list[str]:
    """Units from the start and far in, and the same units joined into long texts."""
    haystack = make_haystack(kind)
    units = haystack.units(0, 400) + haystack.units(50_000, 50_200)
    joined = ["".join(units[i : i + 100]) for i in range(0, len(units), 100)]
    return (
        units
        + joined
        + [
            haystack.wrap_needle("The special magic number for the harbour is 4821937."),
            haystack.wrap_needle("关于amber-lobster的特殊魔法数字之一是：4821937。"),
        ]
    )


@pytest.mark.parametrize("kind", HAYSTACKS)
def test_haystacks_tokenize_as_the_engine_does(pair: tuple, kind: str) -> None:
    local, server = pair
    for text in texts_of(kind):
        assert local.token_ids(text) == server.token_ids(text), text[:200]
    assert local.bos_tokens == server.bos_tokens == 1


@pytest.mark.parametrize("kind", HAYSTACKS)
def test_a_batched_server_count_is_one_call_per_text(pair: tuple, kind: str) -> None:
    """The server counter's batched count (a list in one /tokenize call) against one call per text."""
    _, server = pair
    texts = texts_of(kind)
    assert server.counts_batches
    assert server.count_many(texts) == [server.count(t) for t in texts]


def param_choices(family: object) -> list[dict[str, object]]:
    """The defaults, then each choice of each Literal-typed parameter (variants, kinds) on its own."""
    model = validate_params(family, {}).__class__  # type: ignore[arg-type]
    choices: list[dict[str, object]] = [{}]
    for name, field in model.model_fields.items():
        if get_origin(field.annotation) is Literal:
            choices += [{name: value} for value in get_args(field.annotation)]
    return choices


QA_FIXTURES = Path(__file__).resolve().parents[1] / "tasks" / "fixtures" / "qa"
NEEDLE_ITEMS = load_needles(str(Path(__file__).resolve().parents[1] / "tasks" / "fixtures" / "needles" / "facts.jsonl"))


def test_task_templates_tokenize_as_the_engine_does(pair: tuple) -> None:
    local, server = pair
    texts = set()
    for name in known_families():
        family = get_family(name)
        for params in param_choices(family):
            for mode in ("completions", "chat"):
                for seed in range(2):
                    if name == "qa":  # a user's dataset: the test's fixture of the format the task expects
                        kind = "hotpotqa" if params.get("expect") == "hotpotqa" else "squad"
                        params = {**params, "dataset": f"hf:{QA_FIXTURES / kind}.json"}
                    if name == "needles":  # a user's needle file: the test's items, in turn
                        params = {**params, **NEEDLE_ITEMS[(seed + len(texts)) % len(NEEDLE_ITEMS)]}
                    if name == "mrcr" and params.get("question_position", "end") != "end":
                        continue  # refused by design: mrcr's question is the conversation's last turn
                    checked, rng = validate_params(family, params), random.Random(seed)
                    draft = (
                        family.sized_draft(checked, mode, rng, 2048, 40)
                        if is_sized(family)  # whole prompts
                        else family.draft(checked, 50.0, mode, rng)
                    )
                    texts |= {
                        draft.head,
                        draft.tail,
                        draft.question,
                        draft.answer_prefix,
                        *(n.text for n in draft.needles),
                    }
    assert len(texts) > 100
    for text in texts:
        assert local.token_ids(text) == server.token_ids(text), text[:200]
