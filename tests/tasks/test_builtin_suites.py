"""Every built-in suite loads, and each of its tasks builds at its shortest length (`Suite.check`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxprobe.evals.run.send.inline_suite import suite_from_args
from ctxprobe.tasks.build import builder_for
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.suite import builtin_suites, load_suite
from ctxprobe.tasks.token_counter import make_token_counter


def test_the_builtin_suites_are_the_documented_ones() -> None:
    assert {
        "quick",
        "quick-independent",
        "nightly",
        "nightly-independent",
        "ruler",
        "capacity",
        "hard",
        "hard-quick",
    } <= set(builtin_suites())


@pytest.mark.parametrize(
    ("nested", "independent"), [("quick", "quick-independent"), ("nightly", "nightly-independent")]
)
def test_a_nested_suite_shows_every_cell_its_independent_twin_shows(nested: str, independent: str) -> None:
    """Going nested changed the layout, not what the table shows: the same families with the same parameters,
    lengths, depths and seeds (the quick suite's 16 cells: niah single 1K-4K x 0/50/100, multikey at 2K, recall
    at 1K, multihop at 1K and depth 25)."""
    builder = builder_for(make_token_counter("estimate"))

    def cells(name: str) -> list[tuple[object, ...]]:
        return sorted(
            (r.family, json.dumps(r.params, sort_keys=True), r.context_tokens, r.depth, r.seed)
            for r in load_suite(name).recipes(builder.recipe_tokenizer)
        )

    assert (load_suite(nested).layout, load_suite(independent).layout) == ("nested", "independent")
    assert cells(nested) == cells(independent)
    assert len(cells("quick")) == 16 and {c[0] for c in cells("quick")} == {"niah", "recall", "multihop"}


QA = Path(__file__).parent / "fixtures" / "qa"


@pytest.mark.parametrize("name", builtin_suites())
def test_a_builtin_suite_checks(name: str) -> None:
    suite = suite_from_args(
        name, None, None, None, None, None, None, None, data={"qa": f"hf:{QA / 'squad.json'},hf:{QA / 'hotpotqa.json'}"}
    )
    assert suite.name == name and suite.tasks and len(suite.tasks) == len(load_suite(name).tasks)
    suite.check()


def test_the_ruler_suite_has_rulers_13_tasks_and_leaves_out_qa_without_a_dataset(
    capsys: pytest.CaptureFixture[str],
) -> None:
    full = load_suite("ruler")
    assert len(full.tasks) == 13
    families = [t.family for t in full.tasks]
    assert families.count("niah") == 8 and families.count("aggregate") == 2 and families.count("qa") == 2
    assert {t.haystack for t in full.tasks} == {None, "noise:ruler", "needle", "needle:uuid"}
    without = suite_from_args("ruler", None, None, None, None, None, None, None)
    assert len(without.tasks) == 11 and "2 qa task(s) left out" in capsys.readouterr().err
    only_squad = suite_from_args(
        "ruler", None, None, None, None, None, None, None, data={"qa": f"hf:{QA / 'squad.json'}"}
    )
    [qa] = [t for t in only_squad.tasks if t.family == "qa"]
    assert qa.params["expect"] == "squad" and qa.params["dataset"].endswith("squad.json")


def test_the_hard_suites_hold_the_hard_families_and_their_controls() -> None:
    hard, quick = load_suite("hard"), load_suite("hard-quick")
    assert {t.family for t in hard.tasks} == {t.family for t in quick.tasks} == {"latent", "graphwalk", "mrcr", "niah"}
    assert min(hard.lengths) == 32768 and max(hard.lengths) == 1_000_000 and max(quick.lengths) <= 4096
    for suite in (hard, quick):  # every latent task beside its literal control
        cues = [(t.params.get("hops", 1), t.params.get("cue", "latent")) for t in suite.tasks if t.family == "latent"]
        assert all((hops, "literal") in cues for hops, cue in cues if cue == "latent")
    assert quick.size() <= 60  # a few minutes on the embedded engine


def test_a_builtin_name_is_the_builtin_even_beside_a_folder_or_file_of_that_name(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "nightly").mkdir()  # a results folder named after the suite
    (tmp_path / "quick").write_text("not: a suite\n")
    assert load_suite("nightly").name == "nightly" and load_suite("quick").name == "quick"
    with pytest.raises(UserError, match="not a regular file"):
        load_suite("./nightly")  # a path names the path
