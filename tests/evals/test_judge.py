"""The optional judge on a fake OpenAI chat endpoint (the chat-completions shape of docs/ENGINES.md): its
verdicts land in judge.jsonl beside the exact scores, never change them, are never asked for samples that
errored, and the report lists where the two disagree. Its failures are judge errors, nothing more."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import ctxprobe
from ctxprobe.evals.judge.rubric import RUBRIC, read_reply
from ctxprobe.evals.judge.verdicts import VERDICT_FORMAT
from ctxprobe.evals.records.judge import read_verdicts
from ctxprobe.evals.report.html_report.render import write_folder_report
from ctxprobe.evals.report.summary import write_report
from tests.runners.fake_engine import FakeEngine, Reply

FACTS = Path(__file__).resolve().parents[1] / "tasks" / "fixtures" / "needles" / "facts.jsonl"
# What the model under test says to each item's question (completions mode, after the answer prefix).
SAYS = {
    "Linden Street": " 6:30 in the morning.",
    "lighthouse": " a pale shade of green.",
    "bell tower": " 1,482 steps.",
    "Marta": " tulips and lavender.",
    "violin": " a wooden box.",
}
EXACT = {"bakery": True, "lighthouse": False, "steps": True, "garden": False, "violin": False}


def model_answer(body: dict[str, Any]) -> str:
    question = body["prompt"].rsplit("\n\n", 2)[-2]
    return next(said for key, said in SAYS.items() if key in question)


def judge_answer(body: dict[str, Any]) -> str:
    """An independent judge: correct iff the answer line holds an accepted answer (a set: all of them),
    as lower-case substrings; its JSON inside a sentence, as chatty judges write it."""
    user = body["messages"][1]["content"]
    accepted = re.search(r"^Accepted answers: (.*)$", user, re.M).group(1).split(" | ")  # type: ignore[union-attr]
    said = re.search(r"^Model's answer: (.*)$", user, re.M).group(1).lower()  # type: ignore[union-attr]
    need = all if "every member" in user else any
    verdict = "correct" if need(a.lower() in said for a in accepted) else "incorrect"
    return f'Here is my verdict: {{"verdict": "{verdict}", "reason": "compared"}}'


def _run(tmp: Path, model: FakeEngine, judge_url: str | None, **kw: Any) -> Any:
    options: dict[str, Any] = dict(
        endpoints=[model.url],
        needles=str(FACTS),
        lengths="1k,2k",
        depths="0,50,100",
        mode="completions",
        results_dir=str(tmp),
        quiet=True,
        no_report=True,
        token_counter="estimate",
    )
    if judge_url:
        options["judge_endpoint"] = judge_url
    return ctxprobe.run(**{**options, **kw})


def test_verdicts_beside_the_exact_scores_and_the_report_shows_disagreements(tmp_path: Path) -> None:
    with FakeEngine("vllm", answer=model_answer) as model, FakeEngine("llama-server", answer=judge_answer) as judge:
        plain = _run(tmp_path / "plain", model, None)
        judged = _run(tmp_path / "judged", model, judge.url)
        asked = judge.completion_calls()
    records = judged.records()
    assert len(records) == 30 and judged.exit_code == 0
    assert {r.sample.recipe.params["name"]: r.score.correct for r in records} == EXACT  # type: ignore[union-attr]
    # the judge changes no score: the same samples and scores as the run without it
    assert sorted((r.sample.sample_id, r.score) for r in records) == sorted(
        (r.sample.sample_id, r.score) for r in plain.records()
    )
    assert len(asked) == 30 and all(call.body["messages"][0]["content"] == RUBRIC for call in asked)
    assert all(call.body["model"] == "fake-model" and call.body["temperature"] == 0 for call in asked)
    verdicts = read_verdicts(judged.run_dir)
    assert set(verdicts) == {r.sample.sample_id for r in records}
    by_name = {r.sample.recipe.params["name"]: verdicts[r.sample.sample_id] for r in records}
    # lighthouse: "a pale shade of green" is not exactly "green", the judge takes it; steps: "1,482" is the
    # number 1482, which this judge's substring reading misses
    assert {n: v.verdict for n, v in by_name.items()} == {
        "bakery": "correct",
        "lighthouse": "correct",
        "steps": "incorrect",
        "garden": "incorrect",
        "violin": "incorrect",
    }
    text = write_report(records, judged.run_dir, judged.manifest)
    differ = [v for v in verdicts.values() if (v.verdict == "correct") != v.exact]
    assert len(differ) == 12  # lighthouse and steps, at 3 depths x 2 lengths
    assert "30 judged, 18 agree, 12 disagree, 0 judge errors" in text
    assert "exact 12/30 correct, judge 12/30" in text
    for v in differ:
        assert v.sample_id in text
    assert (judged.run_dir / "judge.md").is_file()
    page = write_folder_report(judged.run_dir).read_text(encoding="utf-8")
    assert "Judge beside the exact score" in page and all(v.sample_id in page for v in differ)
    assert "judge.jsonl" not in json.dumps(json.loads((judged.run_dir / "manifest.json").read_text()))


def rambles_on_the_violin(body: dict[str, Any]) -> str:
    said = model_answer(body)
    return said + " and so on" * 40 if "wooden box" in said else said  # cut off at the answer budget


def test_samples_that_errored_are_never_judged(tmp_path: Path) -> None:
    """Too long for the endpoint (the 2k prompts: no answer at all) or cut off at the answer budget (the
    violin's: an answer that is not whole): errors, which the judge is never asked about."""
    with (
        FakeEngine("vllm", answer=rambles_on_the_violin, accepts_up_to=1000) as model,
        FakeEngine("llama-server", answer=judge_answer) as judge,
    ):
        result = _run(tmp_path, model, judge.url, allow_errors=True)
        asked = judge.completion_calls()
    errors = {r.sample.sample_id: r.error.value for r in result.records() if r.error is not None}
    assert sorted(set(errors.values())) == ["rejected_too_long", "truncated"] and len(errors) == 15 + 3
    assert len(asked) == 30 - 18
    assert set(errors).isdisjoint(read_verdicts(result.run_dir))


@pytest.mark.parametrize("kind", ["unparsed", "unreachable", "http"])
@pytest.mark.usefixtures("quick_backoff")  # each verdict's retries on a closed port would otherwise wait seconds
def test_a_failing_judge_is_a_judge_error_and_changes_nothing(tmp_path: Path, kind: str) -> None:
    with (
        FakeEngine("vllm", answer=model_answer) as model,
        FakeEngine("llama-server", answer="I would rather not say.") as judge,
    ):
        if kind == "http":
            for _ in range(40):
                judge.script.append(Reply(status=400, body={"error": {"message": "bad request", "code": 400}}))
        url = "http://127.0.0.1:9" if kind == "unreachable" else judge.url
        result = _run(tmp_path, model, url, lengths="1k", depths="50")
    verdicts = read_verdicts(result.run_dir)
    assert result.exit_code == 0 and len(verdicts) == 5
    assert all(v.verdict is None and v.error for v in verdicts.values())
    word = {"unparsed": "unparsed", "unreachable": "unreachable", "http": "HTTP 400"}[kind]
    assert all(word in (v.error or "") for v in verdicts.values())
    assert {r.sample.recipe.params["name"]: r.score.correct for r in result.records()} == EXACT  # type: ignore[union-attr]
    assert "5 judge errors" in write_report(result.records(), result.run_dir, result.manifest)


def test_a_resumed_run_judges_only_what_is_not_judged(tmp_path: Path) -> None:
    with FakeEngine("vllm", answer=model_answer) as model, FakeEngine("llama-server", answer=judge_answer) as judge:
        first = _run(tmp_path, model, judge.url, lengths="1k", depths="50")
        lines = (first.run_dir / "judge.jsonl").read_text().splitlines()
        (first.run_dir / "judge.jsonl").write_text("\n".join(lines[:2]) + "\n")
        ctxprobe.run(resume=str(first.run_dir), judge_endpoint=judge.url, quiet=True, no_report=True)
        asked = judge.completion_calls()
    assert len(asked) == 5 + 3 and len(read_verdicts(first.run_dir)) == 5


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ('{"verdict": "correct", "reason": "same"}', "correct"),
        ('```json\n{"verdict": "INCORRECT"}\n```', "incorrect"),
        ('<think>hmm {"verdict": "correct"}</think>{"verdict": "incorrect"}', "incorrect"),
        ("Correct. The answer matches.", "correct"),
        ("**Incorrect**", "incorrect"),
        ("The answer is probably correct", None),
        ('{"verdict": "maybe"}', None),
        ("", None),
    ],
)
def test_reading_a_judges_reply(reply: str, verdict: str | None) -> None:
    reading = read_reply(reply)
    assert reading.verdict == verdict
    assert (reading.error is None) is (verdict is not None)


def test_a_damaged_judge_line_is_skipped_and_the_latest_verdict_wins(tmp_path: Path) -> None:
    from ctxprobe.evals.records.judge import JudgeVerdict, append_verdict

    append_verdict(tmp_path, JudgeVerdict(sample_id="a", judge="j", verdict="incorrect", exact=True))
    with (tmp_path / "judge.jsonl").open("ab") as fh:
        fh.write(b'\xff\xfe not a line\n{"sample_id": 3}\n')
    append_verdict(tmp_path, JudgeVerdict(sample_id="a", judge="j", verdict="correct", exact=True))
    append_verdict(tmp_path, JudgeVerdict(sample_id="b", judge="j", error="unparsed reply", exact=False))
    with (tmp_path / "judge.jsonl").open("ab") as fh:
        fh.write(b'{"sample_id": "c", "judge": "j", "verd')  # torn mid-write
    with pytest.warns(UserWarning, match="2 damaged"):
        verdicts = read_verdicts(tmp_path)
    assert {k: v.verdict for k, v in verdicts.items()} == {"a": "correct", "b": None}
    assert not verdicts["a"].disagrees() and not verdicts["b"].disagrees()


REFUSED = json.loads(
    (Path(__file__).parent / "fixtures" / "judge" / "llama_server_response_format_400.json").read_text()
)


def test_the_verdict_schema_is_asked_for_and_dropped_where_the_endpoint_refuses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One judge call at a time: with two, which calls still carry the schema depends on which reply comes
    # back first (the order this test is about), and the count with it is a race.
    monkeypatch.setattr("ctxprobe.evals.judge.verdicts.JUDGE_CONCURRENCY", 1)
    with FakeEngine("vllm", answer=model_answer) as model, FakeEngine("llama-server", answer=judge_answer) as judge:
        judge.script.append(Reply(status=400, body=REFUSED))  # a llama-server's refusal, as captured
        result = _run(tmp_path, model, judge.url, lengths="1k", depths="50")
        asked = [c.body for c in judge.completion_calls()]
    verdicts = read_verdicts(result.run_dir)
    assert len(verdicts) == 5 and all(v.verdict is not None and v.error is None for v in verdicts.values())
    assert asked[0]["response_format"] == VERDICT_FORMAT  # the first call asks for the schema...
    # ...and once refused, no call asks again: the refused sample is asked again without it, and so is every
    # later one
    assert len(asked) == 6 and sum("response_format" in body for body in asked) == 1


def test_the_verdict_schema_is_kept_where_the_endpoint_takes_it(tmp_path: Path) -> None:
    with FakeEngine("vllm", answer=model_answer) as model, FakeEngine("llama-server", answer=judge_answer) as judge:
        _run(tmp_path, model, judge.url, lengths="1k", depths="50")
        asked = [c.body for c in judge.completion_calls()]
    assert len(asked) == 5 and all(
        body["response_format"]["json_schema"]["schema"]["required"] == ["verdict", "reason"] for body in asked
    )
