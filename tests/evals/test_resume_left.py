"""A resumed run sends exactly the samples left: of a nested run cut to its first records (as a kill leaves
it), `--resume` sends each missing sample once and none of the kept ones, and the folder ends holding every
sample of the whole run with the kept lines untouched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxprobe.evals.cli.main import main
from tests.runners.fake_engine import FakeEngine

SUITE = [
    "--family",
    "niah",
    "--lengths",
    "1k,2k",
    "--depths",
    "0,50,100",
    "--samples",
    "2",
    "--layout",
    "nested",
    "--token-counter",
    "estimate",
    "--quiet",
    "--no-report",
]


def _answered(engine: FakeEngine) -> int:
    """Completion calls that sent a sample (the cache check's cold re-sends, salted, left out)."""
    return sum(1 for call in engine.completion_calls() if "cache_salt" not in call.body)


def _ids(lines: list[str]) -> list[str]:
    return [json.loads(line)["sample"]["sample_id"] for line in lines]


@pytest.mark.parametrize("kept", [0, 5, 11])
def test_resume_sends_exactly_the_samples_left(tmp_path: Path, kept: int) -> None:
    with FakeEngine("vllm", context_length=1 << 16) as engine:
        assert main(["run", "--endpoint", engine.url, *SUITE, "--results-dir", str(tmp_path / "whole")]) == 0
        (whole,) = (tmp_path / "whole").iterdir()
        every = (whole / "samples.jsonl").read_text().splitlines()
        assert len(every) == 12 and len(set(_ids(every))) == 12
        cut = tmp_path / "cut"
        cut.mkdir()
        (cut / "manifest.json").write_text(
            json.dumps({**json.loads((whole / "manifest.json").read_text()), "status": "interrupted"})
        )
        (cut / "samples.jsonl").write_text("".join(line + "\n" for line in every[:kept]))
        sent_before = _answered(engine)
        assert main(["run", "--resume", str(cut), "--quiet", "--no-report"]) == 0
        sent = _answered(engine) - sent_before
    after = (cut / "samples.jsonl").read_text().splitlines()
    assert after[:kept] == every[:kept]  # the kept lines as they were
    assert sent == 12 - kept and sorted(_ids(after[kept:])) == sorted(_ids(every[kept:]))
    assert json.loads((cut / "manifest.json").read_text())["status"] == "finished"
