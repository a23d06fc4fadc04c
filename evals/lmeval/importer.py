"""`ctxprobe.import_lm_eval(...)`: lm-eval sample logs become a ctxprobe run folder (manifest.json +
samples.jsonl), so `show`, `compare` and `report` work on them.

- ctxprobe's own exported tasks come back by sample id; the prompt lm-eval sent must hash to the
  sample's sha256 (a mismatch means the data or the prompt changed, and the import is refused).
- RULER docs (all 13 tasks) become samples of family `ruler` (see `ruler.py`), scored by ctxprobe's exact
  scorer, with RULER's substring score kept beside it.
Every answer is scored again here by ctxprobe; lm-eval's own metric values are only compared."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ctxprobe.evals.lmeval.logs import LoggedDoc, LogRun, log_run, read_log, sample_logs
from ctxprobe.evals.lmeval.ruler import SUBSTRING, is_ruler_doc, ruler_sample, ruler_substring
from ctxprobe.evals.lmeval.task_utils import doc_sample
from ctxprobe.evals.records.manifest import RunManifest, ctxprobe_version, public_url
from ctxprobe.evals.records.record import Response, SampleRecord
from ctxprobe.evals.records.store import RunStore, run_folder
from ctxprobe.evals.scoring.score import score_sample
from ctxprobe.runners.response import EngineInfo
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.identity import condition_key
from ctxprobe.tasks.sample import sha256_text
from ctxprobe.tasks.suite import Suite, SuiteTask


@dataclass
class Disagreement:
    sample_id: str
    output: str
    expected: list[str]
    exact: bool
    substring: float


@dataclass
class ImportResult:
    run_dir: Path
    manifest: RunManifest
    records: list[SampleRecord]
    logs: list[Path]
    ruler_docs: int = 0
    disagreements: list[Disagreement] = field(default_factory=list)  # RULER substring vs ctxprobe exact

    def ruler_accuracy(self) -> tuple[float, float] | None:
        """(ctxprobe exact, RULER substring) accuracy over the RULER docs, or None when there were none."""
        ruler = [r for r in self.records if SUBSTRING in r.reference_scores]
        if not ruler:
            return None
        exact = sum(bool(r.score and r.score.correct) for r in ruler) / len(ruler)
        return exact, sum(r.reference_scores[SUBSTRING] == 1.0 for r in ruler) / len(ruler)


def import_lm_eval(
    paths: Sequence[str | Path], *, results_dir: str | Path = "results", label: str = "lm-eval"
) -> ImportResult:
    """Read every sample log under `paths` and write one new run folder under `results_dir`."""
    logs = sample_logs(paths)
    records: dict[str, SampleRecord] = {}
    runs: list[LogRun] = []
    disagreements: list[Disagreement] = []
    for path in logs:
        run = log_run(path)
        runs.append(run)
        for logged in read_log(path):
            record = _record(logged, run)
            records[record.sample.sample_id] = record
            ref = record.reference_scores.get(SUBSTRING)
            if ref is not None and record.score is not None and (ref == 1.0) != record.score.correct:
                disagreements.append(
                    Disagreement(
                        record.sample.sample_id,
                        logged.output,
                        record.sample.expected.answers,
                        record.score.correct,
                        ref,
                    )
                )
    store = RunStore(run_folder(Path(results_dir), label))
    manifest = _manifest(list(records.values()), runs, logs, label)
    for record in records.values():
        store.append(record)
    store.close()
    store.write_manifest(manifest)
    ruler_docs = sum(SUBSTRING in r.reference_scores for r in records.values())
    return ImportResult(store.dir, manifest, list(records.values()), logs, ruler_docs, disagreements)


def _record(logged: LoggedDoc, run: LogRun) -> SampleRecord:
    chat, prompt = _sent_prompt(logged.sent)
    references: dict[str, float] = {}
    if "sample_json" in logged.doc:
        sample = doc_sample(logged.doc)
        if sha256_text(prompt) != sample.prompt_sha256 or sha256_text(sample.prompt) != sample.prompt_sha256:
            raise UserError(
                f"{logged.path}: doc {logged.doc_id} (sample {sample.sample_id}): the prompt lm-eval sent "
                f"(prompt_hash {logged.prompt_hash[:12]}) is not the exported prompt "
                f"(sha256 {sample.prompt_sha256[:12]}): the export's data or lm-eval's prompt changed"
            )
    elif is_ruler_doc(logged.doc):
        tokenizer = str(run.model_args.get("tokenizer") or "unknown")
        generator = f"lm-eval-{run.lm_eval_version or 'unknown'}"
        sample = ruler_sample(
            logged, prompt, mode="chat" if chat else "completions", tokenizer=f"ruler:{tokenizer}", generator=generator
        )
        logged_score = logged.metrics.get(str(logged.doc["max_length"]))
        references[SUBSTRING] = (
            float(logged_score)
            if isinstance(logged_score, (int, float)) and logged_score >= 0
            else ruler_substring(logged.output, sample.expected.answers)
        )
    else:
        raise UserError(f"{logged.path}: task {logged.task!r} is neither a ctxprobe export nor a RULER task")
    endpoint = public_url(str(run.model_args.get("base_url") or "lm-eval"))
    response = Response(endpoint=endpoint, text=logged.output, latency_s=None)  # lm-eval logs no timings
    return SampleRecord(
        sample=sample,
        response=response,
        score=score_sample(sample, logged.output),
        reference_scores=references,
        finished_at=time.time(),
    )


def _sent_prompt(sent: str) -> tuple[bool, str]:
    """(chat?, the prompt text): a chat model's `arg_0` is the JSON list of messages; the prompt is the
    last user message."""
    if sent.startswith("[{"):
        try:
            messages = json.loads(sent)
        except json.JSONDecodeError:
            return False, sent
        users = [m.get("content") for m in messages if isinstance(m, dict) and m.get("role") == "user"]
        if users and isinstance(users[-1], str):
            return True, users[-1]
    return False, sent


def _manifest(records: list[SampleRecord], runs: list[LogRun], logs: list[Path], label: str) -> RunManifest:
    recipes = [r.sample.recipe for r in records]
    conditions: dict[str, SuiteTask] = {}
    for recipe in recipes:
        conditions.setdefault(
            condition_key(recipe),
            SuiteTask(
                family=recipe.family,
                params=recipe.params,
                lengths=sorted(
                    {r.context_tokens for r in recipes if r.family == recipe.family and r.params == recipe.params}
                ),
            ),
        )
    models = sorted({str(r.model_args.get("model") or r.model) for r in runs if r.model_args.get("model") or r.model})
    endpoints = sorted({public_url(str(r.model_args["base_url"])) for r in runs if r.model_args.get("base_url")})
    suite = Suite(
        name="lm-eval",
        description="imported from lm-eval sample logs",
        lengths=sorted({r.context_tokens for r in recipes}),
        depths=sorted({r.depth for r in recipes}),
        tasks=list(conditions.values()),
    )
    return RunManifest(
        command="import-lm-eval",
        ctxprobe_version=ctxprobe_version(),
        status="finished",
        label=label,
        endpoints=endpoints,
        model=models[0] if models else None,
        engine=EngineInfo(engine="lm-eval", version=next((r.lm_eval_version for r in runs if r.lm_eval_version), None)),
        mode=",".join(sorted({r.mode for r in recipes})),
        suite=suite,
        tokenizer=",".join(sorted({r.tokenizer for r in recipes})),
        options={"logs": [str(p) for p in logs]},
        samples_planned=len(records),
        samples_done=len(records),
        samples_errored=0,
    )
