"""Judging a run's finished samples: each scored sample of a user's needle file (the kinds of
`tasks/families/needles_rules.py`) is asked about once, its verdict appended to `judge.jsonl`. Samples that errored
are never sent (they have no answer to judge); a judge that fails (unreachable, an HTTP error, a reply
without a verdict) is recorded as that sample's judge error and changes nothing else. A resumed run
judges only the samples not judged yet."""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxprobe.evals.judge.rubric import REPLY_TOKENS, judge_messages, read_reply
from ctxprobe.evals.records.judge import JudgeVerdict, append_verdict, read_verdicts
from ctxprobe.evals.records.record import SampleRecord
from ctxprobe.runners.http_json import EndpointCalls
from ctxprobe.runners.retry import CallFailed, RetryPolicy
from ctxprobe.runners.settings import ClientSettings
from ctxprobe.runners.shown_text import shown_body
from ctxprobe.tasks.families.needles_rules import USER_KINDS

JUDGE_CONCURRENCY = 2  # a judge is often a small server with one or two slots: its queue counts in the timeout


@dataclass(frozen=True)
class JudgeSummary:
    judged: int
    disagree: int
    errors: int

    def line(self) -> str:
        return (
            f"judge: {self.judged} samples judged, {self.disagree} disagree with the exact score, "
            f"{self.errors} judge errors (judge.jsonl)"
        )


def to_judge(records: Iterable[SampleRecord], done: set[str]) -> list[SampleRecord]:
    """The records the judge is asked about: scored (no error), of a user's answer kind, not judged yet."""
    return [
        r
        for r in records
        if r.error is None
        and r.score is not None
        and r.response is not None
        and r.sample.expected.kind in USER_KINDS
        and r.sample.sample_id not in done
    ]


# The rubric's verdict object as an OpenAI `response_format` JSON schema.
VERDICT_FORMAT: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {
        "name": "verdict",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {
                "verdict": {"type": "string", "enum": ["correct", "incorrect"]},
                "reason": {"type": "string"},
            },
            "required": ["verdict", "reason"],
            "additionalProperties": False,
        },
    },
}


class Judge:
    """One judge endpoint: its model (given, or the first `/v1/models` names) and its calls."""

    def __init__(self, url: str, model: str | None = None, settings: ClientSettings | None = None) -> None:
        self.calls = EndpointCalls(url, policy=RetryPolicy.of(settings or ClientSettings()))
        self.model = model or self._served_model()
        self.name = f"{self.calls.shown} {self.model or ''}".strip()
        self.structured = True  # send VERDICT_FORMAT until the endpoint refuses it

    def _served_model(self) -> str | None:
        try:
            listed = self.calls.get("/v1/models")
        except CallFailed:
            return None
        data = listed.get("data") if isinstance(listed, dict) else None
        return str(data[0].get("id")) if isinstance(data, list) and data and isinstance(data[0], dict) else None

    def verdict(self, record: SampleRecord) -> JudgeVerdict:
        sample, score = record.sample, record.score
        assert score is not None and record.response is not None
        payload: dict[str, Any] = {
            "messages": judge_messages(sample, record.response.text),
            "temperature": 0,
            "max_tokens": REPLY_TOKENS,
        }
        if self.model:
            payload["model"] = self.model
        base = {"sample_id": sample.sample_id, "judge": self.name, "exact": score.correct}
        try:
            status, body = self._send(payload)
        except CallFailed as failed:
            return JudgeVerdict(**base, error=f"unreachable: {failed}")
        if status != 200 or not isinstance(body, dict):
            return JudgeVerdict(**base, error=f"HTTP {status}: {shown_body(body, 200)}")
        reply = _content(body)
        reading = read_reply(reply)
        return JudgeVerdict(
            **base, verdict=reading.verdict, reason=reading.reason, error=reading.error, reply=reply[:2000]
        )

    def _send(self, payload: dict[str, Any]) -> tuple[int, Any]:
        """Ask with the verdict's JSON schema as `response_format` (vLLM, SGLang and llama-server then
        decode only a verdict object, which a small judge otherwise seldom writes); an endpoint that refuses
        the field (HTTP 400) is asked without it from then on."""
        if self.structured:
            status, body = self.calls.send(
                "POST", "/v1/chat/completions", {**payload, "response_format": VERDICT_FORMAT}
            )
            if status != 400:
                return status, body
            self.structured = False
        return self.calls.send("POST", "/v1/chat/completions", payload)


def _content(body: dict[str, Any]) -> str:
    try:
        return str(body["choices"][0]["message"].get("content") or "")
    except (KeyError, IndexError, TypeError, AttributeError):
        return ""


def judge_run(
    run_dir: Path,
    records: Iterable[SampleRecord],
    url: str,
    model: str | None = None,
    settings: ClientSettings | None = None,
) -> JudgeSummary:
    """Judge the run's samples not judged yet (each call under the run's client `settings`: its
    `--timeout` and `--retries`); the summary counts every verdict the run now holds."""
    todo = to_judge(records, set(read_verdicts(run_dir)))
    if todo:
        judge = Judge(url, model, settings)
        with ThreadPoolExecutor(JUDGE_CONCURRENCY) as pool:
            for verdict in pool.map(judge.verdict, todo):
                append_verdict(run_dir, verdict)
    held = read_verdicts(run_dir).values()
    return JudgeSummary(
        judged=sum(1 for v in held if v.verdict is not None),
        disagree=sum(1 for v in held if v.disagrees()),
        errors=sum(1 for v in held if v.error is not None),
    )
