"""Cache-aware order: prompts sharing a prefix go one after another, deepest needle first; the order
never changes a prompt or its id; the one-slot-cache bound of an 11-depth sweep is 45/110."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxprobe.evals.cli.main import main
from ctxprobe.evals.run.send.order import expected_cached_tokens, send_groups
from ctxprobe.tasks.suite import Suite
from tests.runners.fake_engine import FakeEngine


def suite(depths: str = "0:100:10", samples: int = 2) -> Suite:
    return Suite.model_validate(
        {
            "name": "s",
            "lengths": ["1k", "2k"],
            "depths": depths,
            "samples": samples,
            "tasks": [{"family": "niah"}, {"family": "recall"}],
        }
    )


def test_groups_are_depth_sweeps_sent_deepest_first() -> None:
    recipes = suite().recipes(lambda mode: "estimate:4")
    groups = send_groups(recipes, "cache-aware")
    assert len(groups) == 2 * 2 * 2  # tasks x lengths x seeds
    assert sorted(r.sample_id() for g in groups for r in g) == sorted(r.sample_id() for r in recipes)
    for g in groups:
        assert [r.depth for r in g] == sorted((r.depth for r in g), reverse=True) and len(g) == 11
        assert len({(r.family, r.context_tokens, r.seed, r.window) for r in g}) == 1
    assert send_groups(recipes, "as-listed") == [[r] for r in recipes]


def test_the_one_slot_bound_of_an_11_depth_sweep() -> None:
    recipes = suite(samples=1).recipes(lambda mode: "estimate:4")
    total, cached = expected_cached_tokens(send_groups(recipes, "cache-aware"))
    assert cached / total == pytest.approx(45 / 110, abs=1e-3)
    listed_total, listed_cached = expected_cached_tokens(send_groups(recipes, "as-listed"))
    assert listed_total == total and listed_cached == 0  # singleton groups: nothing counted as shared


@pytest.mark.parametrize("order", ["cache-aware", "as-listed"])
def test_a_run_sends_in_the_chosen_order_with_the_same_ids(order: str, tmp_path: Path) -> None:
    with FakeEngine("vllm", context_length=8192) as engine:
        code = main(
            [
                "run",
                "--endpoint",
                engine.url,
                "--family",
                "niah",
                "--lengths",
                "1k",
                "--depths",
                "0,50,100",
                "--samples",
                "2",
                "--concurrency",
                "1",
                "--order",
                order,
                "--quiet",
                "--results-dir",
                str(tmp_path),
            ]
        )
    assert code == 0
    run_dir = next(tmp_path.iterdir())
    recs = [json.loads(x)["sample"]["recipe"] for x in (run_dir / "samples.jsonl").read_text().splitlines()]
    sent = [(r["seed"], r["depth"]) for r in recs]
    if order == "cache-aware":
        assert sent == [(0, 100.0), (0, 50.0), (0, 0.0), (1, 100.0), (1, 50.0), (1, 0.0)]
    else:
        assert sent == [(0, 0.0), (0, 50.0), (0, 100.0), (1, 0.0), (1, 50.0), (1, 100.0)]
    assert json.loads((run_dir / "manifest.json").read_text())["options"]["order"] == order


def test_the_order_never_changes_a_prompt_or_its_id(tmp_path: Path) -> None:
    seen = []
    with FakeEngine("vllm", context_length=8192) as engine:
        for order in ("cache-aware", "as-listed"):
            out = tmp_path / order
            assert (
                main(
                    [
                        "run",
                        "--endpoint",
                        engine.url,
                        "--family",
                        "niah",
                        "--lengths",
                        "1k",
                        "--depths",
                        "0,100",
                        "--samples",
                        "2",
                        "--order",
                        order,
                        "--quiet",
                        "--results-dir",
                        str(out),
                    ]
                )
                == 0
            )
            lines = (next(out.iterdir()) / "samples.jsonl").read_text().splitlines()
            seen.append(
                {(json.loads(x)["sample"]["sample_id"], json.loads(x)["sample"]["prompt_sha256"]) for x in lines}
            )
    assert len(seen[0]) == 4 and seen[0] == seen[1]


@pytest.mark.parametrize("samples, concurrency", [(4, 2), (2, 8)], ids=["one lane a sweep", "fanned out"])
def test_a_sharing_group_stays_on_one_replica(samples: int, concurrency: int, tmp_path: Path) -> None:
    with FakeEngine("vllm", context_length=8192) as a, FakeEngine("vllm", context_length=8192) as b:
        code = main(
            [
                "run",
                "--endpoint",
                a.url,
                "--endpoint",
                b.url,
                "--family",
                "niah",
                "--lengths",
                "1k",
                "--depths",
                "0:100:25",
                "--samples",
                str(samples),
                "--concurrency",
                str(concurrency),
                "--quiet",
                "--results-dir",
                str(tmp_path),
            ]
        )
        assert code == 0 and a.completion_calls() and b.completion_calls()
    recs = [json.loads(x) for x in (next(tmp_path.iterdir()) / "samples.jsonl").read_text().splitlines()]
    replicas: dict[int, set[str]] = {}
    for r in recs:
        replicas.setdefault(r["sample"]["recipe"]["seed"], set()).add(r["response"]["endpoint"])
    assert len(replicas) == samples and all(len(urls) == 1 for urls in replicas.values())  # each sweep on one replica
