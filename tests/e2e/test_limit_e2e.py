"""`ctxprobe limit` on the real embedded engine: configured, accepted, and rejections never scored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ctxprobe_cli import ctxprobe, only_run_dir

pytestmark = pytest.mark.engine

ROOM = 64
# Contexts of 2,048 and 4,096: the search and its bounds are the point, and the accepted-length search sends
# prompts up to the configured context, so a smaller one costs less prefill.


def limit_json(results: Path) -> dict:
    return json.loads((only_run_dir(results) / "limit.json").read_text())["targets"][0]


def test_limit_2048_with_effective_search_inside_the_accepted_length(tmp_path: Path) -> None:
    # --min-length and --max-length above what the engine takes: the effective search's top is the accepted
    # length itself, less what the answer budget needs beyond the answer room; nothing is sent past it.
    done = ctxprobe(
        "limit",
        "--n-ctx",
        "2048",
        "--min-length",
        "2k",
        "--max-length",
        "3k",
        "--task",
        "niah:variant=single",
        "--max-samples",
        "2",
        "--batch",
        "2",
        "--ratio",
        "2",
        "--answer-room",
        str(ROOM),
        "--results-dir",
        str(tmp_path),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    t = limit_json(tmp_path)
    assert t["configured"] == 2048
    accepted = t["accepted"]["accepted_tokens"]
    assert 0.98 * (2048 - ROOM) <= accepted <= 2048 - ROOM
    assert t["accepted"]["requests"] <= 3
    recs = [json.loads(x) for x in (only_run_dir(tmp_path) / "samples.jsonl").read_text().splitlines()]
    assert recs and all(r["sample"]["recipe"]["context_tokens"] <= accepted for r in recs)
    assert all(r["error"] is None for r in recs)  # every sample had room for its whole answer
    for r in recs:
        resp = r["response"]
        assert resp["finish_reason"] == "stop" or resp["completion_tokens"] == r["sample"]["max_tokens"]
    rows = {row["length"]: row for row in t["effective"]["lengths"]}
    for length, row in rows.items():  # the search counted only scored samples
        scored = [r for r in recs if r["sample"]["recipe"]["context_tokens"] == length and r["score"] is not None]
        assert row["n"] == len(scored)
    assert "configured" in done.stdout and "2,048" in done.stdout


def test_limit_4096_configured_and_accepted(tmp_path: Path) -> None:
    done = ctxprobe(
        "limit",
        "--n-ctx",
        "4096",
        "--skip-effective",
        "--advertised",
        "32k",
        "--answer-room",
        str(ROOM),
        "--results-dir",
        str(tmp_path),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    t = limit_json(tmp_path)
    assert t["configured"] == 4096 and t["advertised"]["tokens"] == 32768
    assert 0.98 * (4096 - ROOM) <= t["accepted"]["accepted_tokens"] <= 4096 - ROOM
    assert t["effective"] is None
