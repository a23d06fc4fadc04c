"""Answer budgets on a fake engine that answers in sentences, as chat models do: with the chat default
every sample is scored right; with a budget forced too small the cut samples are `truncated`, none is
wrong; resume re-sends them when the budget is raised; a prompt whose budget does not fit the engine's
context is not sent; a reasoning budget is sent in the engine's own field; a base model in chat mode is
refused with the fix, or warned about when chat was asked for."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from ctxprobe.evals.cli.main import main
from ctxprobe.evals.records.load import load_run
from ctxprobe.runners.response import ErrorKind
from ctxprobe.tasks.families.framing import CHAT_SENTENCE_TOKENS
from tests.runners.fake_engine import FakeEngine

# Chat answers of 6 to 26 words (the fake's tokens) around the value, by the key's first letter.
_PREAMBLES = [
    "The answer: {v}.",
    "The special magic number for {k} is {v}.",
    "Sure! The special magic number for {k} mentioned in the provided text is **{v}**.",
    "Based on the text above, after reading it carefully, I can tell you that the special magic number "
    "for {k} mentioned in the provided text is {v}.",
]


def sentence_answer(body: dict[str, Any]) -> str:
    """The needle's value inside a sentence whose length depends on the key asked for."""
    prompt = str(body["messages"][-1]["content"])
    key = re.search(r"special magic number for (\S+) mentioned", prompt)
    assert key is not None
    value = re.search(rf"for {re.escape(key.group(1))} is: (\d+)\.", prompt)
    assert value is not None
    return _PREAMBLES[sum(map(ord, key.group(1))) % len(_PREAMBLES)].format(k=key.group(1), v=value.group(1))


SUITE = [
    "--family",
    "niah",
    "--lengths",
    "1k",
    "--depths",
    "0,25,50,75,100",
    "--samples",
    "4",
    "--quiet",
    "--no-report",
    "--allow-errors",
]


def _run(engine: FakeEngine, tmp_path: Path, *extra: str) -> tuple[int, Any]:
    code = main(["run", "--endpoint", engine.url, *SUITE, "--results-dir", str(tmp_path), *extra])
    runs = sorted(p for p in tmp_path.iterdir() if p.is_dir())
    return code, load_run(runs[-1])


def _sentence_words(run: Any) -> list[int]:
    return [len(sentence_answer({"messages": [{"content": _prompt(r)}]}).split()) for r in run.records]


def _prompt(record: Any) -> str:
    from ctxprobe.tasks.build import build_sample

    return build_sample(record.sample.recipe).prompt


def test_the_chat_default_fits_every_sentence_and_a_small_budget_truncates_without_wrong_answers(
    tmp_path: Path,
) -> None:
    with FakeEngine("vllm", context_length=8192, answer=sentence_answer) as engine:
        code, run = _run(engine, tmp_path / "default", "--token-counter", "estimate")
        assert code == 0
        assert all(r.error is None and r.score.correct for r in run.records), [r.response.text for r in run.records]
        assert {r.answer_tokens for r in run.records} == {20 + CHAT_SENTENCE_TOKENS}  # niah number: 8 + 12
        sent = {c.body["max_tokens"] for c in engine.completion_calls()}
        assert sent == {20 + CHAT_SENTENCE_TOKENS}

        code, small = _run(engine, tmp_path / "small", "--token-counter", "estimate", "--answer-tokens", "12")
    lengths = _sentence_words(small)
    cut = [r for r, n in zip(small.records, lengths) if n > 12]
    whole = [r for r, n in zip(small.records, lengths) if n <= 12]
    assert cut and whole  # the sentences straddle the budget
    assert all(r.error is ErrorKind.truncated and r.score is None for r in cut)
    assert all("--answer-tokens" in (r.error_detail or "") for r in cut)
    assert all(r.error is None and r.score.correct for r in whole)  # none is wrong
    assert {r.answer_tokens for r in small.records} == {12}


def test_resume_resends_truncated_samples_only_when_the_budget_is_raised(tmp_path: Path) -> None:
    with FakeEngine("vllm", context_length=8192, answer=sentence_answer) as engine:
        _code, run = _run(engine, tmp_path, "--token-counter", "estimate", "--answer-tokens", "12")
        truncated = sum(r.error is ErrorKind.truncated for r in run.records)
        assert truncated
        before = len(engine.completion_calls())
        main(["run", "--resume", str(run.dir), "--quiet", "--no-report", "--allow-errors"])
        assert len(engine.completion_calls()) == before  # same budget: cut again, so not sent
        main(["run", "--resume", str(run.dir), "--answer-tokens", "40", "--quiet", "--no-report"])
        assert len(engine.completion_calls()) == before + truncated
        resent = engine.completion_calls()[before:]
    assert {c.body["max_tokens"] for c in resent} == {40}
    again = load_run(run.dir)
    assert all(r.error is None and r.score.correct for r in again.records)


def test_a_prompt_whose_budget_does_not_fit_the_context_is_not_sent(tmp_path: Path, capsys: Any) -> None:
    # counted with the fake's own tokenizer (words): a 1K prompt leaves less than the 84-token chat budget
    # in a 1100-token context, a 2K prompt does not fit at all
    with FakeEngine("vllm", context_length=1100, answer=sentence_answer) as engine:
        code = main(
            [
                "run",
                "--endpoint",
                engine.url,
                "--family",
                "niah",
                "--lengths",
                "1k,2k",
                "--depths",
                "0,100",
                "--samples",
                "2",
                "--quiet",
                "--no-report",
                "--results-dir",
                str(tmp_path),
            ]
        )
        assert engine.completion_calls() == []
    assert code == 1
    lines = [line for line in capsys.readouterr().err.splitlines() if "does not fit" in line]
    assert len(lines) == 2  # one line per cell (two lengths), not per sample; cells are built in parallel
    by_cell = {("1K" in line, "2K" in line): line for line in lines}
    assert set(by_cell) == {(True, False), (False, True)}
    assert "answer budget 84" in by_cell[(True, False)]
    run = load_run(next(p for p in tmp_path.iterdir() if p.is_dir()))
    assert len(run.records) == 8
    by_length = {r.sample.recipe.context_tokens: r.error for r in run.records}
    assert by_length == {1024: ErrorKind.no_answer_room, 2048: ErrorKind.rejected_too_long}
    assert all(r.response is None for r in run.records)


@pytest.mark.parametrize(
    "flavor, field",
    [("vllm", "thinking_token_budget"), ("sglang", "thinking_budget"), ("llama-server", "thinking_budget_tokens")],
)
def test_a_reasoning_budget_is_sent_in_the_engines_field_on_top_of_the_answer(
    tmp_path: Path, flavor: str, field: str
) -> None:
    with FakeEngine(
        flavor,
        context_length=8192,
        answer=sentence_answer,  # type: ignore[arg-type]
        reasoning="let me look for the number in the text",
    ) as engine:
        code, run = _run(engine, tmp_path, "--token-counter", "estimate", "--reasoning-tokens", "300")
        calls = engine.completion_calls()
    assert code == 0
    assert {c.body["max_tokens"] for c in calls} == {20 + CHAT_SENTENCE_TOKENS + 300}
    assert {c.body[field] for c in calls} == {300}
    assert all(r.reasoning_tokens_budget == 300 and r.response.reasoning for r in run.records)
    assert all(r.response.reasoning_tokens == 10 for r in run.records)  # counted: the estimate, 4 chars a token


def test_a_reasoning_model_gets_the_default_reasoning_budget(tmp_path: Path, capsys: Any) -> None:
    with FakeEngine("vllm", context_length=8192, answer=sentence_answer, reasoning="thinking it over") as engine:
        code, _run_folder = _run(engine, tmp_path, "--token-counter", "estimate")
        calls = engine.completion_calls()
    assert code == 0 and {c.body["thinking_token_budget"] for c in calls} == {1024}
    assert "the model reasons" in capsys.readouterr().err


def test_a_base_model_in_chat_mode_is_refused_with_the_fix(tmp_path: Path, capsys: Any) -> None:
    with FakeEngine(
        "vllm", context_length=8192, answer="user\nReply with the single word: ready.\nassistant\n", follows_chat=False
    ) as engine:
        code = main(["run", "--endpoint", engine.url, *SUITE, "--results-dir", str(tmp_path)])
        assert engine.completion_calls() == []
    err = capsys.readouterr().err
    assert code == 2 and "--mode completions" in err and "Traceback" not in err
    assert not any(tmp_path.iterdir())  # bad input: no run folder left


@pytest.mark.parametrize("where", ["suite", "task"])
def test_a_suites_mode_chat_asks_for_chat_as_the_flag_does(where: str, tmp_path: Path, capsys: Any) -> None:
    """A suite (or one of its tasks) that says `mode: chat` asked for chat: a base model is warned about and the
    run goes on, with no `--mode chat` needed too; `--mode completions` still overrides it."""
    suite = tmp_path / "chat.yaml"
    mode = ("mode: chat\n", "") if where == "suite" else ("", ", mode: chat")
    suite.write_text(f"name: s\n{mode[0]}lengths: [1k]\ndepths: [50]\ntasks: [{{family: niah{mode[1]}}}]\n")
    with FakeEngine("vllm", context_length=8192, answer="user\nReply with", follows_chat=False) as engine:
        code = main(
            [
                "run",
                "--endpoint",
                engine.url,
                "--suite",
                str(suite),
                "--token-counter",
                "estimate",
                "--results-dir",
                str(tmp_path / "r"),
                "--quiet",
            ]
        )
        assert [c.path for c in engine.completion_calls()] == ["/v1/chat/completions"]  # sent, as asked
        err = capsys.readouterr().err
        assert code == 0 and "warning: chat mode does not fit this model" in err and "suite s: mode chat" in err
        assert (
            main(
                [
                    "run",
                    "--endpoint",
                    engine.url,
                    "--suite",
                    str(suite),
                    "--token-counter",
                    "estimate",
                    "--mode",
                    "completions",
                    "--results-dir",
                    str(tmp_path / "r"),
                    "--quiet",
                ]
            )
            == 0
        )
        assert engine.chat_checks() and engine.completion_calls()[-1].path == "/v1/completions"


def test_a_base_model_in_chat_mode_asked_for_explicitly_is_warned_about(tmp_path: Path, capsys: Any) -> None:
    with FakeEngine("vllm", context_length=8192, answer="user\nReply with", follows_chat=False) as engine:
        code = main(["run", "--endpoint", engine.url, *SUITE, "--mode", "chat", "--results-dir", str(tmp_path)])
        assert engine.completion_calls()  # sent, as asked
    assert code == 0
    assert "warning: chat mode does not fit this model" in capsys.readouterr().err
