"""The hard families end to end on the embedded engine: latent (and its literal control), graphwalk and mrcr
run on the packaged Gemma 3 270M (the session's one engine) in completions mode, every sample scored at the length the server counts;
mrcr's chat mode sends a real messages array to SmolLM2-135M-Instruct and the server counts exactly the
planned length (the template's tokens around every turn included, though the text is counted offline)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxprobe.evals.records.load import load_run
from ctxprobe.evals.records.record import ErrorKind
from ctxprobe.runners.launcher import EmbeddedEngine
from tests.e2e.ctxprobe_cli import ctxprobe, only_run_dir
from tests.instruct_model import SKIP_REASON, smollm2_gguf

pytestmark = pytest.mark.engine
GGUF = smollm2_gguf()


def test_latent_graphwalk_and_mrcr_run_at_the_length_the_server_counts(
    embedded_engine: EmbeddedEngine, tmp_path: Path
) -> None:
    suite = tmp_path / "hard.yaml"
    suite.write_text(
        "name: hard-e2e\nlengths: [1k]\ndepths: [50]\ntasks:\n"
        "  - family: latent\n  - family: latent\n    params: {cue: literal}\n"
        "  - family: graphwalk\n    params: {query: parents}\n  - family: mrcr\n"
    )
    # A 270M model may run on past its answer budget (a name repeated: "Jean-Baptiste-Marie-Marie-..."): that
    # sample is `truncated`, an error and never a wrong answer, so the run is let through with it.
    done = ctxprobe(
        "run",
        "--suite",
        str(suite),
        "--endpoint",
        embedded_engine.base_url,
        "--mode",
        "completions",
        "--quiet",
        "--no-report",
        "--timeout",
        "600",
        "--allow-errors",
        "--results-dir",
        str(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    run = load_run(only_run_dir(tmp_path))
    assert sorted(r.sample.recipe.family for r in run.records) == ["graphwalk", "latent", "latent", "mrcr"]
    for record in run.records:
        assert record.response is not None and record.response.prompt_tokens == record.sample.planned_tokens
        if record.error is not None:
            assert record.error is ErrorKind.truncated and record.score is None, record.error_detail
        else:
            assert record.score is not None and 0.0 <= record.score.partial <= 1.0
    assert sum(r.score is not None for r in run.records) >= 3
    latent, literal = sorted(
        (r for r in run.records if r.sample.recipe.family == "latent"),
        key=lambda r: r.sample.recipe.params.get("cue", "latent"),
    )
    assert latent.sample.measures["lexical_overlap"] == 0.0 < literal.sample.measures["lexical_overlap"]
    # the same place: the control's longer needle moves the depth's nearest sentence boundary at most one sentence
    assert latent.sample.expected == literal.sample.expected
    assert abs(latent.sample.needles[0].token_offset - literal.sample.needles[0].token_offset) <= 40


@pytest.mark.skipif(GGUF is None, reason=SKIP_REASON)
def test_mrcr_in_chat_mode_sends_the_conversation_at_its_planned_length(tmp_path: Path) -> None:
    done = ctxprobe(
        "run",
        "--family",
        "mrcr",
        "--lengths",
        "1k",
        "--depths",
        "50",
        "--model-file",
        str(GGUF),
        "--mode",
        "chat",
        "--quiet",
        "--no-report",
        "--timeout",
        "600",
        "--results-dir",
        str(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    (record,) = load_run(only_run_dir(tmp_path)).records
    assert record.error is None and record.score is not None
    assert record.response.prompt_tokens == record.sample.planned_tokens  # every turn's template tokens counted
    assert record.prompt_tokens_off is None
