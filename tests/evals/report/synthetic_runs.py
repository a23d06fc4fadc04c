"""Run, limit and compare folders written by hand for the report tests: the nightly suite's grid with
made-up outcomes (accuracy falling with length and depth), no engine involved."""

from __future__ import annotations

import itertools
import json
import random
import time
from pathlib import Path

from ctxprobe.evals.records.manifest import RunManifest
from ctxprobe.evals.records.record import ErrorKind, Response, SampleRecord, Score
from ctxprobe.evals.records.store import RunStore
from ctxprobe.tasks.sample import Expected, NeedleSpot, Recipe, Sample
from ctxprobe.tasks.suite import Suite, load_suite
from tests.unsynced import unsynced

INJECTED = "<script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\">"
HAYSTACK_INJECTED = "<script>document.title='haystack'</script>"


def _sample(recipe: Recipe) -> Sample:
    answer = f"{random.Random(recipe.sample_id()).randrange(10**6, 10**7)}"
    offset = int(recipe.context_tokens * 4 * recipe.depth / 100)
    needle = NeedleSpot(
        role="target",
        text=f" The magic number is: {answer}.",
        answer=answer,
        char_offset=offset,
        token_offset=offset // 4,
        depth_pct=recipe.depth,
    )
    return Sample(
        sample_id=recipe.sample_id(),
        recipe=recipe,
        prompt_sha256="0" * 64,
        planned_tokens=recipe.context_tokens,
        approximate=True,
        question=f"What is the magic number {INJECTED}?",
        answer_prefix="",
        max_tokens=32,
        expected=Expected(kind="value", answers=[answer]),
        needles=[needle],
    )


def _record(recipe: Recipe, rng: random.Random, p_correct: float, inject: bool, built: bool) -> SampleRecord:
    if built:
        from ctxprobe.tasks.build import build_sample

        sample = build_sample(recipe)
    else:
        sample = _sample(recipe)
    ctx = recipe.context_tokens
    if rng.random() < 0.02 * (ctx / 2**20):
        kind = ErrorKind.rejected_too_long if ctx >= 2**19 else ErrorKind.timeout
        return SampleRecord(sample=sample, error=kind, error_detail=f"HTTP 400 from endpoint: {INJECTED}")
    correct = rng.random() < p_correct
    answer = sample.expected.answers[0] if correct else str(rng.randrange(10**6, 10**7))
    text = INJECTED if inject else f" The magic number is {answer}."
    latency = 0.5 + ctx / 40_000 * (1 + rng.random() * 0.3)
    response = Response(
        endpoint="http://127.0.0.1:8000",
        text=text,
        prompt_tokens=ctx,
        completion_tokens=12,
        cached_tokens=rng.choice([0, ctx // 2]),
        latency_s=latency,
        ttft_s=latency * 0.9,
    )
    score = Score(extracted=[] if inject else [answer], correct=correct, partial=float(correct))
    return SampleRecord(sample=sample, response=response, score=score, finished_at=time.time())


def write_run(
    folder: Path,
    suite: Suite | None = None,
    *,
    label: str = "q4km",
    seed: int = 0,
    drop: float = 0.0,
    built: bool = False,
) -> Path:
    """A finished run folder of `suite` (default: nightly, 7 tasks x 6 lengths x 11 depths x 8 samples);
    accuracy falls with length (and by `drop` more), and the first task answers every prompt of the longest
    length with an injected <script> (wrong, so among the failure examples whichever is chosen). `built`:
    real samples (built with the estimate counter, so the report rebuilds them byte for byte); otherwise
    stand-ins with a made-up needle."""
    suite = suite or load_suite("nightly")
    rng = random.Random(seed)
    recipes = suite.recipes(lambda mode: "estimate:4", default_mode="chat")
    longest = max(r.context_tokens for r in recipes)
    store = RunStore(folder)
    manifest = RunManifest(
        label=label,
        model="gemma-3-270m-it",
        engine={"engine": "llama.cpp", "version": "b6000", "context_length": 1_048_576},
        mode="chat",
        suite=suite,
        tokenizer="estimate:4",
        token_counter="estimate",
        options={"model_file": "/models/gemma-3-270m-Q4_K_M.gguf", "kv_cache_type": "q8_0", "endpoints": []},
        created=time.time() - 3725,
        status="finished",
        samples_planned=len(recipes),
    )
    store.write_manifest(manifest)
    first = (recipes[0].family, recipes[0].params)
    records = []
    with unsynced():  # a fixture: no fsync per record (tests/unsynced.py)
        for recipe in recipes:
            p = max(0.05, 1.0 - 0.6 * recipe.context_tokens / longest - drop - 0.1 * (recipe.depth == 50.0))
            inject = (recipe.family, recipe.params) == first and recipe.context_tokens == longest
            record = _record(recipe, rng, 0.0 if inject else p, inject, built)
            records.append(record)
            store.append(record)
    store.close()
    manifest.samples_done = sum(r.error is None for r in records)
    manifest.samples_errored = len(records) - manifest.samples_done
    store.write_manifest(manifest)
    return folder


def small_suite(haystack: str = "prose") -> Suite:
    """Two tasks, three lengths, three depths, two samples: quick to build with the estimate counter."""
    return Suite.model_validate(
        {
            "name": "small",
            "seed": 0,
            "samples": 2,
            "haystack": haystack,
            "mode": "chat",
            "lengths": [1024, 2048, 4096],
            "depths": [0, 50, 100],
            "tasks": [
                {"family": "niah", "params": {"variant": "single"}},
                {"family": "recall", "params": {"kind": "uuid"}},
            ],
        }
    )


def write_limit(folder: Path) -> Path:
    """A limit folder: manifest and limit.json of one endpoint whose accuracy drops past 16K."""
    folder.mkdir(parents=True)
    manifest = RunManifest(
        command="limit",
        label="lim",
        model="m",
        engine={"engine": "vllm"},
        status="finished",
        suite=Suite.model_validate(
            {"name": "limit", "lengths": [4096], "depths": [50.0], "tasks": [{"family": "niah"}]}
        ),
    )
    RunStore(folder).write_manifest(manifest)
    lengths = [
        dict(
            length=n,
            successes=s,
            n=10,
            requests=10,
            accuracy=s / 10,
            lo=max(0, s / 10 - 0.25),
            hi=min(1, s / 10 + 0.1),
            verdict="pass" if s >= 9 else "fail",
            settled=True,
        )
        for n, s in ((4096, 10), (8192, 10), (16384, 9), (32768, 3), (23296, 6))
    ]
    target = {
        "endpoint": "http://gpu:8000",
        "engine": {"engine": "vllm", "version": "0.9.1"},
        "advertised": {"tokens": 131072, "source": "config.json max_position_embeddings"},
        "configured": 32768,
        "configured_source": "GET /v1/models max_model_len",
        "accepted": {
            "accepted_tokens": 32512,
            "basis": "the limit the rejection stated",
            "largest_taken": 32512,
            "rejected_tokens": 40000,
            "max_tokens": 256,
            "stated_limit": 32768,
            "stopped_by_error": None,
            "requests": 2,
            "probes": [
                {
                    "planned_tokens": 32512,
                    "outcome": "accepted",
                    "prompt_tokens": 32512,
                    "stated_limit": None,
                    "detail": "",
                }
            ],
        },
        "effective": {
            "effective": 16384,
            "bracket": [16384, 23296],
            "first_failing": 23296,
            "threshold": 0.856,
            "criterion": "absolute",
            "confidence": 0.95,
            "lengths": lengths,
            "requests": 50,
            "full_grid_lengths": 10,
            "full_grid_requests": 500,
            "verdict": "effective ≥ 16,384 (95%); drops below 0.856 between 16,384 and 23,296",
        },
        "tasks": [{"family": "niah", "params": {}}],
    }
    (folder / "limit.json").write_text(json.dumps({"targets": [target]}), encoding="utf-8")
    return folder


def _compare_row(
    candidate: str, level: str, length: int, depth: float | None, diff: float, p: float, holm: float | None
) -> dict[str, object]:
    return {
        "candidate": candidate,
        "level": level,
        "family": "niah",
        "variant": "variant=single",
        "haystack": "prose",
        "context_tokens": length,
        "depth": depth,
        "n": 20,
        "base_correct": 18,
        "cand_correct": int(18 + 20 * diff),
        "base_accuracy": 0.9,
        "cand_accuracy": 0.9 + diff,
        "diff": diff,
        "diff_lo": diff - 0.1,
        "diff_hi": diff + 0.1,
        "base_only": 8,
        "cand_only": 0,
        "p_value": p,
        "p_holm": holm,
        "significant": holm is not None and holm < 0.05,
        "partial_base": 0.9,
        "partial_cand": 0.9 + diff,
        "partial_diff": diff,
        "partial_lo": diff - 0.1,
        "partial_hi": diff + 0.1,
    }


def write_compare(folder: Path, base: Path, cand: Path) -> Path:
    """A compare folder in the shape `ctxprobe compare` writes (compare.json and a diff heatmap PNG):
    the candidate drops 40 points at 1m; one example points at the candidate's injected answer."""
    from ctxprobe.evals.records.load import load_run

    folder.mkdir(parents=True)
    cand_run = load_run(cand)
    wrong = next(r for r in cand_run.records if r.response and r.response.text == INJECTED)
    inputs = [
        {
            "path": str(p),
            "label": lab,
            "suite": "nightly",
            "status": "finished",
            "created": 0.0,
            "tokenizer": "estimate:4",
            "token_counter": "estimate",
            "model": "m",
            "engine": {"engine": "vllm"},
            "samples": 10,
        }
        for p, lab in ((base, "fp16"), (cand, "q4km"))
    ]
    rows = [
        _compare_row("q4km", "family_length", 32768, None, 0.0, 1.0, 1.0),
        _compare_row("q4km", "family_length", 1048576, None, -0.4, 0.0039, 0.0078),
        *[
            _compare_row("q4km", "cell", n, d, -0.4 if n > 32768 else 0.0, 0.03, None)
            for n in (32768, 1048576)
            for d in (0.0, 50.0, 100.0)
        ],
    ]
    data = {
        "baseline": inputs[0],
        "candidates": [inputs[1]],
        "alpha": 0.05,
        "fail_if_drop": 0.05,
        "interval_method": "Newcombe paired (Wilson score)",
        "p_method": "exact McNemar; Holm",
        "partial_method": "paired bootstrap",
        "rows": rows,
        "failed": [rows[1]],
        "warnings": [],
        "pairings": [
            {
                "candidate": "q4km",
                "pairs": 40,
                "by_prompt": 40,
                "by_task": 0,
                "errored_base": {},
                "errored_cand": {"timeout": 1},
                "unpaired_base": 0,
                "unpaired_cand": 0,
            }
        ],
        "examples": [
            {
                "candidate": "q4km",
                "where": "niah variant=single [prose] 1m",
                "worse": "candidate",
                "sample_id": wrong.sample.sample_id,
                "expected": list(wrong.sample.expected.answers),
                "base_extracted": list(wrong.sample.expected.answers),
                "cand_extracted": [],
                "needle_depth": 50.0,
            }
        ],
    }
    (folder / "compare.json").write_text(json.dumps(data), encoding="utf-8")
    _tiny_png(folder / "diff_heatmap_q4km_niah.png")
    return folder


def write_history(folder: Path, runs: list[Path]) -> Path:
    """A history folder in the shape `ctxprobe history` writes: the last night drops 30 points at 1m."""
    folder.mkdir(parents=True)
    names = [
        {
            "path": str(p),
            "label": f"night{i}",
            "suite": "nightly",
            "status": "finished",
            "created": 1e9 + i * 86400,
            "tokenizer": "estimate:4",
            "token_counter": "estimate",
            "samples": 10,
        }
        for i, p in enumerate(runs)
    ]
    points = [
        {
            "run": str(p),
            "label": f"night{i}",
            "created": 1e9 + i * 86400,
            "family": "niah",
            "variant": "variant=single",
            "haystack": "prose",
            "context_tokens": n,
            "n": 40,
            "correct": 36 if not (i == len(runs) - 1 and n > 32768) else 24,
            "accuracy": 0.9 if not (i == len(runs) - 1 and n > 32768) else 0.6,
            "ci_lo": 0.5,
            "ci_hi": 0.95,
            "errors": 1 if n > 32768 else 0,
        }
        for i, p in enumerate(runs)
        for n in (32768, 1048576)
    ]
    drop = _compare_row(f"night{len(runs) - 1}", "family_length", 1048576, None, -0.3, 0.001, 0.002)
    steps = [
        {
            "previous": str(a),
            "current": str(b),
            "pairs": 40,
            "rows": [],
            "note": None,
            "drops": [drop] if b == runs[-1] else [],
        }
        for a, b in itertools.pairwise(runs)
    ]
    data = {"suite": "nightly", "alpha": 0.05, "runs": names, "points": points, "steps": steps, "skipped": []}
    (folder / "history.json").write_text(json.dumps(data), encoding="utf-8")
    _tiny_png(folder / "trend.png")
    return folder


def _tiny_png(path: Path) -> None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(2, 1))
    fig.subplots().plot([0, 1], [1, 0])
    fig.savefig(path, dpi=50)
