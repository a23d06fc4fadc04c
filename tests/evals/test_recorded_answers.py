"""The real engine's recorded answers re-scored by the current scoring rule: no honest answer flips.

The answers: SmolLM2-135M-Instruct's chat replies (`fixtures/smollm2_chat/replies.json`), an lm-eval RULER
log (`fixtures/lmeval_ruler/`), and whole runs on the embedded engine kept as run records
(`fixtures/recorded_engine/*.jsonl`: `ctxprobe run --suite quick` on Gemma 3 270M, and a suite of every
answer kind on Gemma 3 270M in completions mode and on SmolLM2 in chat mode). `verdicts_v1.json` holds
each answer's verdict by scoring rule 1 (the rule before strict scoring). Every verdict that the current
rule changes is listed below with why; any other change fails."""

from __future__ import annotations

import json
from pathlib import Path

from ctxprobe.evals.lmeval.logs import read_log
from ctxprobe.evals.lmeval.ruler import ruler_sample
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.evals.scoring.score import score_sample
from ctxprobe.tasks.sample import Sample

FIXTURES = Path(__file__).parent / "fixtures"
RECORDED = FIXTURES / "recorded_engine"

# key -> why the verdict (correct) changed; none of them an honest answer. Rule 3 (answers read in their comparison
# characters, grouped rivals, denials after a value, later corrections, a needle file's number/set/contains exact)
# changed no verdict, partial credit or extraction of these answers from rule 2's.
CHANGED: dict[str, str] = {
    # niah multivalue, 2 values asked: Gemma 3 270M lists both, then a third 7-digit number of its own
    # making, then runs out of budget ("4558092, 5566957, 4566958, 556"): rule 1 credited it, rule 2 does not
    "recorded_engine/kinds_gemma3_completions.jsonl#6c5687ece775cfc7": "a third, invented value is offered",
}


def recorded_answers() -> dict[str, tuple[Sample, str]]:
    """Every recorded real-engine answer with its sample, by a stable key."""
    out: dict[str, tuple[Sample, str]] = {}
    replies = json.loads((FIXTURES / "smollm2_chat" / "replies.json").read_text(encoding="utf-8"))
    for i, reply in enumerate(replies["replies"]):
        out[f"smollm2_chat/replies.json#{i}"] = (Sample.model_validate(reply["sample"]), reply["text"])
    for path in sorted((FIXTURES / "lmeval_ruler").glob("samples_*.jsonl")):
        for doc in read_log(path):
            sample = ruler_sample(doc, doc.sent, mode="completions", tokenizer="lm-eval", generator="1")
            out[f"lmeval_ruler#{doc.doc_id}"] = (sample, doc.output)
    for path in sorted(RECORDED.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = SampleRecord.model_validate_json(line)
            if record.response is not None and record.score is not None:
                out[f"recorded_engine/{path.name}#{record.sample.sample_id}"] = (record.sample, record.response.text)
    return out


def test_the_fixtures_hold_every_answer_kind_in_both_modes():
    answers = recorded_answers()
    kinds = {(s.expected.kind, s.recipe.mode) for s, _ in answers.values()}
    assert {
        ("value", "completions"),
        ("value", "chat"),
        ("values", "completions"),
        ("values", "chat"),
        ("string", "completions"),
        ("string", "chat"),
        ("chain", "completions"),
        ("chain", "chat"),
    } <= kinds
    assert len(answers) >= 75


def test_no_recorded_answer_changes_verdict_but_those_reviewed():
    before = json.loads((RECORDED / "verdicts_v1.json").read_text(encoding="utf-8"))
    answers = recorded_answers()
    assert set(before) == set(answers)
    changed = {key for key, (sample, text) in answers.items() if score_sample(sample, text).correct != before[key][0]}
    assert changed == set(CHANGED), {k: answers[k][1][:120] for k in changed ^ set(CHANGED)}


def test_records_kept_from_the_engine_still_say_what_rule_1_said():
    # the run records carry the verdict they were written with (rule 1): verdicts_v1.json agrees with them
    before = json.loads((RECORDED / "verdicts_v1.json").read_text(encoding="utf-8"))
    for path in sorted(RECORDED.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = SampleRecord.model_validate_json(line)
            if record.score is not None:
                assert record.score.scorer_version == 1
                assert before[f"recorded_engine/{path.name}#{record.sample.sample_id}"][0] == record.score.correct
