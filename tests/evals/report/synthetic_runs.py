"""Run, limit and compare folders written by hand for the report tests: the nightly suite's grid with
made-up outcomes (accuracy falling with length and depth), no engine involved."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

from ctxprobe.evals.run.manifest import RunManifest
from ctxprobe.evals.run.record import ErrorKind, Response, SampleRecord, Score
from ctxprobe.evals.run.store import RunStore
from ctxprobe.tasks.sample import Expected, NeedleSpot, Recipe, Sample
from ctxprobe.tasks.suite import Suite, load_suite

INJECTED = "<script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\">"
HAYSTACK_INJECTED = "<script>document.title='haystack'</script>"


def _sample(recipe: Recipe) -> Sample:
    answer = f"{random.Random(recipe.sample_id()).randrange(10**6, 10**7)}"
    offset = int(recipe.context_tokens * 4 * recipe.depth / 100)
    needle = NeedleSpot(role="target", text=f" The magic number is: {answer}.", answer=answer, char_offset=offset,
                        token_offset=offset // 4, depth_pct=recipe.depth)
    return Sample(sample_id=recipe.sample_id(), recipe=recipe, prompt_sha256="0" * 64,
                  planned_tokens=recipe.context_tokens, approximate=True,
                  question=f"What is the magic number {INJECTED}?", answer_prefix="", max_tokens=32,
                  expected=Expected(kind="value", answers=[answer]), needles=[needle])


def _record(recipe: Recipe, rng: random.Random, p_correct: float, inject: bool) -> SampleRecord:
    sample = _sample(recipe)
    ctx = recipe.context_tokens
    if rng.random() < 0.02 * (ctx / 2**20):
        kind = ErrorKind.rejected_too_long if ctx >= 2**19 else ErrorKind.timeout
        return SampleRecord(sample=sample, error=kind, error_detail=f"HTTP 400 from endpoint: {INJECTED}")
    correct = rng.random() < p_correct
    answer = sample.expected.answers[0] if correct else str(rng.randrange(10**6, 10**7))
    text = INJECTED if inject else f" The magic number is {answer}."
    latency = 0.5 + ctx / 40_000 * (1 + rng.random() * 0.3)
    response = Response(endpoint="http://127.0.0.1:8000", text=text, prompt_tokens=ctx, completion_tokens=12,
                        cached_tokens=rng.choice([0, ctx // 2]), latency_s=latency, ttft_s=latency * 0.9)
    score = Score(extracted=[] if inject else [answer], correct=correct, partial=float(correct))
    return SampleRecord(sample=sample, response=response, score=score, finished_at=time.time())


def write_run(folder: Path, suite: Suite | None = None, *, label: str = "q4km", seed: int = 0,
              drop: float = 0.0) -> Path:
    """A finished run folder of `suite` (default: nightly, 7 tasks x 6 lengths x 11 depths x 4 samples);
    accuracy falls with length (and by `drop` more), and the first wrong answer is an injected <script>."""
    suite = suite or load_suite("nightly")
    rng = random.Random(seed)
    recipes = suite.recipes(lambda mode: "estimate:4", default_mode="chat")
    longest = max(r.context_tokens for r in recipes)
    store = RunStore(folder)
    manifest = RunManifest(label=label, model="gemma-3-270m-it", engine={"engine": "llama.cpp", "version": "b6000",
                                                                        "context_length": 1_048_576},
                           mode="chat", suite=suite, tokenizer="estimate:4", token_counter="estimate",
                           options={"model_file": "/models/gemma-3-270m-Q4_K_M.gguf", "kv_cache_type": "q8_0",
                                    "endpoints": []},
                           created=time.time() - 3725, status="finished", samples_planned=len(recipes))
    store.write_manifest(manifest)
    injected = False
    records = []
    for recipe in recipes:
        p = max(0.05, 1.0 - 0.6 * recipe.context_tokens / longest - drop - 0.1 * (recipe.depth == 50.0))
        inject = not injected and recipe.context_tokens == longest
        record = _record(recipe, rng, 0.0 if inject else p, inject)
        injected |= inject and record.error is None
        records.append(record)
        store.append(record)
    store.close()
    manifest.samples_done = sum(r.error is None for r in records)
    manifest.samples_errored = len(records) - manifest.samples_done
    store.write_manifest(manifest)
    return folder


def small_suite() -> Suite:
    """Two tasks, three lengths, three depths, two samples: quick to build, real prompts (estimate counter)."""
    return Suite.model_validate({"name": "small", "seed": 0, "samples": 2, "haystack": "prose", "mode": "chat",
                                 "lengths": [1024, 2048, 4096], "depths": [0, 50, 100],
                                 "tasks": [{"family": "niah", "params": {"variant": "single"}},
                                           {"family": "recall", "params": {"kind": "uuid"}}]})


def write_limit(folder: Path) -> Path:
    """A limit folder: manifest and limit.json of one endpoint whose accuracy drops past 16K."""
    folder.mkdir(parents=True)
    manifest = RunManifest(command="limit", label="lim", model="m", engine={"engine": "vllm"}, status="finished",
                           suite=Suite.model_validate({"name": "limit", "lengths": [4096], "depths": [50.0],
                                                       "tasks": [{"family": "niah"}]}))
    RunStore(folder).write_manifest(manifest)
    lengths = [dict(length=n, successes=s, n=10, requests=10, accuracy=s / 10, lo=max(0, s / 10 - 0.25),
                    hi=min(1, s / 10 + 0.1), verdict="pass" if s >= 9 else "fail", settled=True)
               for n, s in ((4096, 10), (8192, 10), (16384, 9), (32768, 3), (23296, 6))]
    target = {"endpoint": "http://gpu:8000", "engine": {"engine": "vllm", "version": "0.9.1"},
              "advertised": {"tokens": 131072, "source": "config.json max_position_embeddings"},
              "configured": 32768, "configured_source": "GET /v1/models max_model_len",
              "accepted": {"accepted_tokens": 32512, "basis": "the limit the rejection stated", "largest_taken": 32512,
                           "rejected_tokens": 40000, "max_tokens": 256, "stated_limit": 32768, "stopped_by_error": None,
                           "requests": 2, "probes": [{"planned_tokens": 32512, "outcome": "accepted",
                                                      "prompt_tokens": 32512, "stated_limit": None, "detail": ""}]},
              "effective": {"effective": 16384, "bracket": [16384, 23296], "first_failing": 23296, "threshold": 0.856,
                            "criterion": "absolute", "confidence": 0.95, "lengths": lengths, "requests": 50,
                            "full_grid_lengths": 10, "full_grid_requests": 500,
                            "verdict": "effective ≥ 16,384 (95%); drops below 0.856 between 16,384 and 23,296"},
              "tasks": [{"family": "niah", "params": {}}]}
    (folder / "limit.json").write_text(json.dumps({"targets": [target]}), encoding="utf-8")
    return folder
