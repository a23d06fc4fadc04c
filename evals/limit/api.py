"""`ctxprobe.limit(...)`: the advertised, configured, accepted and effective context lengths of one or
more endpoints (each `endpoints` entry is measured on its own; none: the embedded engine)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxprobe.evals.limit.advertised import advertised_length
from ctxprobe.evals.limit.options import LimitOptions
from ctxprobe.evals.limit.search import LimitConfig, SearchSettings, full_grid
from ctxprobe.evals.limit.target import accepted_length, effective_length, shortest_length
from ctxprobe.evals.records.limit import LIMIT_JSON, Advertised, LimitOutput, TargetLimits, TaskSpec
from ctxprobe.evals.records.manifest import RunManifest, ctxprobe_version, public_url, saved_options
from ctxprobe.evals.records.outputs import write_output
from ctxprobe.evals.records.store import RunStore, run_folder
from ctxprobe.evals.run.send.inline_suite import parse_params
from ctxprobe.evals.run.send.interrupt import sigterm_as_interrupt
from ctxprobe.evals.run.send.loop import Progress
from ctxprobe.evals.run.send.options import validated
from ctxprobe.evals.run.send.serving import serving
from ctxprobe.runners.launchers import launcher_for
from ctxprobe.tasks.build import builder_for
from ctxprobe.tasks.errors import UserError
from ctxprobe.tasks.family_index import include
from ctxprobe.tasks.lengths import parse_length
from ctxprobe.tasks.registry import get_family, validate_params
from ctxprobe.tasks.sample import Mode
from ctxprobe.tasks.suite import Suite
from ctxprobe.tasks.token_counter import TokenCounter


@dataclass(frozen=True)
class LimitReport:
    run_dir: Path
    targets: list[TargetLimits]


def parse_task(text: str) -> TaskSpec:
    family, _, params = text.partition(":")
    name = family.strip()
    full = validate_params(get_family(name), parse_params(params)).model_dump(mode="json")
    return TaskSpec(family=name, params=full)  # every parameter, defaults included


OnProgress = Callable[[int, Progress], None]  # (the length being judged, its batch's progress)


def embedded_context(opts: LimitOptions, max_length: int | None) -> LimitOptions:
    """The engine ctxprobe starts is started at the context its launcher chooses for a measure (the embedded
    llama.cpp engine: --max-length, else the model's trained context, the GGUF says it): never at a size of
    ctxprobe's own, which would be measured as the endpoint's limit."""
    if opts.endpoints:
        return opts
    return opts.model_copy(update={"launcher": launcher_for(opts.engine).limit_settings(opts.launcher, max_length)})


def started_context(opts: LimitOptions) -> int | None:
    """The context the engine ctxprobe starts is started with, where known before it starts."""
    if opts.endpoints:
        return None
    return launcher_for(opts.engine).start_context(opts.launcher)


def limit(
    options: LimitOptions | None = None, *, on_progress: OnProgress | None = None, **kwargs: object
) -> LimitReport:
    """Measure the four lengths; writes `limit.json` (and the effective search's samples) into a run folder.
    SIGTERM stops it as Ctrl-C does (KeyboardInterrupt), the folder's manifest then says `interrupted`."""
    opts = options if options is not None else validated(LimitOptions, dict(kwargs))
    for path in opts.include:  # families of one's own, for --task
        include(path)
    tasks = [parse_task(t) for t in opts.tasks]
    advertised = advertised_length(opts.advertised, opts.config)
    min_length = parse_length(opts.min_length)
    max_length = parse_length(opts.max_length) if opts.max_length else None
    if max_length is not None and max_length < min_length:
        raise UserError(f"--max-length {opts.max_length} is below --min-length {opts.min_length}")
    if max_length is not None:
        room_for_prompt(opts.answer_room, max_length, f"--max-length {opts.max_length}", min_length)
    search_args = opts.model_dump(include=set(SearchSettings.model_fields))  # checked by the options already
    opts = embedded_context(opts, max_length)
    started = started_context(opts)
    if started:  # the engine ctxprobe starts: its context is known before it starts
        room_for_prompt(opts.answer_room, started, "the context the engine is started with", min_length)
    store = RunStore(run_folder(Path(opts.results_dir), f"limit-{opts.label}" if opts.label else "limit"))
    suite = Suite.model_validate(
        {
            "name": "limit",
            "lengths": [min_length],
            "depths": [50.0],
            "tasks": [t.model_dump() for t in tasks],
            "haystack": opts.haystack,
        }
    )
    suite.check()
    results: list[TargetLimits] = []
    try:
        with sigterm_as_interrupt():
            _measure(opts, suite, store, tasks, advertised, min_length, max_length, search_args, results, on_progress)
    except BaseException as stop:
        store.close()
        if store.dir.joinpath("manifest.json").exists():
            manifest = store.load_manifest()
            manifest.status = "interrupted" if isinstance(stop, KeyboardInterrupt) else "failed"
            store.write_manifest(manifest)
        raise
    store.close()
    if not results:
        raise UserError("no endpoint was measured")
    write_output(store.dir / LIMIT_JSON, LimitOutput(targets=results))
    manifest = store.load_manifest()
    manifest.status = "finished"
    store.write_manifest(manifest)
    return LimitReport(run_dir=store.dir, targets=results)


def _measure(
    opts: LimitOptions,
    suite: Suite,
    store: RunStore,
    tasks: list[TaskSpec],
    advertised: Advertised,
    min_length: int,
    max_length: int | None,
    search_args: dict[str, object],
    results: list[TargetLimits],
    on_progress: OnProgress | None,
) -> None:
    """Each target in turn (each endpoint; none: the engine ctxprobe starts), appended to `results`."""
    for urls in [[u] for u in opts.endpoints] or [[]]:  # each endpoint is its own target here
        with serving(opts.model_copy(update={"endpoints": urls}), suite) as served:
            config, engine, counter = served.config, served.engine, served.counter
            if engine.context_length:  # before the run folder is made (the first target's manifest makes it)
                room_for_prompt(
                    opts.answer_room,
                    engine.context_length,
                    f"the served context of {public_url(config.base_urls[0])}",
                    min_length,
                )
            if not results:
                store.write_manifest(
                    RunManifest(
                        command="limit",
                        ctxprobe_version=ctxprobe_version(),
                        label=opts.label,
                        endpoints=[public_url(u) for u in opts.endpoints],
                        model=served.model,
                        engine=engine,
                        mode=served.mode,
                        suite=suite,
                        tokenizer=builder_for(counter).tokenizer,
                        token_counter=served.counter_spec,
                        api_key_env=opts.api_key_env,
                        options=saved_options(opts.flat()),
                    )
                )
            configured = engine.context_length
            known = max(configured or 0, advertised.tokens or 0)
            ceiling = max_length or (known + known // 4 if known else 2 * 1024 * 1024)  # room to see a rejection
            accepted = accepted_length(
                config,
                counter,
                start=min(min_length, ceiling),
                max_length=ceiling,
                configured=configured,
                answer_room=opts.answer_room,
            )
            effective = None
            where = public_url(config.base_urls[0])
            _say(
                f"{where}: configured {_n(configured)}; accepted {_n(accepted.accepted_tokens)} "
                f"({accepted.requests} requests)"
            )
            if not opts.skip_effective and (max_length or accepted.accepted_tokens):
                bounds = search_bounds(
                    counter, tasks, opts, served.mode, min_length, max_length, accepted.accepted_tokens, search_args
                )
                search, taken = bounds.config, bounds.context_length
                _say(
                    f"{where}: effective search from {search.min_length:,} to {search.max_length:,} tokens "
                    f"({bounds.why}), {len(tasks)} tasks, batches of {search.batch} up to {search.max_samples} "
                    f"samples per length (the full grid: {len(full_grid(search))} lengths, "
                    f"{len(full_grid(search)) * search.max_samples} samples)"
                )
                effective = effective_length(
                    config, counter, store, tasks, search, opts.haystack, on_progress=on_progress, context_length=taken
                )
            results.append(
                TargetLimits(
                    endpoint=where,
                    engine=engine,
                    advertised=advertised,
                    configured=configured,
                    configured_source=engine.context_source,
                    accepted=accepted,
                    effective=effective,
                    tasks=tasks,
                )
            )


@dataclass(frozen=True)
class SearchBounds:
    """The effective search's lengths: `config` (its top is the accepted length, never above it, its lower end
    the tasks' own shortest prompt), why the top is where it is, and the prompt and answer tokens the endpoint
    was found to take (a sample that does not fit is not sent)."""

    config: LimitConfig
    why: str
    context_length: int | None


def search_bounds(
    counter: TokenCounter,
    tasks: list[TaskSpec],
    opts: LimitOptions,
    mode: Mode,
    min_length: int,
    max_length: int | None,
    accepted: int | None,
    search_args: dict[str, Any],
) -> SearchBounds:
    """The lengths the effective search may measure. Its top: the accepted length (the longest prompt that left
    `--answer-room`), less what a task's own answer budget needs beyond that room, and `--max-length` where it
    is shorter; its lower end: `--min-length`, or the tasks' shortest prompt where that is longer, and the floor
    the search steps down to when the shortest length fails."""
    granularity = int(search_args.get("granularity", 256))
    top = min(n for n in (max_length, accepted) if n)
    shortest, budget = shortest_length(
        counter,
        tasks,
        opts.haystack,
        mode,
        up_to=top,
        samples=max(len(tasks), int(search_args["batch"])),
        granularity=granularity,
    )
    why = "--max-length" if max_length and (accepted is None or max_length < accepted) else "the accepted length"
    context_length = None
    if accepted is not None:
        context_length = accepted + opts.answer_room + 1  # that prompt and that room were taken
        if budget > opts.answer_room and accepted + opts.answer_room - budget < top:
            top = accepted + opts.answer_room - budget
            why = f"the accepted length, less the tasks' answer budget of {budget} beyond --answer-room"
    if shortest > top:
        raise UserError(f"the tasks' shortest prompt ({shortest:,} tokens) does not fit {why} ({top:,})")
    low = min(max(min_length, shortest), top)
    ceiling = "--max-length" if why == "--max-length" else "the accepted length"
    config = LimitConfig(min_length=low, max_length=top, floor=shortest, ceiling=ceiling, **search_args)
    return SearchBounds(config, why, context_length)


MIN_PROMPT_TOKENS = 1024  # the shortest probe prompt the answer room must leave room for (1k, as the tasks')


def room_for_prompt(answer_room: int, length: int, what: str, min_length: int) -> None:
    """Refuse an answer room that leaves less than a probe's prompt within `length`: `MIN_PROMPT_TOKENS`, or
    `--min-length` where the search is asked to start below it (checked before anything is written: a
    refused run leaves no folder)."""
    floor = min(MIN_PROMPT_TOKENS, min_length)
    if answer_room > length - floor:
        raise UserError(
            f"--answer-room {answer_room:,} leaves no room for a prompt within {what} ({length:,} tokens): "
            f"give at most {max(0, length - floor):,}"
        )


def _n(tokens: int | None) -> str:
    return f"{tokens:,}" if tokens else "?"


def _say(line: str) -> None:
    print(f"ctxprobe: {line}", file=sys.stderr, flush=True)
