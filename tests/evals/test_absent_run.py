"""A run with absent needles against a fake engine (tests/runners/fake_engine.py): a server that always answers a
number scores 0 % on them, every answer `hallucinated`; one that abstains scores 100 %; the present questions'
recall is the same in both, apart from them; and in the nested layout an absent question is sent on its chain's
lane right after the present questions of its length, whose context it shares."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from ctxprobe.evals.cli.main import main
from ctxprobe.evals.run.send.order import send_groups
from ctxprobe.tasks.build import builder_for, token_counter
from ctxprobe.tasks.suite import load_suite
from tests.runners.fake_engine import FakeEngine

SUITE = {
    "name": "absent-beside",
    "lengths": "1k,2k",
    "depths": "0,100",
    "samples": 2,
    "layout": "nested",
    "mode": "chat",
    "tasks": [
        {"family": "niah", "params": {"variant": "single"}},
        {"family": "niah", "params": {"variant": "single", "absent": True}},
    ],
}


def _suite(tmp_path: Path) -> Path:
    path = tmp_path / "absent.yaml"
    path.write_text(yaml.safe_dump(SUITE))
    return path


@pytest.mark.parametrize(
    ("answer", "absent_accuracy", "attribution"),
    [
        ("The special magic number is 1234567.", 0.0, "hallucinated"),
        ("The text does not mention a special magic number for that key.", 1.0, None),
    ],
)
def test_absent_accuracy_against_a_server_that_always_answers_a_number_or_always_abstains(
    tmp_path: Path, answer: str, absent_accuracy: float, attribution: str | None
) -> None:
    with FakeEngine("vllm", context_length=1 << 16, answer=answer) as engine:
        code = main(
            [
                "run",
                "--endpoint",
                engine.url,
                "--suite",
                str(_suite(tmp_path)),
                "--token-counter",
                "estimate",
                "--quiet",
                "--cache-check",
                "off",
                "--results-dir",
                str(tmp_path / "runs"),
            ]
        )
    assert code == 0
    (run,) = (tmp_path / "runs").iterdir()
    records = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    absent = [r for r in records if r["sample"]["expected"]["kind"] == "absent"]
    assert len(absent) == len(records) // 2 == 8
    assert [r["score"]["correct"] for r in absent] == [absent_accuracy == 1.0] * 8
    assert {r["score"]["attribution"] for r in absent} == {attribution}
    by_context = pd.read_csv(run / "summary_by_context.csv")
    present = by_context[by_context["variant"] == "variant=single"]
    assert list(present["absent_accuracy"]) == [absent_accuracy] * 2 and list(present["absent_n"]) == [4, 4]
    assert list(present["accuracy"]) == [0.0, 0.0]  # a fixed number is no needle's value; no abstention counts


def test_a_nested_absent_question_goes_on_its_chains_lane_after_its_lengths_present_ones(tmp_path: Path) -> None:
    recipes = load_suite(str(_suite(tmp_path))).recipes(builder_for(token_counter("estimate")).recipe_tokenizer)
    groups = send_groups(recipes, "cache-aware")
    assert len(groups) == 2  # one chain per seed, the absent questions in it
    for group in groups:
        order = [(r.context_tokens, bool(r.params.get("absent"))) for r in group]
        assert order == [(1024, False)] * 2 + [(1024, True)] * 2 + [(2048, False)] * 2 + [(2048, True)] * 2
