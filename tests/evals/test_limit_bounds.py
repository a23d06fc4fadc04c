"""`ctxprobe limit` inside what the endpoint accepted: the effective search's top is the accepted length (never
above it, whatever --max-length says), its lower end the tasks' own shortest prompt, and a model that fails at
every length still ends with a result and limit.json."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ctxprobe.evals.cli.main import main
from ctxprobe.evals.limit.target import shortest_length
from ctxprobe.evals.records.limit import TaskSpec
from ctxprobe.tasks.build import build_sample
from ctxprobe.tasks.errors import TooShort
from ctxprobe.tasks.token_counter import EstimateCounter
from tests.runners.fake_engine import FakeEngine

NIAH = TaskSpec(family="niah", params={"variant": "single"})


def gold_answer(body: dict[str, Any]) -> str:
    """The needle's value, as a model that reads the whole prompt would give it."""
    prompt = str(body.get("prompt") or body["messages"][-1]["content"])
    key = re.search(r"special magic number for (\S+) mentioned", prompt)
    value = key and re.search(rf"for {re.escape(key.group(1))} is: (\d+)\.", prompt)
    return value.group(1) if value else "none"


def _limit(engine: FakeEngine, tmp_path: Path, *extra: str) -> tuple[int, dict[str, Any], list[int]]:
    code = main(
        [
            "limit",
            engine.url,
            "--task",
            "niah:variant=single",
            "--min-length",
            "1k",
            "--max-samples",
            "8",
            "--results-dir",
            str(tmp_path),
            *extra,
        ]
    )
    folders = list(tmp_path.iterdir())
    written = json.loads((folders[0] / "limit.json").read_text()) if folders else {}
    sent = [engine.words(c.body.get("prompt") or "") + 1 for c in engine.completion_calls()]
    return code, written, sent


def test_the_search_never_sends_above_the_accepted_length(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A server whose context is 6,000: the accept search finds 5,936 (6,000 less the answer room); the
    effective search's top is that length itself, even with --max-length 8k, and what passes there is
    'effective >= N, capped by the accepted length'."""
    with FakeEngine("vllm", context_length=6000, answer=gold_answer) as engine:
        code, written, sent = _limit(engine, tmp_path, "--max-length", "8k")
        accept_calls = written["targets"][0]["accepted"]["requests"]
    target = written["targets"][0]
    accepted = target["accepted"]["accepted_tokens"]
    assert code == 0 and 5800 < accepted <= 6000 - 64
    search = sent[accept_calls:]
    assert search and max(search) <= accepted  # no search sample above the accepted length
    lengths = [r["length"] for r in target["effective"]["lengths"]]
    top = max(lengths)  # the accepted length, less what the chat answer budget needs beyond the 64 of room
    assert accepted - 64 <= top <= accepted and max(search) <= top + 64
    assert all(r["verdict"] == "pass" for r in target["effective"]["lengths"])
    assert target["effective"]["effective"] == top
    assert f"effective ≥ {top:,}, capped by the accepted length (" in target["effective"]["verdict"]
    assert f"effective: ≥ {top:,}, capped by the accepted length" in capsys.readouterr().out  # labelled once


def test_a_model_wrong_everywhere_ends_with_a_result_below_the_tasks_shortest_prompt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeEngine("vllm", context_length=6000, answer="The answer is 42.") as engine:
        code, written, _sent = _limit(engine, tmp_path)
    assert code == 0 and written  # limit.json, exit 0
    effective = written["targets"][0]["effective"]
    shortest = min(r["length"] for r in effective["lengths"])
    assert effective["effective"] is None and all(r["verdict"] == "fail" for r in effective["lengths"])
    assert effective["verdict"].startswith(f"effective: below {shortest:,} tokens, the shortest this task can be")
    assert shortest < 1024  # stepped down from --min-length 1k to the task's own shortest prompt
    assert f"effective   < {shortest:,}" in capsys.readouterr().out


def test_the_shortest_length_is_the_shortest_that_builds() -> None:
    counter = EstimateCounter()
    shortest, budget = shortest_length(counter, [NIAH], "prose", "completions", up_to=4096, samples=4, granularity=64)
    assert 0 < shortest < 4096 and budget > 0
    from ctxprobe.evals.limit.target import search_recipes

    for recipe in search_recipes(counter, [NIAH], "prose", "completions", shortest, 0, 4):
        build_sample(recipe, counter)  # builds
    with pytest.raises(TooShort):
        for recipe in search_recipes(counter, [NIAH], "prose", "completions", shortest - 64, 0, 4):
            build_sample(recipe, counter)
